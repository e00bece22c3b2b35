"""The fast path answered inside Hypercorn's HTTP/1.1 protocol (``memlite/http/lane.py``)
and the keep-alive timer whose deadline moves (``idle_timer._Timer``).

The lane must answer the requests the fast path takes with no ASGI app task, byte for
byte as before (the ``date`` header aside), take only requests h11 would read the same
way, and give every other request, and every request it fails on, to Hypercorn's usual
way with the same bytes; the connection must keep HTTP/1.1's rules (pipelining,
``Connection: close``, ``keep_alive_max_requests``) and its keep-alive timer.
"""

from __future__ import annotations

import json
import logging
import socket
import time
import urllib.parse

import pytest
import trio
import trio.testing
from http_helpers import seed_observation, seed_session
from hypercorn.config import Config
from hypercorn.trio import serve
from hypercorn.trio.task_group import TaskGroup

from memlite.http import create_app, fast, idle_timer, lane

pytestmark = pytest.mark.loop_guard


@pytest.fixture
async def seeded(storage):
    await seed_session(storage, "a-1")
    for i, title in enumerate(["parser crash on empty input", "parser fixed with guard",
                               "cache invalidation bug"]):
        await seed_observation(storage, "a-1", title=title, at_ms=1_000 * (i + 1))


@pytest.fixture
def spawned_apps(monkeypatch):
    """How many ASGI app tasks Hypercorn spawned (one per request it handles its way)."""
    count = [0]
    original = TaskGroup.spawn_app

    async def counted(self, *args, **kwargs):
        count[0] += 1
        return await original(self, *args, **kwargs)

    monkeypatch.setattr(TaskGroup, "spawn_app", counted)
    return count


@pytest.fixture
async def server(services, nursery):
    """``start(**config)``: the worker's app served on a free loopback port with those
    Hypercorn settings; (port, app). Stopped (and checked stopped) at the end."""
    stopped: list[trio.Event] = []

    async def start(**settings):
        config = Config()
        config.bind = ["127.0.0.1:0"]
        config.accesslog = None
        config.errorlog = logging.getLogger("tests.hypercorn")
        for name, value in settings.items():
            setattr(config, name, value)
        # Built on a thread: the test's own task would be blamed by the loop guard.
        app = await trio.to_thread.run_sync(create_app, services)
        done = trio.Event()

        async def run(task_status=trio.TASK_STATUS_IGNORED):
            try:
                await serve(app, config, shutdown_trigger=services.shutdown.wait,
                            task_status=task_status)
            finally:
                done.set()

        [url] = await nursery.start(run)
        stopped.append(done)
        return int(url.rsplit(":", 1)[1]), app

    yield start
    services.shutdown.set()
    with trio.fail_after(10):  # a held keep-alive timer would keep a connection open
        for done in stopped:
            await done.wait()


def _get(port: int, path: str, token: str | None = None, extra: str = "") -> bytes:
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n{auth}{extra}\r\n".encode()


def _read_answer(reader) -> bytes:
    head = b""
    while not head.endswith(b"\r\n\r\n"):
        line = reader.readline()
        if not line:
            raise ConnectionError(f"closed before an answer's end: {head!r}")
        head += line
    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    return head + reader.read(length)


def _exchange(port: int, batches: list[bytes], count: int, idle: float = 0.2,
              pause: float = 0.0) -> tuple[list[bytes], bytes]:
    """Send each batch of bytes on one connection (a batch may hold several requests or
    part of one; ``pause`` s apart), read ``count`` answers, then whatever comes within
    ``idle`` s (b"" when the server closed the connection)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        reader = sock.makefile("rb")
        for batch in batches:
            sock.sendall(batch)
            time.sleep(pause)
        answers = [_read_answer(reader) for _ in range(count)]
        sock.settimeout(idle)
        try:
            rest = reader.read()
        except TimeoutError:
            rest = b"(still open)"
    return answers, rest


def _one_by_one(port: int, requests: list[bytes], idle: float = 0.2,
                ) -> tuple[list[bytes], bytes]:
    """Each request on one kept connection once the previous one is answered (as a client
    that waits for its answer sends them), then whatever comes within ``idle`` s."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        reader = sock.makefile("rb")
        answers = []
        for request in requests:
            sock.sendall(request)
            answers.append(_read_answer(reader))
        sock.settimeout(idle)
        try:
            rest = reader.read()
        except TimeoutError:
            rest = b"(still open)"
    return answers, rest


