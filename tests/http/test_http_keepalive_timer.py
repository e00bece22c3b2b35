"""The keep-alive timer whose deadline moves (``memlite/http/idle_timer.py``'s ``_Timer``),
against a stand-in for Hypercorn's ``TCPServer``: a restart moves the deadline without a
new task, Hypercorn's ``stop`` ends it without closing anything, and ``hold`` /
``release`` (the lane's) keep a stopping server from closing a connection mid-request.
The timer on real connections: ``test_http_lane.py``."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from memlite.http import idle_timer

pytestmark = pytest.mark.loop_guard


class _Terminated:
    def __init__(self) -> None:
        self.event = trio.Event()

    async def wait(self) -> None:
        await self.event.wait()


class _Server:
    """What ``_Timer`` uses of Hypercorn's ``TCPServer`` (its ``_idle_timeout`` is the
    real one, so that the timer takes it for Hypercorn's)."""

    from hypercorn.trio.tcp_server import TCPServer

    _idle_timeout = TCPServer._idle_timeout

    def __init__(self, timeout: float) -> None:
        self.config = type("Config", (), {"keep_alive_timeout": timeout})()
        self.context = type("Context", (), {"terminated": _Terminated()})()
        self.closed = 0

    async def _initiate_server_close(self) -> None:
        self.closed += 1


class _Group:
    """What ``TrioSingleTask.restart`` uses of Hypercorn's ``TaskGroup``."""

    def __init__(self, nursery) -> None:
        self._nursery = nursery


async def _started(nursery, server: _Server):
    """A Hypercorn keep-alive timer (``TrioSingleTask``) started for ``server``'s
    keep-alive action, with ``idle_timer`` installed."""
    from hypercorn.trio.worker_context import TrioSingleTask

    idle_timer.install()
    single = TrioSingleTask()
    await single.restart(_Group(nursery), server._idle_timeout)
    return single


async def test_the_timer_moves_its_deadline_without_a_new_task(autojump_clock):
    server = _Server(timeout=5)
    async with trio.open_nursery() as nursery:
        single = await _started(nursery, server)
        await trio.testing.wait_all_tasks_blocked()
        [task] = nursery.child_tasks
        for _ in range(4):  # restarted every 3 s: never idle 5 s
            await trio.sleep(3)
            await single.restart(_Group(nursery), server._idle_timeout)
        assert nursery.child_tasks == {task} and server.closed == 0
        assert idle_timer.hold(single)
        await trio.sleep(60)  # held: no deadline
        assert server.closed == 0
        assert idle_timer.release(single)
        await trio.sleep(4.9)
        assert server.closed == 0
        await trio.sleep(0.2)
        assert server.closed == 1 and not nursery.child_tasks
        assert not idle_timer.hold(single) and not idle_timer.release(single)  # it ended


async def test_a_stopped_timer_ends_without_closing(autojump_clock):
    server = _Server(timeout=5)
    async with trio.open_nursery() as nursery:
        single = await _started(nursery, server)
        await trio.sleep(1)
        await single.stop()
        await trio.testing.wait_all_tasks_blocked()
        assert not nursery.child_tasks and server.closed == 0
        await single.restart(_Group(nursery), server._idle_timeout)  # a new timer
        await trio.sleep(5.1)
        assert server.closed == 1


async def test_a_server_stopping_during_a_held_request_closes_after_it(autojump_clock):
    """Hypercorn stops the timer while a request runs: a server stopping meanwhile
    closes the connection only once the request is answered (the next restart)."""
    server = _Server(timeout=5)
    async with trio.open_nursery() as nursery:
        single = await _started(nursery, server)
        await trio.testing.wait_all_tasks_blocked()
        assert idle_timer.hold(single)
        server.context.terminated.event.set()
        await trio.sleep(1)
        assert server.closed == 0  # the request is still being answered
        assert idle_timer.release(single)
        await trio.testing.wait_all_tasks_blocked()
        assert server.closed == 1
