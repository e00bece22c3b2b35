"""The storage actor: group commit, answers only after commit, failures kept apart."""

from __future__ import annotations

import logging
import threading

import apsw
import pytest
import trio
import trio.testing

from memlite import storage
from memlite.actors import storage as storage_actor
from memlite.actors.core import spawn
from memlite.actors.storage import (
    DeleteSession,
    EnsureVectorTable,
    StartSession,
    Stop,
    StorageActor,
    StoreEvent,
    StoreObservation,
    StorePrompt,
    StoreSummary,
    StoreVectors,
    open_reader,
)
from memlite.errors import ActorDied, MailboxFull, NotADatabaseError, StorageError
from memlite.storage import InsertResult, NewObservation, NewSummary


@pytest.fixture
def autojump_clock():
    """Real-speed time for this module, whatever the package's conftest asks for.

    These tests wait on real SQLite work in worker threads; an autojump clock would jump
    over that work and fire the asks' timeouts (STYLE.md #22). Nothing here is timed.
    """
    return trio.testing.MockClock(rate=1.0)


@pytest.fixture(autouse=True)
def no_leaked_db_threads():
    yield
    leaked = [t.name for t in threading.enumerate() if t.name.startswith("memlite-db-")]
    assert not leaked, f"database connections left open: {leaked}"


def store_event(i: int, reply=None, session_id: str = "s1") -> StoreEvent:
    return StoreEvent(session_id=session_id, event_name="PostToolUse", tool_name="Bash",
                      tool_use_id=f"toolu_{i}", payload={"i": i}, reply=reply)


def bad_summary(reply=None) -> StoreSummary:
    # project NULL violates NOT NULL: fails inside SQLite, after its stub session was made.
    return StoreSummary(summary=NewSummary(session_id="doomed", project=None), reply=reply)


def enqueue(ref, messages_from_replies):
    """send_nowait every message before yielding, so they all land in one batch."""
    receivers = []
    for make in messages_from_replies:
        send, receive = trio.open_memory_channel(1)
        ref.send_nowait(make(send))
        receivers.append(receive)
    return receivers


async def answers(receivers):
    return [await receive.receive() for receive in receivers]


async def test_write_a_session_and_read_it_back(data_dir):
    async with spawn(StorageActor(data_dir).run) as ref, open_reader(data_dir) as reader:
        session = await ref.ask(
            lambda r: StartSession(session_id="s1", project="/repo/a", project_name="a",
                                   reply=r), timeout=5)
        assert session.status == "active"
        first = await ref.ask(lambda r: store_event(1, r), timeout=5)
        again = await ref.ask(lambda r: store_event(1, r), timeout=5)
        assert first == InsertResult(first.id, created=True)
        assert again == InsertResult(first.id, created=False)
        prompt = await ref.ask(lambda r: StorePrompt(session_id="s1", prompt_text="hi", reply=r),
                               timeout=5)
        obs = await ref.ask(lambda r: StoreObservation(observation=NewObservation(
            session_id="s1", project="/repo/a", type="discovery", title="Found the bug",
            source_event_ids=[first.id]), reply=r), timeout=5)
        assert prompt.created and obs.created
        stored = await reader.async_run(storage.get_observation, reader, obs.id)
        assert stored.title == "Found the bug"
        assert (await reader.async_run(storage.get_event, reader, first.id)).status == "done"
        hits = await reader.async_run(storage.search_observations, reader, "bug")
        assert [h.item.id for h in hits] == [obs.id]


async def test_concurrent_senders_are_answered_only_after_commit(data_dir):
    actor = StorageActor(data_dir)
    seen: list[int] = []
    async with spawn(actor.run) as ref, open_reader(data_dir) as reader:

        async def sender(i: int) -> None:
            result = await ref.ask(lambda r: store_event(i, r), timeout=5)
            # The answer means committed: a separate connection must already see the row.
            event = await reader.async_run(storage.get_event, reader, result.id)
            assert event is not None and event.tool_use_id == f"toolu_{i}"
            seen.append(i)

        async with trio.open_nursery() as nursery:
            for i in range(200):
                nursery.start_soon(sender, i)
        assert sorted(seen) == list(range(200))
        assert await reader.async_run(storage.count_events, reader) == 200
    stats = actor.statistics()
    assert stats.messages == 200 and stats.failed == 0
    assert stats.batches < 200 and stats.largest_batch > 1  # they were grouped


