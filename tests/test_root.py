"""The full root, in-process on a free port: start order, spool before readiness, clean and
quick stop, idle shutdown returning on its own, a taken port. Real clock (real sockets,
real SQLite threads); the idle timing itself is tested on virtual time in
tests/actors/test_idle.py."""

from __future__ import annotations

import errno
import json
import re
import socket
import threading
from functools import partial

import pytest
import trio
from ports import free_port
from worker_helpers import fixture, query

from memlite import ingest
from memlite import tree as root
from memlite.actors.core import ChildExited, ChildStarted, ChildStopped
from memlite.config import load_settings
from memlite.errors import NotADatabaseError
from memlite.hooks import spool

SID = "063ff789-6364-494f-89fe-b93ab95a9061"
ORDER = ["storage", "snapshots", "bus", "sessions", "optional", "spool", "http"]
OPTIONAL = ["reaper", "pruner", "embedder", "idle", "heap"]


@pytest.fixture
def settings(data_dir, monkeypatch):
    monkeypatch.setenv("MEMLITE_WORKER_PORT", str(free_port()))
    return load_settings(data_dir)


@pytest.fixture
def trees(monkeypatch):
    """Every ``WorkerTree`` the root builds, to look at its supervisor's events."""
    made: list[root.WorkerTree] = []
    real = root.WorkerTree

    def build(*args, **kwargs):
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(root, "WorkerTree", build)
    return made


@pytest.fixture(autouse=True)
def no_leaked_db_threads():
    yield
    leaked = [t.name for t in threading.enumerate() if t.name.startswith("memlite-db-")]
    assert not leaked, f"database connections left open: {leaked}"


async def http(port: int, method: str, path: str, *, token: str | None = None,
               body: dict | None = None) -> tuple[int, dict]:
    """One request on its own connection; returns (status, JSON body)."""
    data = json.dumps(body).encode() if body is not None else b""
    head = [f"{method} {path} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close",
            f"Content-Length: {len(data)}"]
    if token:
        head.append(f"Authorization: Bearer {token}")
    if body is not None:
        head.append("Content-Type: application/json")
    with trio.fail_after(10):
        stream = await trio.open_tcp_stream("127.0.0.1", port)
        async with stream:
            await stream.send_all(("\r\n".join(head) + "\r\n\r\n").encode() + data)
            received = b""
            while True:
                top, sep, rest = received.partition(b"\r\n\r\n")
                length = re.search(rb"(?im)^content-length:\s*(\d+)", top) if sep else None
                if length and len(rest) >= int(length[1]):
                    break
                chunk = await stream.receive_some(65536)
                if not chunk:
                    break
                received += chunk
    status = int(received.split(b" ", 2)[1])
    return status, json.loads(rest) if rest else {}


def token_of(settings) -> str:
    return (settings.data_dir / "token").read_text().strip()


async def test_serves_then_stops_cleanly_and_quickly(settings, trees):
    shutdown = trio.Event()
    async with trio.open_nursery() as nursery:
        port = await nursery.start(partial(root.run_root, settings, shutdown=shutdown))
        assert port == settings.worker_port
        status, health = await http(port, "GET", "/api/health")
        assert (status, health["status"]) == (200, "ok")
        token = token_of(settings)
        status, ready = await http(port, "GET", "/api/readiness", token=token)
        assert (status, ready["ready"]) == (200, True)
        status, stored = await http(port, "POST", "/api/events", token=token,
                                    body=fixture("SessionStart.startup"))
        assert (status, stored["created"], stored["event_id"]) == (200, True, 1)
        began = trio.current_time()
        shutdown.set()
    took = trio.current_time() - began
    assert took < 5, took
    (tree,) = trees
    events = tree.supervisor.events
    assert [e.name for e in events if isinstance(e, ChildStarted)] == ORDER
    # Everything stopped in reverse order, the front first (it may have returned on
    # ``shutdown`` a moment before the supervisor told it to); the spooler keeps draining
    # while the worker runs, so it stops in its turn.
    ended = [e.name for e in events if isinstance(e, ChildExited | ChildStopped)]
    assert ended == ["http", "spool", "optional", "sessions", "bus",
                     "snapshots", "storage"]  # snapshots' last round sees all commits
    inner = tree.optional.events
    assert [e.name for e in inner if isinstance(e, ChildStarted)] == OPTIONAL
    assert [e.name for e in inner if isinstance(e, ChildExited | ChildStopped)] == \
        OPTIONAL[::-1]
    assert query(settings.data_dir, "SELECT event_name FROM events") == [("SessionStart",)]
    with pytest.raises(OSError):
        await http(port, "GET", "/api/health")  # nothing listens any more


async def test_a_running_worker_drains_what_hooks_spool_while_it_runs(settings, monkeypatch):
    """Issue 13: events spooled while the worker was up but slow waited for its next start."""
    from memlite.actors import spooler

    monkeypatch.setattr(spooler, "PERIOD_SECONDS", 0.1)
    shutdown = trio.Event()
    async with trio.open_nursery() as nursery:
        await nursery.start(partial(root.run_root, settings, shutdown=shutdown))
        payload = fixture("PostToolUse.Bash", tool_use_id="toolu_late")
        spool.append(settings.data_dir, "PostToolUse", payload)  # the hook timed out
        with trio.fail_after(20):
            while query(settings.data_dir, "SELECT count(*) FROM events WHERE tool_use_id "  # noqa: ASYNC110
                        "= 'toolu_late'") != [(1,)]:
                await trio.sleep(0.05)
        shutdown.set()
    assert [p.name for p in (settings.data_dir / "spool").iterdir()
            if spool.is_spool_file(p.name)] == []


