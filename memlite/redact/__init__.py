"""The redactor's parts (documented in ``memlite.privacy``, the module callers import).

STANDARD LIBRARY ONLY: the hook imports it.

* ``tags``: :func:`strip_tags`;
* ``engine``: a rule (pattern + trigger words) and how it runs in linear time;
* ``judge``: placeholder, masked, path, public, random-looking values;
* ``rules``: the rules, in order, and :func:`redact`;
* ``fields``: :func:`clean` over a JSON value.
"""

from __future__ import annotations

from memlite.redact.fields import clean
from memlite.redact.rules import RULES, redact
from memlite.redact.tags import TAG_NAMES, strip_tags

__all__ = ["RULES", "TAG_NAMES", "clean", "redact", "strip_tags"]
