"""Hypercorn's per-connection locks without a scheduler pass (``memlite/http/locks.py``),
its keep-alive timer restarted without waiting for its task (``idle_timer.py``) and the
end of a ``Content-Length`` message without a socket write (``oneshot``).

Both cut scheduler passes from every request on a kept-alive connection; neither may
change a byte of a response, mutual exclusion, cancellation, or the keep-alive timer.
"""

from __future__ import annotations

import logging
import socket
import sys
import types
from functools import partial

import pytest
import trio
import trio.testing
from hypercorn.config import Config
from hypercorn.trio import serve
from test_http_wire import call, served  # noqa: F401  (a fixture)

from memlite.http import idle_timer, locks

pytestmark = pytest.mark.loop_guard


class _Steps(trio.abc.Instrument):
    """Counts the steps of one task: a task that yields to the scheduler takes a new one."""

    def __init__(self, task) -> None:
        self.task, self.steps = task, 0

    def before_task_step(self, task) -> None:
        if task is self.task:
            self.steps += 1


async def _passes_during(enter) -> int:
    """How many scheduler passes the current task took inside ``enter()``."""
    steps = _Steps(trio.lowlevel.current_task())
    trio.lowlevel.add_instrument(steps)
    try:
        await enter()
    finally:
        trio.lowlevel.remove_instrument(steps)
    return steps.steps


async def test_a_free_prompt_lock_is_taken_without_a_pass():
    prompt, plain = locks.PromptLock(), trio.Lock()

    async def take(lock):
        async with lock:
            assert lock.locked()

    assert await _passes_during(partial(take, plain)) == 1  # trio.Lock: a pass
    assert await _passes_during(partial(take, prompt)) == 0
    assert not prompt.locked()


async def test_a_held_prompt_lock_is_waited_for_in_order():
    lock = locks.PromptLock()
    order: list[str] = []
    inside = 0

    async def user(name: str, hold: float):
        nonlocal inside
        async with lock:
            inside += 1
            assert inside == 1  # never two holders
            order.append(name)
            await trio.sleep(hold)
            inside -= 1

    async with trio.open_nursery() as nursery:
        nursery.start_soon(user, "first", 0.05)
        await trio.testing.wait_all_tasks_blocked()
        for name in ("second", "third"):
            nursery.start_soon(user, name, 0)
            await trio.testing.wait_all_tasks_blocked()
    assert order == ["first", "second", "third"]


async def test_a_cancelled_task_gets_cancelled_at_the_prompt_lock():
    lock = locks.PromptLock()
    with trio.CancelScope() as scope:
        scope.cancel()
        async with lock:
            pytest.fail("entered a lock while cancelled")
    assert scope.cancelled_caught and not lock.locked()


async def test_an_error_inside_releases_the_prompt_lock():
    lock = locks.PromptLock()
    with pytest.raises(ValueError):
        async with lock:
            raise ValueError("boom")
    assert not lock.locked()


async def test_the_worker_app_installs_it_on_hypercorns_two_locks(app):
    """``app``: ``create_app`` built by the fixture, the step ``tests/loopblock.py``
    exempts (it runs once, before the worker serves; called in this test's own step it
    once took 30.7 ms of CPU under CI load and failed the guard)."""
    from hypercorn.trio.worker_context import TrioSingleTask

    assert sorted(locks.installed()) == ["TCPServer", "TrioSingleTask"]
    assert type(TrioSingleTask()._lock) is locks.PromptLock
    assert sorted(locks.install()) == ["TCPServer", "TrioSingleTask"]  # idempotent


def test_anything_but_the_expected_lock_is_left_alone(monkeypatch):
    """The fallback: an attribute of another type, or a class that is not there, is left
    as Hypercorn (here: a stand-in module) made it."""
    module = types.ModuleType("fake_hypercorn_server")

    class Server:
        def __init__(self, lock):
            self.send_lock = lock

    module.Server = Server
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setattr(locks, "TARGETS", (
        (module.__name__, "Server", "send_lock"),
        (module.__name__, "Missing", "send_lock"),
        ("no_such_module_here", "TCPServer", "send_lock"),
    ))
    assert locks.install() == ["Server"]
    assert type(Server(trio.Lock()).send_lock) is locks.PromptLock
    other = trio.Semaphore(1)
    assert Server(other).send_lock is other
    assert Server(None).send_lock is None


