"""The storage actor: the only writer of ``memlite.db``, committing in groups.

Every write in memlite is a message to this actor. It takes one message, then everything
already queued behind it, and runs the whole batch in one thread hop and one transaction
(group commit): 64 concurrent hooks cost one fsync-free WAL commit, not 64. Each sender
is answered only after the commit, so a reply means "durably in the database".

Reads do not go through the actor: ``open_reader`` gives a separate query-only connection
that WAL lets read while the actor writes.

Usage::

    async with spawn(StorageActor(data_dir).run) as storage:
        result = await storage.ask(
            lambda reply: StoreEvent(session_id=sid, event_name="Stop", payload={}, reply=reply),
            timeout=5,
        )
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, assert_never

import apsw
import attrs
import trio

from memlite.actors.core import ActorRef, Mailbox, lone_error
from memlite.actors.graces import STORAGE_OVERRUN
from memlite.actors.storage_messages import (
    CompleteSession,
    DeleteObservation,
    DeleteSession,
    DeleteSummary,
    EnsureVectorTable,
    Inbox,
    PruneEvents,
    RecordAudit,
    RequeueProcessingEvents,
    SetEventStatus,
    SetObserverHealth,
    SetSdkSessionId,
    StartSession,
    Stop,
    StoreEvent,
    StoreHookEvent,
    StoreObservation,
    StoreObservations,
    StorePrompt,
    StoreSummary,
    StoreVectors,
)
from memlite.errors import MemliteError, StorageError
from memlite.storage import capture, observing, relink, vectors, writes
from memlite.storage.db import WalCheckpointer, db_path, open_reader, open_writer

__all__ = [
    "CompleteSession",
    "DeleteObservation",
    "DeleteSession",
    "DeleteSummary",
    "EnsureVectorTable",
    "Inbox",
    "PruneEvents",
    "RecordAudit",
    "RequeueProcessingEvents",
    "SetEventStatus",
    "SetObserverHealth",
    "SetSdkSessionId",
    "Stop",
    "StorageActor",
    "StorageStatistics",
    "StoreHookEvent",
    "StoreObservation",
    "StoreObservations",
    "StorePrompt",
    "StoreSummary",
    "StoreVectors",
    "open_reader",
]

log = logging.getLogger(__name__)

async def _set_when_cancelled(flag: threading.Event) -> None:
    try:
        await trio.sleep_forever()
    finally:
        flag.set()


def _apply(conn: apsw.Connection, msg: Inbox) -> Any:
    """Do one message's work on the writer connection (in its thread)."""
    match msg:
        case StoreEvent(session_id=session_id, event_name=event_name, payload=payload):
            # First: hook events are nearly all of the traffic.
            return writes.insert_event(
                conn, session_id=session_id, event_name=event_name, payload=payload,
                tool_name=msg.tool_name, tool_use_id=msg.tool_use_id, at_ms=msg.at_ms,
            )
        case StartSession(session_id=session_id):
            return writes.start_session(
                conn, session_id=session_id, project=msg.project, project_name=msg.project_name,
                cwd=msg.cwd, branch=msg.branch, commit_sha=msg.commit_sha, source=msg.source,
                transcript_path=msg.transcript_path, at_ms=msg.at_ms,
            )
        case CompleteSession(session_id=session_id, at_ms=at_ms):
            return writes.complete_session(conn, session_id, at_ms=at_ms)
        case SetSdkSessionId(session_id=session_id, sdk_session_id=sdk_session_id):
            return writes.set_sdk_session_id(conn, session_id, sdk_session_id)
        case StorePrompt(session_id=session_id, prompt_text=text, prompt_number=number):
            return writes.insert_prompt(
                conn, session_id=session_id, prompt_text=text, prompt_number=number,
                at_ms=msg.at_ms,
            )
        case SetEventStatus(event_ids=event_ids, status=status):
            return writes.set_event_status(conn, event_ids, status)
        case RequeueProcessingEvents():
            return writes.requeue_processing_events(conn)
        case StoreObservation(observation=observation):
            return writes.insert_observation(conn, observation)
        case StoreObservations(observations=observations, mark_done=mark_done):
            return observing.store_observations(conn, observations, mark_done=mark_done)
        case PruneEvents(older_than_ms=older_than_ms):
            return observing.prune_events(conn, older_than_ms=older_than_ms)
        case SetObserverHealth(session_id=session_id, failures=failures, error=error):
            return observing.set_observer_health(conn, session_id, failures, error)
        case StoreSummary(summary=summary, done_event_ids=done):
            return writes.insert_summary(conn, summary, done_event_ids=done)
        case RecordAudit(actor=actor, action=action, target=target, detail=detail):
            return writes.record_audit(conn, actor=actor, action=action, target=target,
                                       detail=detail)
        case DeleteObservation(observation_id=observation_id, actor=actor):
            return writes.delete_observation(conn, observation_id, actor=actor)
        case DeleteSummary(summary_id=summary_id, actor=actor):
            return writes.delete_summary(conn, summary_id, actor=actor)
        case DeleteSession(session_id=session_id, actor=actor):
            return writes.delete_session(conn, session_id, actor=actor)
        case EnsureVectorTable(dim=dim, model=model, recreate=recreate):
            return vectors.ensure_vector_table(conn, dim, model, recreate=recreate)
        case StoreVectors(vectors=rows):
            return vectors.upsert_vectors(conn, rows)
        case StoreHookEvent():
            fields = attrs.asdict(msg, recurse=False)
            del fields["reply"]
            return capture.record_hook_event(conn, **fields)
        case Stop():
            return None
        case _:
            assert_never(msg)


