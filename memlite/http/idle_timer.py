"""Hypercorn's keep-alive timer: one task per connection, whose deadline moves.

Why: under Hypercorn 0.18's Trio worker, a kept-alive connection stops its idle timer
when a request arrives and starts a new one after each response
(``TrioSingleTask.restart``, from ``TCPServer.protocol_send`` on ``Updated(idle=True)``).
``restart`` starts the timer's task with ``nursery.start`` and waits until that task has
run and reported itself started: a new task, a scheduler pass for it and one more for the
caller, after every response, on the request's own task; and ``stop`` cancels it: one
more step of that task to end it. Measured in a loop (restart, stop, one pass;
``PromptLock`` in both), 76-84 against 46-64 us of CPU an iteration with the task
started without waiting; in a worker at 10,000 observations, a kept-connection
``/api/health`` answered by ``lane`` took 0.254 -> 0.223 ms and 0.266 -> 0.227 ms (p50,
3,000 requests, two pairs of runs) with no stop and restart at all, the most a cheaper
timer could save.

What: ``install()`` wraps ``restart``. For Hypercorn's own keep-alive action
(``TCPServer._idle_timeout``) it runs a ``_Timer``: one task for the connection that does
what that method does (wait until the connection has been idle ``keep_alive_timeout`` or
the server stops, then close the connection, shielded), in a wait whose deadline a
restart moves instead of starting a new task: a restart of a timer still waiting costs
no task, no scheduler pass and no lock. Hypercorn's ``stop`` still cancels the timer
(its handle is the timer's outer scope) and its task ends without closing anything, as
before; the next restart starts a new one. ``hold`` and ``release`` are the lane's stop
and restart (``lane.py``): the deadline moved to never and back, the task kept; a server
stopping while a timer is held closes the connection only once it is released, as a
stopped timer leaves it to the next restart. Any other action, or a task group without
the Trio nursery Hypercorn's ``TaskGroup`` keeps (``_nursery``), or a timer without its
``_lock`` and ``_handle``, is started as before this module's timer: with
``nursery.start_soon`` inside a scope kept as the handle (no wait for the task to start),
or by Hypercorn's own ``restart``. No byte of any response changes.

Compatibility: it wraps ``hypercorn.trio.worker_context.TrioSingleTask.restart`` (a class
of the pinned Hypercorn, see ``constraints.txt``), only under the Hypercorn minor version
it was written against (``locks.HYPERCORN``; any other: nothing is installed), and runs a
``_Timer`` only for the action ``TCPServer._idle_timeout`` of that version, whose steps it
repeats. Idempotent.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any

import trio

from memlite.http.locks import hypercorn_supported

__all__ = ["hold", "install", "installed", "release"]

_MARK = "_memlite_idle_timer"
_TIMER = "_memlite_timer"  # on a ``TrioSingleTask``: its ``_Timer``, when it runs one


def _timer_class() -> Any:
    """Hypercorn's keep-alive timer class, or None."""
    try:
        from hypercorn.trio.worker_context import TrioSingleTask
    except ImportError:
        return None
    return TrioSingleTask


def _idle_timeout() -> Any:
    """The function of Hypercorn's keep-alive action (``TCPServer._idle_timeout``), or
    None."""
    try:
        from hypercorn.trio.tcp_server import TCPServer
    except ImportError:
        return None
    return vars(TCPServer).get("_idle_timeout")


def installed() -> bool:
    """Whether Hypercorn's keep-alive timer restarts without waiting for its task."""
    cls = _timer_class()
    return cls is not None and getattr(getattr(cls, "restart", None), _MARK, False)


async def _within(scope: trio.CancelScope, action: Callable[[], Awaitable[None]]) -> None:
    with scope:
        await action()


