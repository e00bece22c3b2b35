"""A spool nothing can jam (issue 13 item 4): an event whose cwd cannot be examined is
stored, one bad line is quarantined with its reason and never blocks the rest, a
database outage stops a drain without quarantining anything, and a running worker
drains by itself."""

from __future__ import annotations

import errno
import threading

import pytest
import trio
from worker_helpers import fixture, query, running_services

from memlite import drain, ingest
from memlite.actors.core import spawn
from memlite.actors.spooler import DrainNow, Spooler, spool_waiting
from memlite.drain import DrainReport, drain_spool
from memlite.errors import ActorDied, StorageError
from memlite.hooks import spool

LONG = "/tmp/" + "x" * 300 + "/proj"  # a component over 255 bytes: ENAMETOOLONG
NUL = "/tmp/a\x00b"
DENIED = "/srv/denied/proj"
DEAD = "/Volumes/dead-mount/proj"


@pytest.fixture(autouse=True)
def _fresh_project_caches():
    ingest._projects.clear()
    ingest._stuck.clear()
    yield
    ingest._projects.clear()
    ingest._stuck.clear()


@pytest.fixture
async def services(data_dir):
    async with running_services(data_dir) as found:
        yield found


@pytest.fixture
def unexaminable(monkeypatch):
    """Permission denied and a mount that never answers: this test runs as any user
    (root ignores permissions), so those two come from the filesystem call itself."""
    real = ingest.resolve_project
    release = threading.Event()

    def resolve(cwd):
        if cwd.startswith(DENIED):
            raise PermissionError(errno.EACCES, "Permission denied", cwd)
        if cwd.startswith(DEAD):
            release.wait(30)  # a stat on a dead NFS mount: blocked in the kernel
            raise OSError(errno.EIO, "Input/output error", cwd)
        return real(cwd)

    monkeypatch.setattr(ingest, "resolve_project", resolve)
    monkeypatch.setattr(ingest, "PROJECT_TIMEOUT", 0.3)
    yield
    release.set()


def spool_events(data_dir, cwds, start_ms=1_700_000_000_000, first=0):
    for i, cwd in enumerate(cwds, start=first):
        payload = fixture("PostToolUse.Bash", cwd=cwd, tool_use_id=f"toolu_{i}",
                          session_id=f"s{i}")
        spool.append(data_dir, "PostToolUse", payload, now_ms=start_ms + i)


async def test_events_whose_cwd_cannot_be_examined_are_stored(services, data_dir, unexaminable):
    cwds = [LONG, NUL, DENIED, DEAD, str(data_dir)]
    spool_events(data_dir, cwds)
    with trio.fail_after(20):
        report = await drain_spool(services)
    assert report == DrainReport(files=1, ingested=5)
    rows = query(data_dir, "SELECT id, project FROM sessions ORDER BY id")
    assert [project for _, project in rows] == [
        LONG, "/tmp/a\ufffdb", DENIED, DEAD, str(data_dir.resolve())]
    assert spool.quarantined(data_dir).count == 0
    assert not spool_waiting(data_dir)


async def test_a_dead_mount_is_not_examined_again_for_a_while(services, data_dir, unexaminable):
    spool_events(data_dir, [DEAD, DEAD + "/sub", DEAD])
    start = trio.current_time()
    await drain_spool(services)
    assert len(query(data_dir, "SELECT id FROM events")) == 3
    # Two distinct paths timed out once each; the third event found DEAD marked stuck.
    assert trio.current_time() - start < 2 * ingest.PROJECT_TIMEOUT + 5
    assert set(ingest._stuck) == {DEAD, DEAD + "/sub"}