def _failure(msg: Inbox, exc: Exception) -> MemliteError:
    if isinstance(exc, MemliteError):
        return exc
    error = StorageError(f"{type(msg).__name__} failed: {exc}")
    error.__cause__ = exc
    return error


def commit_batch(conn: apsw.Connection, batch: Sequence[Inbox]) -> list[Any]:
    """Run ``batch`` in one ``BEGIN IMMEDIATE`` transaction, as if a savepoint per message.

    A message that raises has only its own work undone; its outcome is the error and the
    others still commit. Returns one outcome (answer or error) per message.

    Nearly every batch has no failure, so it first runs without savepoints (they cost a
    statement pair and a page copy per message). If a message raises, that attempt is
    rolled back and the batch is run again with a savepoint around each message.

    Raises:
        apsw.Error: the transaction as a whole failed (lock, disk full, I/O, or SQLite
            rolled it back itself); nothing of the batch was committed.
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        try:
            outcomes = [_apply(conn, msg) for msg in batch]
        except Exception:
            if not conn.in_transaction:
                raise  # SQLite abandoned the transaction: the earlier work is gone too
            conn.execute("ROLLBACK")
            conn.execute("BEGIN IMMEDIATE")
            outcomes = _apply_each(conn, batch)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return outcomes


class FileGone(StorageError):
    """The database file was deleted or replaced under the worker (a stat per batch)."""


@attrs.frozen
class FileIdentity:
    """Which file the writer opened: its device and inode. SQLite keeps writing into a
    deleted file through its open descriptor, and everything committed there would be lost
    at the next start; so each batch first checks the path still names the same file."""

    path: Path
    device: int
    inode: int

    @classmethod
    def of(cls, path: Path) -> FileIdentity:
        found = path.stat()
        return cls(path, found.st_dev, found.st_ino)

    def check(self) -> None:
        try:
            found = self.path.stat()
        except FileNotFoundError:
            raise FileGone(f"{self.path} was deleted while the worker ran; nothing more is "
                           "written to the deleted file (the worker reopens a new one)"
                           ) from None
        if (found.st_dev, found.st_ino) != (self.device, self.inode):
            raise FileGone(f"{self.path} was replaced by another file while the worker ran; "
                           "the worker reopens it")


def _write(
    conn: apsw.Connection, batch: Sequence[Inbox], checkpointer: WalCheckpointer,
    identity: FileIdentity | None = None,
) -> list[Any]:
    """Commit the batch, then let the checkpointer see the WAL (the writer's thread)."""
    if identity is not None:
        identity.check()
    outcomes = commit_batch(conn, batch)
    checkpointer.after_commit(conn)
    return outcomes


def _apply_each(conn: apsw.Connection, batch: Sequence[Inbox]) -> list[Any]:
    """Apply each message in its own savepoint, inside the caller's transaction."""
    outcomes: list[Any] = []
    for msg in batch:
        try:
            with conn:  # a savepoint, since a transaction is open
                outcomes.append(_apply(conn, msg))
        except Exception as exc:
            if not conn.in_transaction:
                raise  # SQLite abandoned the transaction: the earlier work is gone too
            outcomes.append(_failure(msg, exc))
    return outcomes


@attrs.frozen(kw_only=True)
class StorageStatistics:
    """Counters since start: batches committed, messages handled, failed messages."""

    batches: int
    messages: int
    failed: int
    largest_batch: int


# Errors after which the connection is still sound: answer everyone, keep going.
_TRANSIENT = (apsw.BusyError, apsw.FullError)


class StorageActor:
    """Owns the writer connection; group-commits every write in memlite.

    Mailbox:
        ``mailbox_size`` (default 256) messages of the ``Inbox`` types above. A full
        mailbox makes ``send`` wait: that wait is the backpressure on hooks. Every
        message may carry a ``reply`` channel; it is answered after the commit.
    Lifecycle:
        ``run`` opens ``memlite.db`` (checks, WAL, migrations) before reporting its ref,
        so a started actor has a current schema. It then loops: receive one message,
        drain up to ``max_batch`` queued ones, commit them in one ``async_run``, answer.
        WAL checkpoints run in a thread of their own (``WalCheckpointer``), not in the
        commits that senders wait for. A supersession replay scheduled by a migration
        (``memlite.storage.relink``) runs beside the loop, in a thread on a writer
        connection of its own, in chunks of at most ``relink.CHUNK_SECONDS`` holding the
        write lock (a batch waits at most that long for it); stopping the actor stops it
        after the observation in hand, its progress committed.
        A ``Stop`` message, a closed mailbox or cancellation ends it after the batch in
        hand; queued messages are dropped (their asks raise ``ActorDied``) and the
        connection is closed (``PRAGMA optimize`` first).
    Failure:
        Opening errors (``DataDirError``, ``NotADatabaseError``, ``SchemaTooNewError``,
        ``MigrationError``) propagate out of ``run`` before it starts. A message that
        fails (constraint, bad JSON) gets its error as a ``StorageError`` answer; the
        rest of its batch commits. A batch that fails as a whole answers every sender
        with a ``StorageError``: after a busy or disk-full error the actor goes on; any
        other error (I/O, corruption, a bug) also ends the actor so its supervisor
        reopens the database. So does a database file deleted or replaced under it
        (``FileIdentity``, checked before each batch): the batch is refused, so its
        senders (hooks) keep the events, rather than acked into a file nobody will read.
    Timeouts:
        Each batch runs shielded from outside cancellation (it is milliseconds of work
        and must not be left half-answered) under ``batch_timeout`` (default 30 s); past
        it the query is interrupted, rolled back and the actor fails with
        ``trio.TooSlowError``. Once the actor is cancelled (its stop grace ran out), the
        batch in progress gets ``STORAGE_OVERRUN`` (0.1 s) more, then is cut the same way
        (see ``memlite.actors.graces``). SQLite itself waits at most ``busy_timeout`` (5 s) for a
        lock held by another process.

    Args:
        location: the data directory (or a ``*.db`` path).
        mailbox_size: capacity of the bounded mailbox.
        max_batch: most messages committed in one transaction.
        batch_timeout: seconds one batch may take before the actor fails.
        synchronous: ``"NORMAL"`` (a reply survives a memlite crash) or ``"FULL"`` (it
            also survives power loss; one fsync per batch).
    """

    def __init__(
        self,
        location: Path | str,
        *,
        mailbox_size: int = 256,
        max_batch: int = 256,
        batch_timeout: float = 30.0,
        synchronous: str = "NORMAL",
    ) -> None:
        self.location = location
        self.synchronous = synchronous
        self.mailbox_size = mailbox_size
        self.max_batch = max_batch
        self.batch_timeout = batch_timeout
        self._batches = self._messages = self._failed = self._largest = 0
        self._identity: FileIdentity | None = None
        self._batch_scope: trio.CancelScope | None = None
        self._cut_by = math.inf  # set once cancelled: the batch shield ends by then

    def statistics(self) -> StorageStatistics:
        return StorageStatistics(
            batches=self._batches, messages=self._messages, failed=self._failed,
            largest_batch=self._largest,
        )

    async def run(
        self, *, task_status: trio.TaskStatus[ActorRef] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Open the database, report the ref, then serve batches until stopped."""
        self._cut_by, self._batch_scope = math.inf, None  # a restart starts uncut
        async with open_writer(self.location, synchronous=self.synchronous) as conn:
            try:
                self._identity = FileIdentity.of(db_path(self.location))
            except OSError:
                self._identity = None  # not a file we can stat: nothing to watch
            checkpointer = WalCheckpointer(self.location)
            try:
                await conn.async_run(checkpointer.install, conn)  # type: ignore[attr-defined]
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._cut_batch_on_cancel, name="storage:stop-watch")
                    with Mailbox("storage", size=self.mailbox_size) as mailbox:
                        task_status.started(mailbox.ref)
                        nursery.start_soon(self._relink, conn, name="storage:relink")
                        async for first in mailbox:
                            batch = [first,
                                     *mailbox.receive_nowait_batch(self.max_batch - 1)]
                            await self._commit(conn, batch, checkpointer)
                            if any(isinstance(msg, Stop) for msg in batch):
                                log.info("storage actor stopping on request")
                                break
                    nursery.cancel_scope.cancel(reason="the storage actor's loop ended")
            except BaseExceptionGroup as group:  # the watcher never fails: the loop's error
                lone = lone_error(group)
                if lone is group:
                    raise
                raise lone from lone.__cause__
            finally:
                await checkpointer.aclose()  # first, so the writer closes last

    async def _relink(self, conn: apsw.Connection) -> None:
        """Run a scheduled supersession replay beside the loop (see Lifecycle); it never
        fails the actor (``relink.resume`` logs its own errors and retries at the next
        start). Cancelled, it sets the thread's stop flag and waits for it to return.
        Nothing scheduled (every start but the first after an upgrade): one ``meta`` read
        on the actor's connection, no second connection opened."""
        if await conn.async_run(relink.pending, conn) is None:  # type: ignore[attr-defined]
            return
        stop = threading.Event()
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_set_when_cancelled, stop)
            try:
                await trio.to_thread.run_sync(relink.replay_in_thread, self.location, stop)
            except Exception:
                log.exception("supersession replay could not start; retried at the next start")
            nursery.cancel_scope.cancel()

    async def _cut_batch_on_cancel(self) -> None:
        """Give the shielded batch in progress ``STORAGE_OVERRUN`` more once this actor is
        cancelled (its stop grace ran out, or the worker's cap): the shield must not hold
        the worker for ``batch_timeout``."""
        try:
            await trio.sleep_forever()
        finally:
            self._cut_by = trio.current_time() + STORAGE_OVERRUN
            if self._batch_scope is not None:
                self._batch_scope.deadline = min(self._batch_scope.deadline, self._cut_by)

    async def _commit(
        self, conn: apsw.Connection, batch: list[Inbox], checkpointer: WalCheckpointer
    ) -> None:
        try:
            # Shielded from outside cancellation, but not from its own deadline (one scope
            # instead of two: this runs once per batch, for a single sender once per event).
            deadline = min(trio.current_time() + self.batch_timeout, self._cut_by)
            with trio.CancelScope(shield=True, deadline=deadline) as scope:
                self._batch_scope = scope
                try:
                    outcomes = await conn.async_run(_write, conn, batch, checkpointer,  # type: ignore[attr-defined]
                                                    self._identity)
                finally:
                    self._batch_scope = None
            if scope.cancelled_caught:
                if self._cut_by != math.inf:
                    raise trio.TooSlowError("storage batch cut: the worker is stopping "
                                            "(not committed; hooks keep the events)")
                raise trio.TooSlowError(f"storage batch took over {self.batch_timeout} s")
        except _TRANSIENT as exc:
            log.warning("storage batch of %d failed, not committed: %s", len(batch), exc)
            outcomes = [StorageError(f"write not committed: {exc}") for _ in batch]
        except FileGone as exc:
            log.error("storage: %s", exc)
            self._answer(batch, [StorageError(f"write not committed: {exc}") for _ in batch])
            raise
        except apsw.Error as exc:
            log.error("storage batch of %d failed; stopping", len(batch), exc_info=True)
            self._answer(batch, [StorageError(f"write not committed: {exc}") for _ in batch])
            raise
        self._answer(batch, outcomes)

    def _answer(self, batch: Sequence[Inbox], outcomes: Sequence[Any]) -> None:
        self._batches += 1
        self._messages += len(batch)
        self._largest = max(self._largest, len(batch))
        for msg, outcome in zip(batch, outcomes, strict=True):
            if isinstance(outcome, Exception):
                self._failed += 1
                if msg.reply is None:
                    log.warning("%s failed (no one asked): %s", type(msg).__name__, outcome)
            if msg.reply is None:
                continue
            with msg.reply:
                try:
                    msg.reply.send_nowait(outcome)
                except trio.WouldBlock:
                    pass  # already answered (a late answer to a gone asker is dropped)