def _split(answer: bytes) -> tuple[bytes, list[bytes], bytes]:
    """(status line, header lines in order but ``date``'s, body)."""
    head, _, body = answer.partition(b"\r\n\r\n")
    status, *lines = head.split(b"\r\n")
    assert sum(line.startswith(b"date: ") for line in lines) == 1
    return status, [line for line in lines if not line.startswith(b"date: ")], body


def _url(path: str, **params: str) -> str:
    return f"{path}?{urllib.parse.urlencode(params)}"


async def test_the_worker_app_installs_the_lane(app):
    assert lane.installed() and idle_timer.installed()
    assert isinstance(getattr(app, "memlite_lane", None), lane.Lane)


async def test_the_lane_answers_with_no_app_task_as_quart_would(server, token, seeded,
                                                               spawned_apps, monkeypatch):
    port, _ = await server()
    paths = [_url("/api/search", q="parser", mode="fts"),
             _url("/api/search/index", q="parser crash", mode="fts", limit="2"),
             _url("/api/search", q="parser"), "/api/health"]
    requests = [_get(port, path, token) for path in paths]
    answers, rest = await trio.to_thread.run_sync(_one_by_one, port, requests)
    assert spawned_apps[0] == 0  # old code: one app task per request
    assert rest == b"(still open)"  # kept alive
    monkeypatch.setattr(fast, "FAST_ROUTES", {})  # the fast path declines: Quart answers
    monkeypatch.setattr(fast, "HEALTH", None)
    quarts, _ = await trio.to_thread.run_sync(_one_by_one, port, requests)
    assert spawned_apps[0] == len(paths)
    for path, ours, theirs in zip(paths, answers, quarts, strict=True):
        if path == "/api/health":  # its uptime moves
            ours, theirs = (a.split(b'"uptime"')[0] for a in (ours, theirs))
            assert ours.startswith(b"HTTP/1.1 200 ")
        else:
            assert _split(ours) == _split(theirs), path
            assert b'"parser' in ours, path
    assert b"server: hypercorn-h11" in _split(answers[0])[1]


