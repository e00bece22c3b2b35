"""The spool drain: every spooled event ingested exactly once, however often it runs or
wherever it was interrupted; bad lines kept in rejected.jsonl, never dropped."""

from __future__ import annotations

import json

import pytest
from worker_helpers import fixture, query, running_services

from memlite import drain
from memlite.drain import DrainReport, drain_spool
from memlite.errors import ActorDied
from memlite.hooks import spool

SID = "063ff789-6364-494f-89fe-b93ab95a9061"
SESSION = ["SessionStart.startup", "UserPromptSubmit", "PostToolUse.Bash", "PostToolUse.Read",
           "Stop", "SessionEnd.other"]


@pytest.fixture
async def services(data_dir):
    async with running_services(data_dir) as found:
        yield found


def spool_session(data_dir, names=SESSION, start_ms=1_700_000_000_000):
    for i, name in enumerate(names):
        payload = fixture(name)
        spool.append(data_dir, payload["hook_event_name"], payload, now_ms=start_ms + i)


def stored(data_dir):
    return query(data_dir, "SELECT event_name, created_at_epoch FROM events ORDER BY id")


def spool_files(data_dir):
    return sorted(p.name for p in (data_dir / "spool").iterdir())


def rejected(data_dir):
    path = data_dir / "spool" / spool.REJECTED_FILE
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def test_drain_ingests_then_removes(services, data_dir):
    spool_session(data_dir)
    report = await drain_spool(services)
    assert report == DrainReport(files=1, ingested=6, duplicates=0, rejected=0, complete=True)
    assert stored(data_dir) == [
        ("SessionStart", 1_700_000_000_000), ("UserPromptSubmit", 1_700_000_000_001),
        ("PostToolUse", 1_700_000_000_002), ("PostToolUse", 1_700_000_000_003),
        ("Stop", 1_700_000_000_004), ("SessionEnd", 1_700_000_000_005)]
    assert query(data_dir, "SELECT status FROM sessions") == [("completed",)]
    assert spool_files(data_dir) == []


async def test_nothing_spooled(services, data_dir):
    assert await drain_spool(services) == DrainReport()


async def test_drain_twice_stores_each_event_once(services, data_dir):
    spool_session(data_dir)
    await drain_spool(services)
    spool_session(data_dir)  # the same events spooled again (a hook retried)
    report = await drain_spool(services)
    assert (report.ingested, report.duplicates) == (0, 6)
    assert len(stored(data_dir)) == 6


async def test_a_drain_interrupted_midway_then_run_again(services, data_dir, monkeypatch):
    spool_session(data_dir)
    real = drain.ingest_hook_event
    calls = []

    async def dies_after_three(*args, **kwargs):
        calls.append(1)
        if len(calls) > 3:
            raise ActorDied("actor 'storage' is not running")
        return await real(*args, **kwargs)

    monkeypatch.setattr(drain, "ingest_hook_event", dies_after_three)
    report = await drain_spool(services)
    assert report == DrainReport(files=1, ingested=3, complete=False)
    assert [name.endswith(".draining") for name in spool_files(data_dir)] == [True]
    monkeypatch.setattr(drain, "ingest_hook_event", real)
    report = await drain_spool(services)
    assert report == DrainReport(files=1, ingested=3, duplicates=3)
    assert [e for e, _ in stored(data_dir)] == ["SessionStart", "UserPromptSubmit", "PostToolUse",
                                                "PostToolUse", "Stop", "SessionEnd"]
    assert spool_files(data_dir) == []


async def test_a_crash_after_ingesting_but_before_removing(services, data_dir, monkeypatch):
    spool_session(data_dir)
    monkeypatch.setattr(spool, "finish", lambda path: None)  # the process died right here
    await drain_spool(services)
    monkeypatch.undo()
    spool.append(data_dir, "Stop", fixture("Stop", last_assistant_message="a later turn"),
                 now_ms=1_800_000_000_000)  # and a new one meanwhile
    report = await drain_spool(services)
    assert report == DrainReport(files=2, ingested=1, duplicates=6)
    assert len(stored(data_dir)) == 7
    assert spool_files(data_dir) == []


async def test_a_torn_line_is_kept_and_the_rest_ingested(services, data_dir):
    spool_session(data_dir, SESSION[:2])
    (path,) = (data_dir / "spool").iterdir()
    path.write_bytes(path.read_bytes() + b'{"v": 1, "event": "PostToolUse", "payl')  # torn
    report = await drain_spool(services)
    assert report == DrainReport(files=1, ingested=2, rejected=1)
    (kept,) = rejected(data_dir)
    assert kept["reason"].startswith("torn line") and kept["line"] == 3
    assert kept["raw"] == '{"v": 1, "event": "PostToolUse", "payl'
    assert spool_files(data_dir) == [spool.REJECTED_FILE]


async def test_lines_that_fail_validation_are_kept_with_the_reason(services, data_dir):
    spool.append(data_dir, "PreToolUse", fixture("PreToolUse.Bash"), now_ms=1)
    spool.append(data_dir, "Stop", {"hook_event_name": "Stop", "session_id": 42}, now_ms=2)
    spool.append(data_dir, "Stop", fixture("Stop"), now_ms=3)
    spool.append(data_dir, "Stop", fixture("Stop", x=float("nan")), now_ms=4)  # was a poison pill
    report = await drain_spool(services)
    assert report == DrainReport(files=1, ingested=2, rejected=2)
    reasons = [r["reason"] for r in rejected(data_dir)]
    assert reasons[0].startswith("InputError: unknown hook event 'PreToolUse'")
    assert reasons[1] == "InputError: field 'session_id' must be a string, not a number"
    assert json.loads(rejected(data_dir)[0]["raw"])["payload"] == fixture("PreToolUse.Bash")
    assert stored(data_dir) == [("Stop", 3), ("Stop", 4)]
    assert query(data_dir, "SELECT json_extract(payload, '$.x') FROM events WHERE "
                 "created_at_epoch = 4") == [("NaN",)]


async def test_a_spooled_stop_of_an_unknown_session_is_stored(services, data_dir):
    spool_session(data_dir, ["Stop"])
    assert (await drain_spool(services)).ingested == 1
    assert query(data_dir, "SELECT id, status FROM sessions") == [(SID, "active")]


async def test_lines_are_ingested_oldest_first_across_files(services, data_dir, monkeypatch):
    """Each hook is its own process, so one session's prompts land in several files."""
    for i, (pid, at) in enumerate([(300, 30), (100, 10), (200, 20)]):
        monkeypatch.setattr(spool.os, "getpid", lambda pid=pid: pid)
        spool.append(data_dir, "UserPromptSubmit",
                     fixture("UserPromptSubmit", prompt=f"typed at {at}", prompt_id=str(i)),
                     now_ms=at)
    monkeypatch.undo()
    await drain_spool(services)
    assert query(data_dir, "SELECT prompt_number, prompt_text FROM user_prompts ORDER BY 1") == [
        (1, "typed at 10"), (2, "typed at 20"), (3, "typed at 30")]
