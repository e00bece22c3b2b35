"""A batch runs without savepoints until a message fails, then again with one per message."""

from __future__ import annotations

import apsw
import pytest
import trio
import trio.testing

from memlite import storage
from memlite.actors import storage as storage_actor
from memlite.actors.core import spawn
from memlite.actors.storage import (
    CompleteSession,
    StartSession,
    StorageActor,
    StoreEvent,
    StorePrompt,
    StoreSummary,
    open_reader,
)
from memlite.errors import StorageError
from memlite.storage import InsertResult, NewSummary


@pytest.fixture
def autojump_clock():
    """Real-speed time: these tests wait on SQLite work in a worker thread."""
    return trio.testing.MockClock(rate=1.0)


def enqueue(ref, makers):
    receivers = []
    for make in makers:
        send, receive = trio.open_memory_channel(1)
        ref.send_nowait(make(send))
        receivers.append(receive)
    return receivers


async def answers(receivers):
    return [await receive.receive() for receive in receivers]


def event(i: int, reply=None, session_id: str = "s1") -> StoreEvent:
    return StoreEvent(session_id=session_id, event_name="PostToolUse", tool_name="Bash",
                      tool_use_id=f"toolu_{i}", payload={"i": i}, reply=reply)


def bad_summary(reply=None) -> StoreSummary:
    return StoreSummary(summary=NewSummary(session_id="doomed", project=None), reply=reply)


async def test_a_failure_reruns_the_batch_in_order_with_savepoints(data_dir, monkeypatch):
    runs: list[int] = []
    apply_each = storage_actor._apply_each

    def counting_apply_each(conn, batch):
        runs.append(len(batch))
        return apply_each(conn, batch)

    monkeypatch.setattr(storage_actor, "_apply_each", counting_apply_each)
    actor = StorageActor(data_dir)
    async with spawn(actor.run) as ref, open_reader(data_dir) as reader:
        outcomes = await answers(enqueue(ref, [
            lambda r: StartSession(session_id="s1", project="/repo", reply=r),
            lambda r: event(1, r),
            bad_summary,
            lambda r: StorePrompt(session_id="s1", prompt_text="hi", reply=r),
            lambda r: event(1, r),  # the same event again: answered with the first row
            lambda r: CompleteSession(session_id="s1", reply=r),
        ]))
        session, first, bad, prompt, again, completed = outcomes
        assert session.project == "/repo"
        assert first.created and prompt.created and completed is True
        assert again == InsertResult(first.id, created=False)
        assert isinstance(bad, StorageError) and isinstance(bad.__cause__, apsw.ConstraintError)
        stored = await reader.async_run(storage.get_session, reader, "s1")
        assert stored.status == "completed" and stored.prompt_count == 1
        assert await reader.async_run(storage.count_events, reader) == 1
        assert await reader.async_run(storage.get_session, reader, "doomed") is None
    assert runs == [6]  # one rerun, of the whole batch
    assert actor.statistics().batches == 1 and actor.statistics().failed == 1


async def test_a_batch_without_failures_runs_once_without_savepoints(data_dir, monkeypatch):
    def no_rerun(conn, batch):
        raise AssertionError("rerun without a failure")

    monkeypatch.setattr(storage_actor, "_apply_each", no_rerun)
    async with spawn(StorageActor(data_dir).run) as ref:
        results = await answers(enqueue(ref, [lambda r, i=i: event(i, r) for i in range(20)]))
    assert all(r.created for r in results)