async def test_the_spool_is_drained_before_readiness(settings):
    for name in ("SessionStart.startup", "UserPromptSubmit", "Stop"):
        payload = fixture(name)
        spool.append(settings.data_dir, payload["hook_event_name"], payload)
    shutdown = trio.Event()
    async with trio.open_nursery() as nursery:
        port = await nursery.start(partial(root.run_root, settings, shutdown=shutdown))
        # Started means serving, and serving comes after the drain.
        assert [e for (e,) in query(settings.data_dir,
                                    "SELECT event_name FROM events ORDER BY id")] == [
            "SessionStart", "UserPromptSubmit", "Stop"]
        assert list((settings.data_dir / "spool").iterdir()) == []
        status, ready = await http(port, "GET", "/api/readiness", token=token_of(settings))
        assert (status, ready["ready"]) == (200, True)
        shutdown.set()


async def test_an_in_flight_write_is_finished_before_the_database_closes(settings,
                                                                         monkeypatch):
    gate, entered = trio.Event(), trio.Event()
    real = ingest._store

    async def slow_store(services, fields):
        entered.set()
        await gate.wait()
        return await real(services, fields)

    monkeypatch.setattr(ingest, "_store", slow_store)
    shutdown = trio.Event()
    answers = []
    async with trio.open_nursery() as nursery:
        port = await nursery.start(partial(root.run_root, settings, shutdown=shutdown))

        async def post():
            answers.append(await http(port, "POST", "/api/events", token=token_of(settings),
                                      body=fixture("Stop")))

        nursery.start_soon(post)
        await entered.wait()
        shutdown.set()  # the request is in flight: past validation, not yet stored
        await trio.sleep(0.2)
        gate.set()
    assert answers[0][0] == 200 and answers[0][1]["created"]
    assert query(settings.data_dir, "SELECT event_name FROM events") == [("Stop",)]


async def test_idle_shutdown_returns_on_its_own(settings, monkeypatch):
    """The idle actor decides (virtual-time tests); here: the root obeys it by itself."""

    class InstantIdle:
        def __init__(self, sessions, activity, shutdown, **kwargs):
            self.shutdown = shutdown

        async def run(self, *, task_status=trio.TASK_STATUS_IGNORED):
            task_status.started(None)
            await trio.sleep(0.2)
            self.shutdown.set()

    monkeypatch.setattr(root, "IdleShutdown", InstantIdle)
    worker_shutdown = trio.Event()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(partial(root.run_root, settings, shutdown=worker_shutdown))
    assert not worker_shutdown.is_set()  # nobody asked it to stop: it returned by itself


async def test_a_taken_port_fails_before_anything_is_opened(settings):
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", settings.worker_port))
        squatter.listen()
        with trio.fail_after(2), pytest.raises(OSError) as caught:
            await root.run_root(settings, shutdown=trio.Event())
    assert caught.value.errno == errno.EADDRINUSE
    assert not (settings.data_dir / "memlite.db").exists()


async def test_a_database_that_cannot_be_opened_fails_the_start(settings):
    (settings.data_dir / "memlite.db").write_bytes(b"this is not a database" * 100)
    with trio.fail_after(10), pytest.raises(NotADatabaseError, match="Move it aside"):
        await root.run_root(settings, shutdown=trio.Event())


async def test_an_embedder_that_keeps_failing_is_given_up_without_stopping_storage_or_http(
        settings, trees, monkeypatch):
    """Issue 17: one restart budget for every child let a crash-looping optional child
    escalate and take storage and HTTP down. Now it is given up alone and reported."""
    from memlite.actors.core import ChildGaveUp, Mailbox

    starts: list[float] = []

    class BrokenEmbedder:  # reports started, then its reader fails at once, every time
        def __init__(self, *args, **kwargs) -> None:
            pass

        async def run(self, *, task_status):
            with Mailbox("embedder", size=4) as mailbox:
                task_status.started(mailbox.ref)
                starts.append(trio.current_time())
                raise RuntimeError("injected: the embedder's reader failed")

    monkeypatch.setattr(root, "EmbedderActor", BrokenEmbedder)
    shutdown = trio.Event()
    async with trio.open_nursery() as nursery:
        port = await nursery.start(partial(root.run_root, settings, shutdown=shutdown))
        (tree,) = trees
        with trio.fail_after(20):
            while "embedder" not in tree.optional.given_up:  # noqa: ASYNC110
                await trio.sleep(0.05)
        status, health = await http(port, "GET", "/api/health")
        assert status == 200
        assert health["degraded"] == {"embedder": "RuntimeError: injected: the embedder's "
                                                  "reader failed"}
        token = token_of(settings)
        status, stored = await http(port, "POST", "/api/events", token=token,
                                    body=fixture("SessionStart.startup"))
        assert (status, stored["created"]) == (200, True)
        status, _ = await http(port, "GET", "/api/search?q=anything", token=token)
        assert status == 200  # full text, without the embedder
        shutdown.set()
    assert len(starts) == root.OPTIONAL_INTENSITY + 1
    assert any(isinstance(e, ChildGaveUp) for e in tree.optional.events)
    assert tree.supervisor.error is None
    assert query(settings.data_dir, "SELECT event_name FROM events") == [("SessionStart",)]