async def test_other_requests_go_the_usual_way(server, token, seeded, spawned_apps):
    port, _ = await server()
    search = _url("/api/search", q="parser", mode="fts")
    cases = [
        (_get(port, search), b"401"),  # no token: the guard's refusal
        (_get(port, search, "wrong"), b"401"),
        (_get(port, _url("/api/search", q=" ", mode="fts"), token), b"400"),  # bad input
        (f"HEAD {search} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode(), None),
        (f"POST {search} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer "
         f"{token}\r\nContent-Length: 2\r\n\r\n{{}}".encode(), b"405"),
        (_get(port, search, token, "Content-Length: 0\r\n"), b"200"),  # a body header
        (_get(port, "/api/settings", token), b"200"),  # another route
    ]
    for request, status in cases:
        before = spawned_apps[0]
        if status is None:  # HEAD: a head and no body
            with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
                sock.sendall(request)
                reply = await trio.to_thread.run_sync(sock.recv, 65536)
            assert reply.startswith(b"HTTP/1.1 "), reply
        else:
            [answer], _ = await trio.to_thread.run_sync(_exchange, port, [request], 1)
            assert answer.startswith(b"HTTP/1.1 " + status), (request, answer[:200])
        assert spawned_apps[0] == before + 1, request  # Hypercorn's own way


async def test_pipelined_split_and_closing_requests_go_the_usual_way(server, token, seeded,
                                                                   spawned_apps):
    """Requests sent together, a request that arrives in pieces, one that asks to close
    and an HTTP/1.0 one are answered Hypercorn's way, in order and whole."""
    port, _ = await server()
    fts = _get(port, _url("/api/search", q="parser", mode="fts"), token)
    settings = _get(port, "/api/settings", token)
    health = _get(port, "/api/health")
    answers, rest = await trio.to_thread.run_sync(
        _exchange, port, [fts + settings + health + fts], 4)
    assert [a.split(b"\r\n")[0] for a in answers] == [b"HTTP/1.1 200 "] * 4
    assert b'"observations"' in answers[0] and b'"observations"' in answers[3]
    assert isinstance(json.loads(answers[1].partition(b"\r\n\r\n")[2]), dict)
    assert b'"status":"ok"' in answers[2] and rest == b"(still open)"
    assert spawned_apps[0] == 4
    answers, _ = await trio.to_thread.run_sync(_exchange, port, [fts[:9], fts[9:40], fts[40:]],
                                               1, 0.2, 0.05)
    # Hypercorn's way when its pieces came apart; the lane's if a loaded machine read them
    # in one go.
    assert b'"observations"' in answers[0] and spawned_apps[0] in (4, 5)
    spawned_apps[0] = 5
    old = f"GET /api/health HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode()
    answers, rest = await trio.to_thread.run_sync(_exchange, port, [old], 1, 2.0)
    assert answers[0].startswith(b"HTTP/1.1 200 ") and rest == b""
    assert spawned_apps[0] == 6
    # ...and the next request on a kept connection, whole, is the lane's again.
    answers, _ = await trio.to_thread.run_sync(_exchange, port, [fts], 1)
    assert b'"observations"' in answers[0] and spawned_apps[0] == 6


async def test_a_request_that_closes_is_answered_then_closed_as_before(
        server, token, seeded, spawned_apps, monkeypatch):
    port, _ = await server()
    asked = _get(port, _url("/api/search", q="parser", mode="fts"), token,
                 "Connection: close\r\n")
    ours, rest = await trio.to_thread.run_sync(_exchange, port, [asked], 1, 2.0)
    assert rest == b"" and spawned_apps[0] == 0  # answered in the lane, then closed
    monkeypatch.setattr(fast, "FAST_ROUTES", {})
    theirs, rest = await trio.to_thread.run_sync(_exchange, port, [asked], 1, 2.0)
    assert rest == b"" and spawned_apps[0] == 1
    assert _split(ours[0]) == _split(theirs[0])
    assert _split(ours[0])[1][-1] == b"Connection: close"


async def test_the_request_limit_still_closes_the_connection(server, token, seeded,
                                                            spawned_apps):
    port, _ = await server(keep_alive_max_requests=3)
    health = _get(port, "/api/health")
    answers, rest = await trio.to_thread.run_sync(_one_by_one, port, [health] * 3, 2.0)
    assert [b"connection: close" in a.lower() for a in answers] == [False, False, True]
    assert rest == b""  # closed by the server after the third
    assert spawned_apps[0] == 1  # the last one: Hypercorn's, which closes


async def test_a_failure_in_the_lane_goes_to_quart(server, token, seeded, spawned_apps,
                                                   caplog):
    port, app = await server()

    async def broken(scope):
        raise RuntimeError("lane broke")

    good = app.memlite_lane
    app.memlite_lane = lane.Lane(answer=broken, head=good.head)
    search = _get(port, _url("/api/search", q="parser", mode="fts"), token)
    answers, rest = await trio.to_thread.run_sync(_one_by_one, port, [search, search])
    assert all(a.startswith(b"HTTP/1.1 200 ") and b'"observations"' in a for a in answers)
    assert spawned_apps[0] == 2 and rest == b"(still open)"
    assert "the fast path failed" in caplog.text
    app.memlite_lane = good
    answers, _ = await trio.to_thread.run_sync(_exchange, port, [search], 1)
    assert spawned_apps[0] == 2


async def test_lane_requests_keep_one_timer_task(server, token, seeded, monkeypatch):
    """Held and released, not stopped and spawned: one keep-alive timer for a kept
    connection's lane requests, then a new one after a request that went Hypercorn's way
    (its stop ends the timer)."""
    made = [0]
    third = trio.Event()
    original = idle_timer._Timer.__init__

    def counted(self, server):
        made[0] += 1
        if made[0] == 3:
            third.set()
        original(self, server)

    monkeypatch.setattr(idle_timer._Timer, "__init__", counted)
    port, _ = await server()
    fts = _get(port, _url("/api/search", q="parser", mode="fts"), token)
    await trio.to_thread.run_sync(_one_by_one, port, [fts] * 5)
    assert made[0] == 1  # the connection's first timer, for all five
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    reader = sock.makefile("rb")

    def ask(request: bytes) -> bytes:
        sock.sendall(request)
        return _read_answer(reader)

    try:
        await trio.to_thread.run_sync(ask, fts)
        await trio.to_thread.run_sync(ask, _get(port, "/api/settings", token))
        # A request sent before Hypercorn has recycled the connection after its own
        # answer would go its way too: wait for the recycle (its new timer) first.
        with trio.fail_after(10):
            await third.wait()
        for _ in range(3):
            await trio.to_thread.run_sync(ask, fts)
        assert made[0] == 3  # the new connection's, and one after /api/settings
    finally:
        sock.close()


async def test_a_kept_connection_still_closes_once_idle(server, token, seeded):
    """The keep-alive timer, held while the lane answers and restarted after, closes the
    connection once it has been idle ``keep_alive_timeout``, not before."""
    port, _ = await server(keep_alive_timeout=0.6)
    health = _get(port, "/api/health")

    def paced() -> tuple[int, bytes]:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            reader = sock.makefile("rb")
            for _ in range(6):  # 6 x 0.25 s: longer than the timeout, never idle that long
                sock.sendall(health)
                _read_answer(reader)
                time.sleep(0.25)
            sock.settimeout(5)
            return 6, reader.read()

    answered, rest = await trio.to_thread.run_sync(paced)
    assert answered == 6 and rest == b""


def test_another_hypercorn_version_gets_no_lane(monkeypatch):
    import importlib.metadata

    from hypercorn.protocol.h11 import H11Protocol

    real = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version",
                        lambda name: "0.19.0" if name == "hypercorn" else real(name))
    current = vars(H11Protocol)["handle"]
    original = getattr(current, "__wrapped__", current)
    monkeypatch.setattr(H11Protocol, "handle", original)
    assert lane.install() is False and not lane.installed()
    monkeypatch.undo()
    assert lane.installed()