async def test_queued_messages_commit_as_one_batch(data_dir):
    actor = StorageActor(data_dir)
    async with spawn(actor.run) as ref:
        results = await answers(enqueue(ref, [lambda r, i=i: store_event(i, r) for i in range(50)]))
    assert all(r.created for r in results)
    assert actor.statistics().batches == 1 and actor.statistics().largest_batch == 50


async def test_one_failing_message_does_not_sink_its_batch(data_dir):
    actor = StorageActor(data_dir)
    async with spawn(actor.run) as ref, open_reader(data_dir) as reader:
        good1, bad, good2 = await answers(enqueue(ref, [
            lambda r: store_event(1, r), bad_summary, lambda r: store_event(2, r),
        ]))
        assert good1.created and good2.created
        assert isinstance(bad, StorageError) and "StoreSummary failed" in str(bad)
        assert isinstance(bad.__cause__, apsw.ConstraintError)
        assert await reader.async_run(storage.count_events, reader) == 2
        # The failed message's own work (its stub session) was rolled back with it.
        assert await reader.async_run(storage.get_session, reader, "doomed") is None
    assert actor.statistics().batches == 1 and actor.statistics().failed == 1


async def test_a_failed_ask_raises_the_storage_error(data_dir):
    async with spawn(StorageActor(data_dir).run) as ref:
        with pytest.raises(StorageError, match="StoreSummary failed"):
            await ref.ask(bad_summary, timeout=5)
        assert (await ref.ask(lambda r: store_event(1, r), timeout=5)).created  # still alive


async def test_fire_and_forget_messages_commit_and_failures_are_logged(data_dir, caplog):
    async with spawn(StorageActor(data_dir).run) as ref, open_reader(data_dir) as reader:
        await ref.send(store_event(1))
        await ref.send(bad_summary())
        await ref.ask(lambda r: Stop(reply=r), timeout=5)  # after the two above
        assert await reader.async_run(storage.count_events, reader) == 1
    assert any("StoreSummary failed (no one asked)" in rec.getMessage()
               for rec in caplog.records if rec.levelno == logging.WARNING)


async def test_ask_after_stop_is_actor_died(data_dir):
    async with spawn(StorageActor(data_dir).run) as ref:
        assert await ref.ask(lambda r: Stop(reply=r), timeout=5) is None
        with pytest.raises(ActorDied):
            await ref.ask(lambda r: store_event(1, r), timeout=5)


async def test_messages_queued_behind_stop_are_refused_not_lost_silently(data_dir):
    async with spawn(StorageActor(data_dir, max_batch=1).run) as ref:
        stopped, queued = enqueue(ref, [lambda r: Stop(reply=r), lambda r: store_event(1, r)])
        assert await stopped.receive() is None
        with pytest.raises(trio.EndOfChannel):  # the asker's ActorDied
            await queued.receive()


async def test_cancel_finishes_the_batch_in_hand(data_dir):
    with trio.CancelScope() as scope:
        async with spawn(StorageActor(data_dir).run) as ref:
            receivers = enqueue(ref, [lambda r, i=i: store_event(i, r) for i in range(3)])
            scope.cancel()
    results = [receive.receive_nowait() for receive in receivers]
    assert all(isinstance(r, InsertResult) and r.created for r in results)
    async with open_reader(data_dir) as reader:
        assert await reader.async_run(storage.count_events, reader) == 3


async def test_bounded_mailbox(data_dir):
    async with spawn(StorageActor(data_dir, mailbox_size=2).run) as ref:
        with pytest.raises(MailboxFull):
            for i in range(4):  # one handed straight to the actor, two queued, then full
                ref.send_nowait(store_event(i))