async def test_an_internal_error_on_one_line_quarantines_it_and_the_rest_arrive(
        services, data_dir, monkeypatch):
    spool_events(data_dir, ["/tmp/a", "/tmp/b", "/tmp/c"])
    real = drain.ingest_hook_event

    async def buggy(services, payload, **kwargs):
        if payload["session_id"] == "s1":
            raise KeyError("a bug this payload triggers")
        return await real(services, payload, **kwargs)

    monkeypatch.setattr(drain, "ingest_hook_event", buggy)
    report = await drain_spool(services)
    assert report == DrainReport(files=1, ingested=2, rejected=1)
    assert query(data_dir, "SELECT session_id FROM events ORDER BY id") == [("s0",), ("s2",)]
    found = spool.quarantined(data_dir)
    assert found.count == 1
    assert found.latest[0]["reason"] == "internal error: KeyError: 'a bug this payload triggers'"
    assert found.latest[0]["event"] == "PostToolUse"
    assert not spool_waiting(data_dir)


async def test_a_line_the_database_keeps_failing_is_quarantined_after_three_drains(
        services, data_dir, monkeypatch):
    spool_events(data_dir, ["/tmp/a", "/tmp/b", "/tmp/c"])
    real = drain.ingest_hook_event

    async def poison(services, payload, **kwargs):
        if payload["session_id"] == "s0":
            raise StorageError("string or blob too big")
        return await real(services, payload, **kwargs)

    monkeypatch.setattr(drain, "ingest_hook_event", poison)
    first = await drain_spool(services)
    assert first == DrainReport(files=1, ingested=2, deferred=1)
    assert spool_waiting(data_dir)  # kept for the next drain
    second = await drain_spool(services)
    assert second == DrainReport(files=1, duplicates=2, deferred=1)
    third = await drain_spool(services)
    assert third == DrainReport(files=1, duplicates=2, rejected=1)
    (kept,) = spool.quarantined(data_dir).latest
    assert kept["reason"] == ("storing it failed 3 times while the database worked: "
                              "StorageError: string or blob too big")
    assert not spool_waiting(data_dir)
    assert not (data_dir / "spool" / drain.ATTEMPTS_FILE).exists()


async def test_a_database_outage_stops_the_drain_and_quarantines_nothing(
        services, data_dir, monkeypatch):
    spool_events(data_dir, ["/tmp/a", "/tmp/b", "/tmp/c"])

    async def down(services, payload, **kwargs):
        raise ActorDied("actor 'storage' is not running")

    monkeypatch.setattr(drain, "ingest_hook_event", down)
    for _ in range(5):
        assert await drain_spool(services) == DrainReport(files=1, complete=False)
    assert spool.quarantined(data_dir).count == 0
    monkeypatch.undo()
    assert await drain_spool(services) == DrainReport(files=1, ingested=3)


async def test_a_running_spooler_drains_what_is_spooled_later(services, data_dir):
    ready = trio.Event()

    async def on_ready():
        ready.set()

    async with spawn(Spooler(services, period=0.05, on_ready=on_ready).run) as ref:
        assert ready.is_set()
        spool_events(data_dir, ["/tmp/a"])  # the worker is up but the hook timed out
        with trio.fail_after(20):
            while query(data_dir, "SELECT count(*) FROM events") != [(1,)]:  # noqa: ASYNC110
                await trio.sleep(0.02)
        spool_events(data_dir, ["/tmp/b", "/tmp/c"], start_ms=1_800_000_000_000, first=1)
        await ref.ask(lambda reply: DrainNow(reply=reply), timeout=20)
    assert query(data_dir, "SELECT count(*) FROM events") == [(3,)]
    assert not spool_waiting(data_dir)


async def test_a_drain_that_raises_does_not_stop_the_spooler(services, data_dir):
    calls = []

    async def flaky(services):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("boom")
        return await drain_spool(services)

    spooler = Spooler(services, period=0.05, drain=flaky)
    async with spawn(spooler.run) as ref:
        await ref.ask(lambda reply: DrainNow(reply=reply), timeout=20)  # the one that raises
        spool_events(data_dir, ["/tmp/a"])
        with trio.fail_after(20):
            while spooler.statistics().ingested != 1:  # noqa: ASYNC110 - a periodic drain
                await trio.sleep(0.02)
    assert query(data_dir, "SELECT count(*) FROM events") == [(1,)]
    stats = spooler.statistics()
    assert stats.failed == 1 and stats.ingested == 1 and stats.drains >= 3