async def test_a_server_with_an_access_log_gets_no_lane(server, token, seeded, spawned_apps):
    port, _ = await server(accesslog=logging.getLogger("tests.access"))
    [answer], _ = await trio.to_thread.run_sync(_exchange, port, [_get(port, "/api/health")],
                                                1)
    assert answer.startswith(b"HTTP/1.1 200 ") and spawned_apps[0] == 1


async def test_the_lane_keeps_no_timer_after_a_closed_connection(server, token, seeded):
    """A connection closed after its request (``Connection: close``, Hypercorn's way)
    leaves no keep-alive timer running beside the kept connection's lane-held one: its
    handler ends at once, not after ``keep_alive_timeout``."""
    port, _ = await server(keep_alive_timeout=30)

    def timers() -> int:
        return sum(task.name.endswith("_Timer.run")
                   for task in _tasks(trio.lowlevel.current_root_task()))

    kept = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        kept.sendall(_get(port, "/api/health"))
        await trio.to_thread.run_sync(_read_answer, kept.makefile("rb"))
        await trio.testing.wait_all_tasks_blocked(cushion=0.05)
        assert timers() == 1  # the kept connection's
        asked = _get(port, "/api/health", extra="Connection: close\r\n")
        await trio.to_thread.run_sync(_exchange, port, [asked], 1, 2.0)
        await trio.testing.wait_all_tasks_blocked(cushion=0.05)
        assert timers() == 1  # none left by the closed one
    finally:
        kept.close()


def _tasks(task):
    yield task
    for nursery in task.child_nurseries:
        for child in nursery.child_tasks:
            yield from _tasks(child)