class _Timer:
    """One connection's keep-alive timer, ``TCPServer._idle_timeout`` with a deadline that
    moves: wait until the connection has been idle ``keep_alive_timeout`` or the server
    stops, then close the connection (shielded), as that method does.

    ``outer`` is the handle ``TrioSingleTask`` keeps: Hypercorn's ``stop()`` cancels it
    and the task ends without closing anything, as when it cancels its own timer.
    ``rearm()`` (a restart) moves the wait's deadline to ``keep_alive_timeout`` from now;
    ``hold()`` moves it to never, and a server stopping meanwhile is left for the next
    ``rearm()``, as a stopped timer would have left it to the next restart."""

    __slots__ = ("closing", "held", "outer", "resumed", "server", "timeout", "wait")

    def __init__(self, server: Any) -> None:
        self.server = server
        self.timeout: float = server.config.keep_alive_timeout
        self.outer = trio.CancelScope()
        self.wait = trio.CancelScope(deadline=trio.current_time() + self.timeout)
        self.held = False
        self.closing = False
        self.resumed: trio.Event | None = None

    def armed(self) -> bool:
        """Still waiting: not stopped, not timed out, not closing."""
        return not (self.closing or self.outer.cancel_called or self.wait.cancel_called)

    def rearm(self) -> None:
        self.held = False
        self.wait.deadline = trio.current_time() + self.timeout
        if self.resumed is not None:
            self.resumed.set()

    def hold(self) -> None:
        self.held = True
        self.wait.deadline = math.inf

    async def run(self) -> None:
        with self.outer:
            while True:
                with self.wait:
                    await self.server.context.terminated.wait()
                if not self.held:
                    break
                self.resumed = trio.Event()  # the server stops while a request is answered
                await self.resumed.wait()
                self.resumed = None
                self.wait = trio.CancelScope(deadline=trio.current_time() + self.timeout)
            self.closing = True
            with trio.CancelScope(shield=True):
                await self.server._initiate_server_close()


def _running(single_task: Any) -> _Timer | None:
    """The ``_Timer`` this ``TrioSingleTask`` runs, when it is still waiting."""
    timer = getattr(single_task, _TIMER, None)
    if (isinstance(timer, _Timer) and getattr(single_task, "_handle", None) is timer.outer
            and timer.armed()):
        return timer
    return None


def hold(single_task: Any) -> bool:
    """Stop a connection's keep-alive timer for one request without ending its task
    (``release`` restarts it); False when it runs no ``_Timer`` (stop it the usual way)."""
    timer = _running(single_task)
    if timer is None:
        return False
    timer.hold()
    return True


def release(single_task: Any) -> bool:
    """Restart a connection's keep-alive timer from now, as ``restart`` would; False when
    it runs no ``_Timer`` (restart it the usual way)."""
    timer = _running(single_task)
    if timer is None:
        return False
    timer.rearm()
    return True


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
    keep_alive = _idle_timeout()

    async def restart(self: Any, task_group: Any, action: Callable[[], Awaitable[None]]
                      ) -> None:
        timer = _running(self)
        if timer is not None and getattr(action, "__self__", None) is timer.server:
            timer.rearm()  # the same connection's timer, still waiting: its deadline moves
            return
        nursery = getattr(task_group, "_nursery", None)
        if (not isinstance(nursery, trio.Nursery) or not hasattr(self, "_handle")
                or not hasattr(self, "_lock")):
            await original(self, task_group, action)
            return
        async with self._lock:
            if self._handle is not None:
                self._handle.cancel()
            if keep_alive is not None and getattr(action, "__func__", None) is keep_alive:
                timer = _Timer(action.__self__)  # type: ignore[attr-defined]
                setattr(self, _TIMER, timer)
                nursery.start_soon(timer.run)
                self._handle = timer.outer
            else:
                scope = trio.CancelScope()
                nursery.start_soon(_within, scope, action)
                self._handle = scope

    setattr(restart, _MARK, True)
    restart.__wrapped__ = original  # type: ignore[attr-defined]
    cls.restart = restart
    return True