async def test_a_spooled_session_keeps_its_own_times(services, data_dir):
    names = ["SessionStart.startup", "UserPromptSubmit", "PostToolUse.Bash", "Stop",
             "SessionEnd.other"]
    for i, name in enumerate(names):
        payload = fixture(name)
        spool.append(data_dir, payload["hook_event_name"], payload,
                     now_ms=1_600_000_000_000 + i * 1000)
    await drain_spool(services)
    assert query(data_dir, "SELECT started_at_epoch, completed_at_epoch FROM sessions") == [
        (1_600_000_000_000, 1_600_000_004_000)]
    assert query(data_dir, "SELECT created_at_epoch FROM user_prompts") == [
        (1_600_000_001_000,)]
    assert [t for (t,) in query(data_dir, "SELECT created_at_epoch FROM events ORDER BY id")] \
        == [1_600_000_000_000 + i * 1000 for i in range(5)]


async def test_retry_puts_quarantined_events_back_and_the_next_drain_stores_them(
        services, data_dir, monkeypatch):
    spool_events(data_dir, ["/tmp/a", "/tmp/b"])
    (path,) = (data_dir / "spool").glob("*.jsonl")
    path.write_bytes(path.read_bytes() + b'{"v": 1, "event": "Stop", "pay')  # torn
    real = drain.ingest_hook_event

    async def old_bug(services, payload, **kwargs):
        if payload["session_id"] == "s1":
            raise KeyError("fixed in the next version")
        return await real(services, payload, **kwargs)

    monkeypatch.setattr(drain, "ingest_hook_event", old_bug)
    assert await drain_spool(services) == DrainReport(files=1, ingested=1, rejected=2)
    monkeypatch.undo()  # the upgrade
    assert spool.requeue(data_dir) == (1, 1)  # the torn line stays
    (kept,) = spool.quarantined(data_dir).latest
    assert kept["reason"].startswith("torn line")
    assert await drain_spool(services) == DrainReport(files=1, ingested=1)
    assert query(data_dir, "SELECT session_id, created_at_epoch FROM events ORDER BY id") == [
        ("s0", 1_700_000_000_000), ("s1", 1_700_000_000_001)]  # its own time, still
    assert spool.requeue(data_dir) == (0, 1)


def test_memlite_spool_status_and_retry(data_dir, capsys):
    import json

    from memlite.cli import main

    data_dir.mkdir(mode=0o700, parents=True)
    spool.append(data_dir, "Stop", {"session_id": "s", "hook_event_name": "Stop"}, now_ms=1)
    (claimed,) = spool.claim(data_dir)
    (record,) = spool.read_claimed(claimed)
    spool.reject(data_dir, record, "internal error: KeyError: 'x'", now_ms=5)
    spool.finish(claimed)
    assert main(["spool", "status", "--json"]) == 0
    state = json.loads(capsys.readouterr().out)
    assert (state["waiting"], state["quarantined"]) == (False, 1)
    assert state["latest"][0]["reason"] == "internal error: KeyError: 'x'"
    assert main(["spool", "retry"]) == 0
    assert capsys.readouterr().out.startswith("1 event(s) back in the spool")
    assert main(["spool", "status"]) == 0
    out = capsys.readouterr().out
    assert "spool: events wait to be drained" in out and "quarantined: 0" in out
    ((_, entries),) = list(spool.iter_spool(data_dir))
    assert [(e.event, e.payload, e.spooled_at) for e in entries] == [
        ("Stop", {"session_id": "s", "hook_event_name": "Stop"}, 1)]
