"""Where the tests read /proc from: ``$TEST_REAL_PROC``, else ``/proc``.

In the no-/proc run (``.ci/noproc``) memlite sees an empty ``/proc`` (the stand-in for
macOS), while the real one stays bind-mounted elsewhere for the tests' own census of
leaked processes, so that census keeps its teeth.
"""

import os

PROC = os.environ.get("TEST_REAL_PROC", "/proc")
