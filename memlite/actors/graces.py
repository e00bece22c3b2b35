"""The worker's stop budget, stated once: from its signal down to each child's shield.

On SIGTERM (or idle shutdown) the worker sets ``shutdown`` and the root supervisor stops
its children one after the other, in reverse start order; each gets its grace (its
``ChildSpec.shutdown``) and is cancelled when it runs out. The graces therefore add up:
the worst case is every child using all of its grace, one after the other, and that sum
is what the worker allows the root (``ROOT_STOP``) before it cancels it. Then the
reader pool is closed and the process exits (``EXIT_MARGIN``). So::

    signal --+-- http        HTTP_GRACE       0.75  Hypercorn gives open requests
             |                                      GRACEFUL_TIMEOUT (0.5); SSE streams end
             |                                      at once on ``shutdown``
             +-- spool       SPOOL_GRACE      0.25  a drain in progress finishes its file
             +-- optional    OPTIONAL_GRACE   0.5   reaper, pruner, embedder, idle, heap:
             |                                      0.08 each, one after the other, + 0.1
             +-- sessions    SESSIONS_GRACE   2.1   AI summaries in progress get
             |                                      SHUTDOWN_SUMMARY_WAIT_SECONDS (1.5,
             |                                      counted from the signal), then each
             |                                      session actor SESSION_STOP_GRACE (0.3)
             |                                      for its rules summary and store, then
             |                                      AI_CLOSE_SECONDS (0.25) to close its CLI
             +-- bus         BUS_GRACE        0.1
             +-- snapshots   SNAPSHOTS_GRACE  0.3   its last round (cut: the previous file
             |                                      stays)
             +-- storage     STORAGE_GRACE    0.4   + STORAGE_OVERRUN (0.1): a batch in
                                                    progress is shielded, until then
           = ROOT_STOP 4.5 s; + EXIT_MARGIN 0.5 = STOP_BOUND 5.0 s from signal to exit

``tests/actors/test_graces.py`` checks that these add up and that the tree uses them; the
worst case is measured by ``chaos/test_worst_stop.py`` (BENCHMARKS.md).
"""

from __future__ import annotations

__all__ = [
    "AI_CLOSE_SECONDS",
    "BUS_GRACE",
    "EXIT_MARGIN",
    "GRACEFUL_TIMEOUT",
    "HTTP_GRACE",
    "OPTIONAL_CHILD_GRACE",
    "OPTIONAL_GRACE",
    "ROOT_STOP",
    "SESSIONS_GRACE",
    "SESSION_STOP_GRACE",
    "SHUTDOWN_SUMMARY_WAIT_SECONDS",
    "SNAPSHOTS_GRACE",
    "SPOOL_GRACE",
    "STOP_BOUND",
    "STORAGE_GRACE",
    "STORAGE_OVERRUN",
    "root_graces",
]

STOP_BOUND = 5.0
"""The promise: a worker exits within this many seconds of its first SIGTERM."""
EXIT_MARGIN = 0.5
"""After the root: closing the reader pool, removing the pid file, interpreter exit."""

GRACEFUL_TIMEOUT = 0.5
"""Seconds Hypercorn gives open requests after ``shutdown`` before closing them."""
HTTP_GRACE = GRACEFUL_TIMEOUT + 0.25
SPOOL_GRACE = 0.25
OPTIONAL_CHILD_GRACE = 0.08
OPTIONAL_GRACE = 5 * OPTIONAL_CHILD_GRACE + 0.1
SHUTDOWN_SUMMARY_WAIT_SECONDS = 1.5
"""When the worker stops, a summary in progress gets this long (from the signal)."""
SESSION_STOP_GRACE = 0.3
"""A stopping session actor's grace after its summary wait (rules summary, store)."""
AI_CLOSE_SECONDS = 0.25
"""The shield around closing a session's AI once its actor was cancelled (SIGKILL then)."""
SESSIONS_GRACE = SHUTDOWN_SUMMARY_WAIT_SECONDS + SESSION_STOP_GRACE + AI_CLOSE_SECONDS + 0.05
BUS_GRACE = 0.1
SNAPSHOTS_GRACE = 0.3
STORAGE_GRACE = 0.4
STORAGE_OVERRUN = 0.1
"""A storage batch in progress at the end of the grace is shielded this much longer."""


def root_graces() -> dict[str, float]:
    """Each root child's worst-case stop time, in stop order (the table above)."""
    return {"http": HTTP_GRACE, "spool": SPOOL_GRACE, "optional": OPTIONAL_GRACE,
            "sessions": SESSIONS_GRACE, "bus": BUS_GRACE, "snapshots": SNAPSHOTS_GRACE,
            "storage": STORAGE_GRACE + STORAGE_OVERRUN}


ROOT_STOP = round(sum(root_graces().values()), 6)
"""What the worker gives the root after the signal before it cancels it."""
