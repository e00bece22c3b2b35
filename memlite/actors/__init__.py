"""The actor runtime and memlite's actors; see :mod:`memlite.actors.core` for the model.

The public names are ``memlite.actors.core.__all__``: one list, re-exported here.
"""

from memlite.actors.core import *  # noqa: F403 - the runtime's public names
from memlite.actors.core import __all__ as __all__