async def test_busy_database_fails_the_batch_and_the_actor_goes_on(data_dir, monkeypatch):
    monkeypatch.setattr("memlite.storage.db.BUSY_TIMEOUT_MS", 20)
    async with spawn(StorageActor(data_dir).run) as ref:
        intruder = apsw.Connection(str(data_dir / "memlite.db"))  # another process's lock
        intruder.execute("BEGIN IMMEDIATE")
        try:
            with pytest.raises(StorageError, match="not committed"):
                await ref.ask(lambda r: store_event(1, r), timeout=5)
        finally:
            intruder.execute("ROLLBACK")
            intruder.close()
        assert (await ref.ask(lambda r: store_event(1, r), timeout=5)).created


async def test_a_broken_database_answers_everyone_then_stops_the_actor(data_dir, monkeypatch):
    def disk_gone(conn, batch):
        raise apsw.IOError("disk I/O error")

    monkeypatch.setattr(storage_actor, "commit_batch", disk_gone)
    with pytest.raises(apsw.IOError):
        async with spawn(StorageActor(data_dir).run) as ref:
            with pytest.raises(StorageError, match="disk I/O error"):
                await ref.ask(lambda r: store_event(1, r), timeout=5)
            await trio.sleep_forever()  # the actor's crash ends the block


@pytest.mark.parametrize("fault", ["deleted", "replaced"])
async def test_a_database_file_deleted_or_replaced_is_never_written_again(data_dir, fault):
    """SQLite would go on writing into the deleted file through its open descriptor, and
    every write acked there would vanish at the next start: the batch is refused instead
    (its senders keep their events) and the actor stops so its supervisor reopens."""
    from memlite.actors.storage import FileGone
    from memlite.storage.db import db_path

    with pytest.raises(FileGone, match=fault):
        async with spawn(StorageActor(data_dir).run) as ref:
            await ref.ask(lambda r: store_event(1, r), timeout=5)
            path = db_path(data_dir)
            for suffix in ("", "-wal", "-shm"):
                path.with_name(path.name + suffix).unlink(missing_ok=True)
            if fault == "replaced":
                path.write_bytes(b"")
            with pytest.raises(StorageError, match="write not committed"):
                await ref.ask(lambda r: store_event(2, r), timeout=5)
            await trio.sleep_forever()  # the actor's failure ends the block


async def test_opening_errors_come_out_of_spawn(data_dir):
    data_dir.mkdir()
    (data_dir / "memlite.db").write_bytes(b"not sqlite at all")
    with pytest.raises(NotADatabaseError):
        async with spawn(StorageActor(data_dir).run):
            pass  # pragma: no cover


async def test_vectors_and_deletes_through_the_actor(data_dir):
    async with spawn(StorageActor(data_dir).run) as ref, open_reader(data_dir) as reader:
        assert await ref.ask(lambda r: EnsureVectorTable(dim=3, model="m", reply=r), timeout=5)
        obs = await ref.ask(lambda r: StoreObservation(observation=NewObservation(
            session_id="s1", project="/p", type="t", title="x"), reply=r), timeout=5)
        stored = await ref.ask(
            lambda r: StoreVectors(vectors=[(obs.id, "/p", [1.0, 0.0, 0.0])], reply=r), timeout=5)
        assert stored == 1
        hits = await reader.async_run(
            storage.nearest_observations, reader, [1.0, 0.0, 0.0], project="/p")
        assert [h.observation_id for h in hits] == [obs.id]
        assert await ref.ask(lambda r: DeleteSession(session_id="s1", actor="user", reply=r),
                             timeout=5)
        assert await reader.async_run(storage.table_counts, reader) == {
            "sessions": 0, "user_prompts": 0, "events": 0, "observations": 0, "summaries": 0,
            "audit_log": 1}


async def test_exports_are_sorted():
    assert storage_actor.__all__ == sorted(storage_actor.__all__)
    assert all(hasattr(storage_actor, name) for name in storage_actor.__all__)