async def test_served_connections_write_under_a_prompt_lock(served, token,  # noqa: F811
                                                            monkeypatch):
    from hypercorn.trio.tcp_server import TCPServer

    kinds: list[type] = []
    original = TCPServer.protocol_send

    async def seen(self, event):
        kinds.append(type(self.send_lock))
        await original(self, event)

    monkeypatch.setattr(TCPServer, "protocol_send", seen)
    port, _, _ = served
    status, _, body = await call(port, "GET", "/api/health")
    assert status == 200 and b'"status":"ok"' in body
    assert kinds and set(kinds) == {locks.PromptLock}


async def test_an_empty_end_of_message_costs_no_write(served, token,  # noqa: F811
                                                      monkeypatch):
    """``oneshot``: Hypercorn wrote ``b""`` for the end of a ``Content-Length`` body (a
    second call per response, two scheduler passes); now one write per response."""
    from hypercorn.events import RawData
    from hypercorn.trio.tcp_server import TCPServer

    writes: list[bytes] = []
    original = TCPServer.protocol_send

    async def counted(self, event):
        if isinstance(event, RawData):
            writes.append(event.data)
        await original(self, event)

    monkeypatch.setattr(TCPServer, "protocol_send", counted)
    port, _, _ = served
    for path, headers in (("/api/health", {}), ("/api/settings", {}),
                          ("/api/settings", {"Authorization": f"Bearer {token}"})):
        writes.clear()
        status, _, body = await call(port, "GET", path, headers=headers)
        assert status in (200, 401) and body
        assert len(writes) == 1 and writes[0].endswith(body), (path, writes)


def _exchange(port: int, requests: list[bytes], idle: float) -> tuple[list[bytes], bytes]:
    """Send each request on one connection and read its answer (a ``Content-Length`` or
    chunked body), then wait up to ``idle`` s for the server to close the connection."""
    answers = []
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        reader = sock.makefile("rb")
        for request in requests:
            sock.sendall(request)
            head = b""
            while not head.endswith(b"\r\n\r\n"):
                line = reader.readline()
                if not line:
                    raise ConnectionError(f"closed before the answer to {request!r}")
                head += line
            body = b""
            if b"transfer-encoding: chunked" in head.lower():
                while True:
                    size = int(reader.readline().strip(), 16)
                    chunk = reader.read(size + 2)
                    if size == 0:
                        break
                    body += chunk[:-2]
            else:
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                body = reader.read(length)
            answers.append(head + body)
        sock.settimeout(idle)
        try:
            rest = reader.read()  # b"" once the server closes the idle connection
        except TimeoutError:
            rest = b"(still open)"
    return answers, rest


