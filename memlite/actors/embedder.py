"""The embedder: keeps the vector table in step with the observations, embeds queries.

Off the write path: observations are stored without waiting for a vector. This actor
notices new ones (it polls ``max(id)`` every ``poll`` seconds, a primary-key lookup) and
embeds them in batches on a worker thread, then stores the vectors through the storage
actor, grouped by project (vec0 partitions). A search that runs before a vector exists
still finds the observation by full text.

Start: the model is loaded on a thread (0.1-1 s), so the worker answers at once; until it
is loaded ``EmbedQuery`` answers None and searches say they used full text. Then
``EnsureVectorTable(dim, model)``: a different model or dimension than the stored vectors
recreates the table, and everything is embedded again (never two vector spaces mixed).
Then one scan lists every observation without a vector (a crash between storing an
observation and its vector, an earlier worker that had no model) and backfills them.

Messages
    ``EmbedQuery(text)`` -> float32 bytes, or None (no model, or it failed).
    ``Reindex()`` -> True: drop every vector and embed all observations again (also
        while the model is still loading: it starts once it is loaded); an error when
        there is no model (EMBEDDER=none, or it failed to load).
    ``GetEmbedderStatus()`` -> ``EmbedderStatus``: model, dim, state, progress.

Failure: a model that cannot load (EMBEDDER=ollama and Ollama is down) leaves the actor
``failed``; it tries again every ``retry`` seconds and search falls back to full text. A
batch the storage actor could not take is retried after ``retry_batch`` seconds; an
observation the model cannot embed is logged and skipped, never retried in a loop.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, assert_never

import apsw
import attrs
import trio

from memlite.actors.core import ActorRef, Mailbox, Reply
from memlite.actors.storage import EnsureVectorTable, StoreVectors
from memlite.errors import MemliteError
from memlite.heap import release_free_memory
from memlite.storage.db import open_reader
from memlite.storage.records import decode_list
from memlite.storage.vectors import VECTOR_TABLE, vector_table_info

__all__ = [
    "BATCH",
    "EmbedQuery",
    "EmbedderActor",
    "EmbedderStatus",
    "GetEmbedderStatus",
    "Reindex",
]

log = logging.getLogger(__name__)

BATCH = 32
"""Observations per embedding call: small enough that a query waits little behind it."""
QUERY_CHARS = 2000
ASK_TIMEOUT = 60.0
QUERY_WORKERS = 2
"""Queries embedded at once, on threads, next to the backfill."""
QUERY_QUEUE = 16
"""Queries waiting for a worker; one more is answered None at once (search uses full
text) instead of queueing work nobody may wait for."""


@attrs.frozen(kw_only=True)
class EmbedQuery:
    """Embed one search query. Answer: float32 little-endian ``bytes``, or None."""

    text: str
    reply: Reply[bytes | None]


@attrs.frozen(kw_only=True)
class Reindex:
    """Drop every vector and embed all observations again. Answer: True, or an error."""

    reply: Reply[Any]


@attrs.frozen(kw_only=True)
class GetEmbedderStatus:
    """Answer: ``EmbedderStatus``."""

    reply: Reply[Any]


@attrs.frozen(kw_only=True)
class EmbedderStatus:
    """What the embedder is doing.

    Attributes:
        state: ``off`` (EMBEDDER=none), ``loading``, ``indexing`` (backfill or reindex
            under way), ``ready``, or ``failed`` (see ``error``).
        model / dim: the loaded model, None until loaded.
        pending: observations known to lack a vector.
        embedded: vectors stored since the worker started (or since the last reindex).
        per_second: embedding throughput of the last batch.
    """

    state: str
    model: str | None
    dim: int | None
    pending: int
    embedded: int
    skipped: int
    per_second: float | None
    error: str | None

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


Loader = Callable[[], Any]  # -> memlite.embed.Embedder | None, blocking


class EmbedderActor:
    """See the module docstring.

    Args:
        storage: the storage actor (the only writer).
        db: the database file, for this actor's own reader connection.
        load: builds the ``Embedder`` (blocking; run on a thread), None for EMBEDDER=none.
        poll: seconds between checks for new observations.
        retry: seconds before loading a model that failed again.
        rescan: seconds between full scans for observations without a vector.
    Mailbox:
        Size 64. ``EmbedQuery`` goes to a queue of ``QUERY_QUEUE`` served by
        ``QUERY_WORKERS`` tasks (threads), next to the backfill, so a query never waits
        for a whole reindex. A full queue answers None at once (``queries_rejected``); a
        query whose asker gave up (timed out, cancelled) while it waited is dropped
        before any work (``queries_abandoned``). Work in flight is therefore bounded by
        ``QUERY_WORKERS + QUERY_QUEUE`` queries whatever the rate of asks.
    Lifecycle:
        ``run`` reports its ref at once; the model loads on a thread in the background
        (``state`` goes loading -> indexing -> ready). The mailbox closing (the
        supervisor's stop) cancels the indexing and the query workers, then the model
        is closed.
    Failure:
        A model that fails to load is retried every ``retry`` s; a failed query answers
        None; a failed batch is skipped; a storage ask that fails is retried. Anything
        else (a reader error) ends the actor: its supervisor (the optional children's,
        see ``memlite.tree``) restarts it within its own budget, and gives it up for
        good (reported in /api/health and ``memlite doctor``) past that budget, without
        touching storage or HTTP.
    Timeouts:
        Storage asks ``ASK_TIMEOUT`` (60 s); the asker of ``EmbedQuery`` owns its own
        timeout. A stop gives this actor its ``ChildSpec.shutdown`` grace; threads
        embedding are abandoned (``abandon_on_cancel``) rather than waited for.
    """

    def __init__(self, storage: ActorRef, db: Path, *, load: Loader, poll: float = 1.0,
                 retry: float = 60.0, retry_batch: float = 5.0, rescan: float = 300.0,
                 ) -> None:
        self.storage = storage
        self.db = db
        self.load = load
        self.poll = poll
        self.retry = retry
        self.retry_batch = retry_batch
        self.rescan = rescan
        self.model: Any = None
        self.state = "loading"
        self.error: str | None = None
        self.pending: list[int] = []
        self.high_water = 0
        self.embedded = self.skipped = 0
        self.releases = 0  # times freed memory went back to the system after batches
        self.per_second: float | None = None
        self._wake = trio.Event()
        self._reindex = False
        self._query_in, self._query_out = trio.open_memory_channel[
            tuple[str, Reply[bytes | None]]](QUERY_QUEUE)
        self.queries_rejected = 0
        self.queries_abandoned = 0

    def status(self) -> EmbedderStatus:
        return EmbedderStatus(
            state=self.state, model=getattr(self.model, "name", None),
            dim=getattr(self.model, "dim", None), pending=len(self.pending),
            embedded=self.embedded, skipped=self.skipped, per_second=self.per_second,
            error=self.error)

    async def run(self, *, task_status: trio.TaskStatus[ActorRef] = trio.TASK_STATUS_IGNORED
                  ) -> None:
        with Mailbox("embedder", size=64) as mailbox:
            task_status.started(mailbox.ref)
            try:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._index_forever, name="embedder:index")
                    for n in range(QUERY_WORKERS):
                        nursery.start_soon(self._query_worker, name=f"embedder:query{n}")
                    async for message in mailbox:
                        self._handle(message, nursery)
                    nursery.cancel_scope.cancel(reason="the embedder's mailbox closed")
            finally:
                if self.model is not None:
                    self.model.close()

    def _handle(self, message: Any, nursery: trio.Nursery) -> None:
        match message:
            case EmbedQuery(text=text, reply=reply):
                if self.model is None:
                    with reply:
                        reply.send_nowait(None)
                    return
                try:
                    self._query_in.send_nowait((text, reply))
                except trio.WouldBlock:
                    self.queries_rejected += 1
                    with reply:
                        reply.send_nowait(None)
            case Reindex(reply=answer):
                with answer:
                    if self.model is None and self.state != "loading":
                        answer.send_nowait(MemliteError(
                            f"no embedding model is loaded ({self.state}"
                            f"{': ' + self.error if self.error else ''}); nothing to reindex"))
                    else:
                        self._reindex = True
                        self.state, self.embedded, self.skipped = "indexing", 0, 0
                        self._wake.set()
                        answer.send_nowait(True)
            case GetEmbedderStatus(reply=status):
                with status:
                    status.send_nowait(self.status())
            case _:
                assert_never(message)

    async def _query_worker(self) -> None:
        async for text, reply in self._query_out:
            await self._answer_query(text, reply)

    async def _answer_query(self, text: str, reply: Reply[bytes | None]) -> None:
        with reply:
            if reply.abandoned:  # the asker gave up while the query waited: no work
                self.queries_abandoned += 1
                return
            model = self.model
            if model is None:
                reply.send_nowait(None)
                return
            try:
                matrix = await trio.to_thread.run_sync(
                    model.embed, [text[:QUERY_CHARS]], abandon_on_cancel=True)
                reply.send_nowait(_as_bytes(matrix[0]))
            except Exception as exc:  # noqa: BLE001 - a query falls back to full text
                log.warning("embedding a query failed (search uses full text): %s", exc)
                reply.send_nowait(None)

    # -----------------------------------------------------------------------------------
    # Indexing
    # -----------------------------------------------------------------------------------

    async def _index_forever(self) -> None:
        while not await self._load():
            with trio.move_on_after(self.retry):
                await trio.sleep_forever()
        async with open_reader(self.db) as reader:
            await self._prepare(reader, recreate=False)
            last_scan = trio.current_time()
            while True:
                if self._reindex:
                    self._reindex = False
                    await self._prepare(reader, recreate=True)
                    last_scan = trio.current_time()
                elif trio.current_time() - last_scan > self.rescan:
                    # Ids are plain rowids: an observation stored in the id of a deleted
                    # newest one, within one poll, is below the mark. A full scan finds it.
                    missing, _ = await reader.async_run(_missing, reader)  # type: ignore[attr-defined]
                    known = set(self.pending)
                    self.pending.extend(i for i in missing if i not in known)
                    last_scan = trio.current_time()
                await self._catch_up(reader)
                self.state = "indexing" if self.pending or self._reindex else "ready"
                with trio.move_on_after(self.poll):
                    await self._wake.wait()
                self._wake = trio.Event()

    async def _load(self) -> bool:
        self.state, self.error = "loading", None
        try:
            model = await trio.to_thread.run_sync(self.load)
        except Exception as exc:  # noqa: BLE001 - reported in status, retried
            self.state, self.error = "failed", str(exc)
            log.warning("embedding model unavailable (search uses full text; retry in "
                        "%.0f s): %s", self.retry, exc)
            return False
        if model is None:
            self.state = "off"
            log.info("no embedding model (EMBEDDER=none): search uses full text")
            await trio.sleep_forever()
        self.model = model
        log.info("embedding model %s (%d dimensions) loaded", model.name, model.dim)
        # Loading leaves freed buffers behind (the model file read, graph optimisation).
        await trio.to_thread.run_sync(release_free_memory, abandon_on_cancel=True)
        return True

    async def _prepare(self, reader: apsw.Connection, *, recreate: bool) -> None:
        """Make the table match the model, then list every observation lacking a vector."""
        self.state = "indexing"
        model = self.model
        while True:
            try:
                await self.storage.ask(lambda reply: EnsureVectorTable(
                    dim=model.dim, model=model.name, recreate=recreate, reply=reply),
                    timeout=ASK_TIMEOUT)
                break
            except MemliteError as exc:
                log.warning("could not prepare the vector table (retrying): %s", exc)
                await trio.sleep(self.retry_batch)
        self.pending, self.high_water = await reader.async_run(_missing, reader)  # type: ignore[attr-defined]
        if self.pending:
            log.info("%d observations need a vector (%s)", len(self.pending), model.name)

    async def _catch_up(self, reader: apsw.Connection) -> None:
        """Embed what is pending and whatever was stored since the last look."""
        newer, self.high_water = await reader.async_run(_newer_than, reader, self.high_water)  # type: ignore[attr-defined]
        self.pending.extend(newer)
        embedded_before = self.embedded
        await self._embed_pending(reader)
        if self.embedded != embedded_before:
            # The batches' freed activations go back to the system instead of staying in
            # the allocator for the worker's life (memlite/heap.py: ~60 MB after a backlog
            # with MiniLM). Not on a stop: a cancel skips it.
            await trio.to_thread.run_sync(release_free_memory, abandon_on_cancel=True)
            self.releases += 1

    async def _embed_pending(self, reader: apsw.Connection) -> None:
        while self.pending and not self._reindex:
            batch = self.pending[:BATCH]
            rows = await reader.async_run(_texts, reader, batch)  # type: ignore[attr-defined]
            started = time.perf_counter()
            try:
                vectors = await trio.to_thread.run_sync(
                    self.model.embed, [row[2] for row in rows], abandon_on_cancel=True)
            except Exception:  # noqa: BLE001 - one bad batch must not stop the rest
                log.exception("embedding %d observations failed; they are skipped until "
                              "the next reindex", len(batch))
                self.skipped += len(batch)
                del self.pending[:len(batch)]
                continue
            elapsed = time.perf_counter() - started
            self.per_second = len(rows) / elapsed if elapsed > 0 else None
            stored = sorted(((oid, project, _as_bytes(vector), digest)
                             for (oid, project, _, digest), vector
                             in zip(rows, vectors, strict=True)),
                            key=lambda row: (row[1], row[0]))
            try:
                await self.storage.ask(partial(_store_vectors, stored), timeout=ASK_TIMEOUT)
            except MemliteError as exc:
                log.warning("storing %d vectors failed (retrying): %s", len(stored), exc)
                await trio.sleep(self.retry_batch)
                continue
            self.embedded += len(stored)
            del self.pending[:len(batch)]


def _as_bytes(vector: Any) -> bytes:
    import numpy as np

    array = np.asarray(vector, dtype="<f4")
    if not np.all(np.isfinite(array)):
        array = np.nan_to_num(array, nan=0.0, posinf=0.0, neginf=0.0)
    return array.tobytes()


def _store_vectors(vectors: list[tuple[int, str, bytes, str]], reply: Reply[int]
                   ) -> StoreVectors:
    return StoreVectors(vectors=vectors, reply=reply)


def _missing(conn: apsw.Connection) -> tuple[list[int], int]:
    """Ids of observations with no vector (grouped by project), and the largest id."""
    top = int(conn.execute(  # type: ignore[arg-type]
        "SELECT coalesce(max(id), 0) FROM observations").fetchall()[0][0])
    if vector_table_info(conn) is None:
        return [], top
    rows = conn.execute(
        f"SELECT id FROM observations WHERE id <= ? AND id NOT IN "
        f"(SELECT observation_id FROM {VECTOR_TABLE}) ORDER BY project, id", (top,))
    return [int(r[0]) for r in rows], top


def _newer_than(conn: apsw.Connection, high_water: int) -> tuple[list[int], int]:
    # Ids are rowids (no AUTOINCREMENT): once the newest observations are deleted, the
    # next ones reuse their ids, so the mark must come back down to the current maximum.
    top = int(conn.execute(  # type: ignore[arg-type]
        "SELECT coalesce(max(id), 0) FROM observations").fetchall()[0][0])
    high_water = min(high_water, top)
    rows = conn.execute("SELECT id FROM observations WHERE id > ? ORDER BY project, id",
                        (high_water,)).fetchall()
    ids = [int(r[0]) for r in rows]  # type: ignore[arg-type]
    return ids, max([high_water, *ids])


def _texts(conn: apsw.Connection, ids: Sequence[int]) -> list[tuple[int, str, str, str]]:
    """``(id, project, text to embed, content_hash)`` for the ids that still exist, in the
    order given."""
    from memlite.embed import observation_text

    found = {
        row[0]: (row[0], row[1], observation_text(
            title=row[2], subtitle=row[3], narrative=row[4], facts=decode_list(row[5]),
            concepts=decode_list(row[6]),
            files=[*decode_list(row[7]), *decode_list(row[8])]), row[9])
        for row in conn.execute(
            "SELECT id, project, title, subtitle, narrative, facts, concepts, files_modified,"
            " files_read, content_hash FROM observations "
            "WHERE id IN (SELECT value FROM json_each(?))",
            ("[" + ",".join(str(int(i)) for i in ids) + "]",))
    }
    return [found[i] for i in ids if i in found]

