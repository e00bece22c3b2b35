"""Hypercorn's keep-alive timer restarted without waiting for its task to start.

Why: under Hypercorn 0.18's Trio worker, a kept-alive connection stops its idle timer
when a request arrives and starts a new one after each response
(``TrioSingleTask.restart``, from ``TCPServer.protocol_send`` on ``Updated(idle=True)``).
``restart`` starts the timer's task with ``nursery.start`` and waits until that task has
run and reported itself started: a new task, a scheduler pass for it and one more for the
caller, after every response, on the request's own task. Measured in a loop (restart, stop,
one pass; ``PromptLock`` in both), 76-84 against 46-64 us of CPU an iteration with the
task started as below.

What: ``install()`` makes ``restart`` cancel the previous timer, make the new timer's
``trio.CancelScope`` itself, keep it as the handle (as ``restart`` kept the scope its task
reported) and start the task with ``nursery.start_soon``: the timer runs from the next
scheduler pass, inside that scope; a ``stop()`` before it ran cancels the scope and the
task ends at once. What the timer does (``TCPServer._idle_timeout``: wait
``keep_alive_timeout``, then close the connection) is unchanged, and so is the lock
around it (a ``PromptLock``, see ``locks.py``). No byte of any response changes.

Compatibility: it wraps ``hypercorn.trio.worker_context.TrioSingleTask.restart`` (a class
of the pinned Hypercorn, see ``constraints.txt``), only under the Hypercorn minor version
it was written against (``locks.HYPERCORN``; any other: nothing is installed), and takes
this way only when the task
group has the Trio nursery Hypercorn's own ``TaskGroup`` keeps (``_nursery``) and the
timer object its ``_lock`` and ``_handle``; otherwise, or if the class or method is
missing, Hypercorn's own ``restart`` runs. Idempotent.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import trio

from memlite.http.locks import hypercorn_supported

__all__ = ["install", "installed"]

_MARK = "_memlite_idle_timer"


def _timer_class() -> Any:
    """Hypercorn's keep-alive timer class, or None."""
    try:
        from hypercorn.trio.worker_context import TrioSingleTask
    except ImportError:
        return None
    return TrioSingleTask


def installed() -> bool:
    """Whether Hypercorn's keep-alive timer restarts without waiting for its task."""
    cls = _timer_class()
    return cls is not None and getattr(getattr(cls, "restart", None), _MARK, False)


async def _within(scope: trio.CancelScope, action: Callable[[], Awaitable[None]]) -> None:
    with scope:
        await action()


def install() -> bool:
    """Wrap ``TrioSingleTask.restart`` (see the module docstring); True when it is."""
    cls = _timer_class()
    original = getattr(cls, "restart", None) if cls is not None else None
    if original is None:
        return False
    if getattr(original, _MARK, False):
        return True
    if not hypercorn_supported():
        return False

    async def restart(self: Any, task_group: Any, action: Callable[[], Awaitable[None]]
                      ) -> None:
        nursery = getattr(task_group, "_nursery", None)
        if (not isinstance(nursery, trio.Nursery) or not hasattr(self, "_handle")
                or not hasattr(self, "_lock")):
            await original(self, task_group, action)
            return
        async with self._lock:
            if self._handle is not None:
                self._handle.cancel()
            scope = trio.CancelScope()
            nursery.start_soon(_within, scope, action)
            self._handle = scope

    setattr(restart, _MARK, True)
    restart.__wrapped__ = original  # type: ignore[attr-defined]
    cls.restart = restart
    return True