async def test_kept_connections_and_their_idle_timer_still_work(nursery):
    """Every answer on one kept connection (a ``Content-Length`` body and a chunked one,
    whose last chunk must still be written), then the keep-alive timer, restarted after
    each answer under a ``PromptLock``, still closes the idle connection."""

    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["path"] == "/chunked":
            await send({"type": "http.response.start", "status": 200, "headers": []})
            for part in (b"one,", b"two"):
                await send({"type": "http.response.body", "body": part, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
            return
        body = scope["path"].encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    from memlite.http import oneshot

    oneshot.install()
    locks.install()
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    config.errorlog = logging.getLogger("tests.hypercorn")
    config.keep_alive_timeout = 0.5
    stop = trio.Event()
    [url] = await nursery.start(partial(serve, app, config, shutdown_trigger=stop.wait))
    port = int(url.rsplit(":", 1)[1])
    requests = [f"GET {p} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
                for p in ("/a", "/chunked", "/bb", "/chunked")]
    try:
        answers, rest = await trio.to_thread.run_sync(_exchange, port, requests, 10.0)
    finally:
        stop.set()
    assert [a.split(b"\r\n\r\n", 1)[1] for a in answers] == [b"/a", b"one,two", b"/bb",
                                                             b"one,two"]
    assert all(a.startswith(b"HTTP/1.1 200 ") for a in answers)
    assert rest == b""  # closed by the server's idle timer, well before our 10 s


class _Nursery:
    """What ``TrioSingleTask.restart`` uses of Hypercorn's ``TaskGroup``."""

    def __init__(self, nursery) -> None:
        self._nursery = nursery


async def test_the_idle_timer_restarts_without_a_pass_and_keeps_one_timer():
    from hypercorn.trio.worker_context import TrioSingleTask

    idle_timer.install()
    assert idle_timer.installed()
    running: list[int] = []
    ended: list[int] = []

    def action_number(n):
        async def action():
            running.append(n)
            try:
                await trio.sleep_forever()
            finally:
                ended.append(n)
        return action

    async with trio.open_nursery() as nursery:
        timer = TrioSingleTask()
        group = _Nursery(nursery)
        for n in range(3):
            assert await _passes_during(partial(timer.restart, group, action_number(n))) == 0
            await trio.testing.wait_all_tasks_blocked()
        assert running == [0, 1, 2] and ended == [0, 1]  # each restart ends the last one
        await timer.stop()
        await timer.restart(group, action_number(3))
        await timer.stop()  # stopped before its task ran: cancelled at its first await
        await trio.testing.wait_all_tasks_blocked()
        assert ended == [0, 1, 2, 3]
        assert not nursery.child_tasks


async def test_the_idle_timer_falls_back_to_hypercorns_restart():
    """Not Hypercorn's task group (no Trio nursery under ``_nursery``): Hypercorn's own
    ``restart`` runs (it waits for the task to start: a pass)."""
    from hypercorn.trio.task_group import TaskGroup
    from hypercorn.trio.worker_context import TrioSingleTask

    idle_timer.install()
    started = trio.Event()

    async def action():
        started.set()
        await trio.sleep_forever()

    class Odd:
        _nursery = None

    timer = TrioSingleTask()
    with pytest.raises(AttributeError):  # Hypercorn's restart, on a group it cannot use
        await timer.restart(Odd(), action)
    async with TaskGroup() as group:
        await timer.restart(group, action)
        await started.wait()
        await timer.stop()


async def test_a_slow_request_outlives_the_keep_alive_timeout(nursery):
    """The timer is stopped while a request runs and restarted after it: a request slower
    than ``keep_alive_timeout`` is answered, the connection serves the next one, then
    closes once idle."""

    async def app(scope, receive, send):
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        if scope["path"] == "/slow":
            await trio.sleep(0.8)
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-length", b"2")]})
        await send({"type": "http.response.body", "body": b"ok"})

    locks.install()
    idle_timer.install()
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    config.errorlog = logging.getLogger("tests.hypercorn")
    config.keep_alive_timeout = 0.5
    stop = trio.Event()
    [url] = await nursery.start(partial(serve, app, config, shutdown_trigger=stop.wait))
    port = int(url.rsplit(":", 1)[1])
    requests = [f"GET {p} HTTP/1.1\r\nHost: x\r\n\r\n".encode()
                for p in ("/slow", "/fast", "/slow")]
    try:
        answers, rest = await trio.to_thread.run_sync(_exchange, port, requests, 10.0)
    finally:
        stop.set()
    assert [a.split(b"\r\n\r\n", 1)[1] for a in answers] == [b"ok", b"ok", b"ok"]
    assert rest == b""


def test_another_hypercorn_version_gets_nothing_installed(monkeypatch):
    """The version guard: under another Hypercorn minor version (here a pretended 0.19)
    neither wrapper is installed on a class not wrapped yet."""
    import importlib.metadata

    real = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version",
                        lambda name: "0.19.0" if name == "hypercorn" else real(name))
    assert not locks.hypercorn_supported()
    module = types.ModuleType("fake_hypercorn_server_2")

    class Server:
        def __init__(self):
            self.send_lock = trio.Lock()

    class Timer:
        async def restart(self, task_group, action):
            raise AssertionError("not called here")

    module.Server, module.Timer = Server, Timer
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setattr(locks, "TARGETS", ((module.__name__, "Server", "send_lock"),))
    assert locks.install() == []
    assert type(Server().send_lock) is trio.Lock
    monkeypatch.setattr(idle_timer, "_timer_class", lambda: Timer)
    assert idle_timer.install() is False and not idle_timer.installed()
    original = Timer.__dict__["restart"]
    assert Timer.restart is original
    monkeypatch.undo()
    assert locks.hypercorn_supported()  # the pinned 0.18
