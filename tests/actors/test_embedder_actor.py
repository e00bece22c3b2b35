"""The embedder actor with a real storage actor and the real wordllama model: backfill,
new observations, queries, load failures and retries, model changes, reindex, bad batches.

Real time throughout (the model runs on threads, which an autojump clock would skip
over), with a short poll; every wait is bounded by ``trio.fail_after``. Where a test
needs a model that fails or changes, a small stand-in model is loaded instead; the
assertions are on what the database holds and what the actor reports.
"""

from __future__ import annotations

import threading
from contextlib import asynccontextmanager

import numpy as np
import pytest
import trio

from memlite.actors.core import spawn
from memlite.actors.embedder import EmbedderActor, EmbedQuery, GetEmbedderStatus, Reindex
from memlite.actors.storage import StorageActor, StoreObservation, open_reader
from memlite.embed import load_embedder
from memlite.errors import MemliteError
from memlite.storage.db import db_path
from memlite.storage.records import NewObservation

POLL = 0.05
WAIT = 20.0  # seconds any one condition may take (a loaded machine: the first test
# in a run loads the model from a cold page cache; 2.5 s once failed there)


@pytest.fixture(autouse=True)
def no_leaked_db_threads():
    yield
    leaked = [t.name for t in threading.enumerate() if t.name.startswith("memlite-db-")]
    assert not leaked, f"database connections left open: {leaked}"


def wordllama():
    return load_embedder("wordllama")


class StandIn:
    """A tiny deterministic model: a one-hot vector at ``hot`` (plus the text length)."""

    def __init__(self, name: str = "stand-in", dim: int = 8, *, hot: int = 0,
                 poison: str | None = None) -> None:
        self.name, self.dim, self.hot, self.poison = name, dim, hot, poison
        self.closed = False

    def embed(self, texts):
        if self.poison is not None and any(self.poison in t for t in texts):
            raise RuntimeError("this model cannot embed that")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        out[:, self.hot] = 1.0
        out[:, (self.hot + 1) % self.dim] = [len(t) % 7 / 10 for t in texts]
        return out

    def close(self) -> None:
        self.closed = True


async def store(storage, title: str, *, project: str = "/repo/a", narrative: str = "") -> int:
    obs = NewObservation(session_id="s1", project=project, type="discovery", title=title,
                         narrative=narrative)
    result = await storage.ask(lambda r: StoreObservation(observation=obs, reply=r), timeout=5)
    return result.id


async def status(embedder):
    return await embedder.ask(lambda r: GetEmbedderStatus(reply=r), timeout=5)


async def wait_until(check, what: str):
    """Poll the async ``check`` until it is truthy; fail after ``WAIT`` seconds."""
    try:
        with trio.fail_after(WAIT):
            while not (found := await check()):  # noqa: ASYNC110 - polls the database
                await trio.sleep(0.02)
    except trio.TooSlowError:
        raise AssertionError(f"still waiting for {what}") from None
    return found


async def db_state(reader):
    """``(vector_model, vector_dim, {observation_id: vector bytes})`` from the database."""

    def read(conn):
        meta = dict(conn.execute("SELECT key, value FROM meta WHERE key LIKE 'vector_%'"))
        has_table = conn.execute("SELECT 1 FROM sqlite_schema WHERE name = "
                                 "'observation_vectors'").fetchall()
        vectors = dict(conn.execute(
            "SELECT observation_id, embedding FROM observation_vectors")) if has_table else {}
        return meta.get("vector_model"), meta.get("vector_dim"), vectors

    return await reader.async_run(read, reader)


@asynccontextmanager
async def running(data_dir, load, *, storage=None, **kwargs):
    """A storage actor (unless given), an embedder on ``load`` and a reader connection."""
    kwargs.setdefault("poll", POLL)
    path = db_path(data_dir)
    if storage is None:
        async with spawn(StorageActor(data_dir).run) as storage_ref:
            async with running(data_dir, load, storage=storage_ref, **kwargs) as found:
                yield found
        return
    actor = EmbedderActor(storage, path, load=load, **kwargs)
    async with spawn(actor.run) as embedder, open_reader(path) as reader:
        yield storage, embedder, reader


async def vectors_for(reader, ids):
    async def check():
        _, _, vectors = await db_state(reader)
        return vectors if set(ids) <= set(vectors) else None

    return await wait_until(check, f"vectors for {sorted(ids)}")


async def ready(embedder):
    async def check():
        found = await status(embedder)
        return found if found.state == "ready" else None

    return await wait_until(check, "the embedder to be ready")


# --- indexing ---------------------------------------------------------------------------


async def test_observations_stored_before_start_are_backfilled(data_dir):
    async with spawn(StorageActor(data_dir).run) as storage:
        ids = [await store(storage, f"note {i} about the parser", project=f"/repo/{i % 2}")
               for i in range(40)]  # more than one batch, two projects
        async with running(data_dir, wordllama, storage=storage) as (_, embedder, reader):
            vectors = await vectors_for(reader, ids)
            model, dim, _ = await db_state(reader)
            done = await ready(embedder)
    assert (model, dim) == ("wordllama-l2supercat-256", "256")
    assert set(vectors) == set(ids)
    assert all(len(v) == 256 * 4 for v in vectors.values())
    assert done.embedded == 40 and done.pending == 0 and done.skipped == 0
    assert done.per_second is not None and done.per_second > 0


async def test_an_observation_stored_while_running_gets_a_vector(data_dir):
    async with running(data_dir, wordllama) as (storage, embedder, reader):
        await ready(embedder)
        with trio.fail_after(10 * POLL + 1.0):  # a few poll periods (plus the embedding)
            oid = await store(storage, "the cache had no size limit")
            vectors = await vectors_for(reader, [oid])
        assert set(vectors) == {oid}
        later = await store(storage, "second one", project="/repo/other")
        vectors = await vectors_for(reader, [oid, later])
        assert (await ready(embedder)).embedded == 2


async def test_a_deleted_observation_loses_its_vector_and_is_not_re_embedded(data_dir):
    from memlite.actors.storage import DeleteObservation

    async with running(data_dir, wordllama) as (storage, embedder, reader):
        keep, gone = await store(storage, "keep me"), await store(storage, "delete me")
        await vectors_for(reader, [keep, gone])
        await storage.ask(lambda r: DeleteObservation(observation_id=gone, actor="test",
                                                      reply=r), timeout=5)
        await trio.sleep(4 * POLL)
        _, _, vectors = await db_state(reader)
        assert set(vectors) == {keep}


# --- queries ------------------------------------------------------------------------------


async def test_embed_query_answers_float32_bytes_of_the_model_dimension(data_dir):
    async with running(data_dir, wordllama) as (_, embedder, _):
        await ready(embedder)
        vector = await embedder.ask(lambda r: EmbedQuery(text="why billed twice", reply=r),
                                    timeout=5)
        long = await embedder.ask(lambda r: EmbedQuery(text="x " * 50_000, reply=r), timeout=5)
    assert isinstance(vector, bytes) and len(vector) == 256 * 4
    array = np.frombuffer(vector, dtype="<f4")
    assert np.all(np.isfinite(array)) and np.linalg.norm(array) > 0
    assert isinstance(long, bytes) and len(long) == 256 * 4


async def test_no_model_means_state_off_and_queries_answer_none(data_dir):
    async with spawn(StorageActor(data_dir).run) as storage:
        oid = await store(storage, "stored without any model")
        async with running(data_dir, lambda: None, storage=storage) as (_, embedder, reader):

            async def off():
                return (await status(embedder)).state == "off"

            await wait_until(off, "state off")
            assert await embedder.ask(lambda r: EmbedQuery(text="x", reply=r),
                                      timeout=5) is None
            with pytest.raises(MemliteError, match="no embedding model"):
                await embedder.ask(lambda r: Reindex(reply=r), timeout=5)
            found = await status(embedder)
            assert (found.model, found.dim, found.embedded) == (None, None, 0)
            model, dim, vectors = await db_state(reader)
    assert (model, dim, vectors) == (None, None, {})  # no table was made
    assert oid


# --- failures ------------------------------------------------------------------------------


async def test_a_model_that_fails_to_load_is_retried(data_dir):
    attempts = []

    def flaky():
        attempts.append(1)
        if len(attempts) < 3:
            raise RuntimeError("Ollama is not running")
        return StandIn()

    async with spawn(StorageActor(data_dir).run) as storage:
        oid = await store(storage, "waiting for a model")
        async with running(data_dir, flaky, storage=storage, retry=0.3) as (
                _, embedder, reader):

            async def failed():
                found = await status(embedder)
                return found if found.state == "failed" else None

            broken = await wait_until(failed, "state failed")
            assert broken.error == "Ollama is not running" and broken.model is None
            assert await embedder.ask(lambda r: EmbedQuery(text="x", reply=r),
                                      timeout=5) is None
            with pytest.raises(MemliteError, match="Ollama is not running"):
                await embedder.ask(lambda r: Reindex(reply=r), timeout=5)
            vectors = await vectors_for(reader, [oid])  # a later retry loaded it
            fixed = await ready(embedder)
    assert fixed.error is None and fixed.model == "stand-in" and fixed.dim == 8
    assert set(vectors) == {oid}


async def test_a_batch_the_model_cannot_embed_is_skipped_and_the_rest_go_on(data_dir):
    async with running(data_dir, lambda: StandIn(poison="POISON")) as (
            storage, embedder, reader):
        good = await store(storage, "fine")
        await vectors_for(reader, [good])
        bad = await store(storage, "POISON pill")

        async def skipped():
            found = await status(embedder)
            return found if found.skipped == 1 else None

        found = await wait_until(skipped, "the bad batch to be skipped")
        assert found.pending == 0
        after = await store(storage, "fine again")
        vectors = await vectors_for(reader, [good, after])
        assert bad not in vectors  # skipped, and not retried in a loop
        await trio.sleep(4 * POLL)
        found = await status(embedder)
        assert found.skipped == 1 and found.embedded == 2 and found.state == "ready"
        _, _, vectors = await db_state(reader)
        assert set(vectors) == {good, after}


# --- model changes and reindex -----------------------------------------------------------


async def test_a_new_model_at_restart_recreates_the_table_and_re_embeds_all(data_dir):
    async with spawn(StorageActor(data_dir).run) as storage:
        ids = [await store(storage, f"observation {i}", project=f"/repo/{i % 3}")
               for i in range(10)]
        async with running(data_dir, wordllama, storage=storage) as (_, _, reader):
            await vectors_for(reader, ids)
            assert (await db_state(reader))[:2] == ("wordllama-l2supercat-256", "256")
        async with running(data_dir, lambda: StandIn("other-model", 8), storage=storage) as (
                _, embedder, reader):
            await ready(embedder)
            vectors = await vectors_for(reader, ids)
            model, dim, _ = await db_state(reader)
            done = await status(embedder)
    assert (model, dim) == ("other-model", "8")
    assert set(vectors) == set(ids) and all(len(v) == 8 * 4 for v in vectors.values())
    assert done.embedded == 10 and done.model == "other-model" and done.dim == 8


async def test_the_same_model_at_restart_keeps_the_vectors(data_dir):
    async with spawn(StorageActor(data_dir).run) as storage:
        ids = [await store(storage, f"observation {i}") for i in range(5)]
        async with running(data_dir, wordllama, storage=storage) as (_, _, reader):
            before = await vectors_for(reader, ids)
        async with running(data_dir, wordllama, storage=storage) as (_, embedder, reader):
            found = await ready(embedder)
            _, _, after = await db_state(reader)
    assert found.embedded == 0  # nothing needed a vector
    assert after == before


async def test_reindex_embeds_everything_again(data_dir):
    model = StandIn(hot=0)
    async with running(data_dir, lambda: model) as (storage, embedder, reader):
        ids = [await store(storage, f"observation {i}", project=f"/repo/{i % 2}")
               for i in range(7)]
        vectors = await vectors_for(reader, ids)
        assert all(np.frombuffer(v, "<f4")[0] == 1.0 for v in vectors.values())
        model.hot = 3  # the "model" now embeds differently: a reindex must show it
        assert await embedder.ask(lambda r: Reindex(reply=r), timeout=5) is True

        async def re_embedded():
            _, _, found = await db_state(reader)
            fresh = {oid for oid, v in found.items() if np.frombuffer(v, "<f4")[3] == 1.0}
            return found if fresh == set(ids) and len(found) == len(ids) else None

        vectors = await wait_until(re_embedded, "every vector to be embedded again")
        done = await ready(embedder)
    assert done.embedded == 7 and done.pending == 0  # counted again from zero
    assert set(vectors) == set(ids)


async def test_status_fields(data_dir):
    async with running(data_dir, wordllama) as (storage, embedder, _):
        first = await status(embedder)
        assert first.state in {"loading", "indexing", "ready"}
        await store(storage, "x")
        found = await wait_until(
            lambda: _embedded_at_least(embedder, 1), "one embedded observation")
    body = found.to_json()
    assert set(body) == {"state", "model", "dim", "pending", "embedded", "skipped",
                         "per_second", "error"}
    assert body["model"] == "wordllama-l2supercat-256" and body["dim"] == 256
    assert body["error"] is None and body["skipped"] == 0


async def _embedded_at_least(embedder, n):
    found = await status(embedder)
    return found if found.embedded >= n and found.state == "ready" else None


async def test_a_reused_id_after_deleting_the_newest_observation_gets_a_vector(data_dir):
    """Observation ids are rowids (no AUTOINCREMENT): deleting the newest one and storing
    another reuses its id, which is not above the ids the embedder already saw."""
    from memlite.actors.storage import DeleteObservation

    async with running(data_dir, wordllama) as (storage, embedder, reader):
        first, newest = await store(storage, "first"), await store(storage, "newest")
        await vectors_for(reader, [first, newest])
        await storage.ask(lambda r: DeleteObservation(observation_id=newest, actor="test",
                                                      reply=r), timeout=5)
        await trio.sleep(3 * POLL)  # the embedder polls in between
        again = await store(storage, "stored after the delete")
        assert again == newest  # the id was reused
        vectors = await vectors_for(reader, [first, again])
        _, _, expected = await db_state(reader)
        assert set(vectors) == {first, again} == set(expected)


class Gated(StandIn):
    """Blocks inside ``embed`` (for texts containing "slow") until ``go`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.entered, self.go = threading.Event(), threading.Event()

    def embed(self, texts):
        if any("slow" in t for t in texts):
            self.entered.set()
            self.go.wait(5)
        return super().embed(texts)


async def test_an_observation_deleted_while_being_embedded_leaves_no_vector(data_dir):
    from memlite.actors.storage import DeleteObservation

    model = Gated()
    async with running(data_dir, lambda: model) as (storage, embedder, reader):
        oid = await store(storage, "slow one")
        await trio.to_thread.run_sync(model.entered.wait, 5)
        await storage.ask(lambda r: DeleteObservation(observation_id=oid, actor="test",
                                                      reply=r), timeout=5)
        model.go.set()
        await ready(embedder)
        _, _, vectors = await db_state(reader)
    assert oid not in vectors


# --- bounded query work (issue 17, item 1) -------------------------------------------------


class SlowQueries(StandIn):
    """A stand-in whose query embeddings wait for ``gate``; it counts query calls."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.query_calls = 0

    def embed(self, texts):
        if texts and texts[0].startswith("query "):
            self.query_calls += 1
            self.gate.wait(10)
        return super().embed(texts)


async def test_abandoned_queries_are_dropped_before_any_work_and_the_queue_is_bounded(data_dir):
    from memlite.actors.embedder import QUERY_QUEUE, QUERY_WORKERS
    from memlite.errors import AskTimeout

    model = SlowQueries()
    asks = 2 * (QUERY_WORKERS + QUERY_QUEUE) + 4  # all fit the mailbox (64): none waits
    async with spawn(StorageActor(data_dir).run) as storage:
        actor = EmbedderActor(storage, db_path(data_dir), load=lambda: model, poll=POLL)
        async with spawn(actor.run) as embedder:
            await ready(embedder)
            outcomes: list[object] = []

            async def ask(n: int) -> None:
                try:
                    outcomes.append(await embedder.ask(
                        lambda r: EmbedQuery(text=f"query {n}", reply=r), timeout=1.0))
                except AskTimeout as exc:
                    outcomes.append(exc)

            try:
                async with trio.open_nursery() as nursery:
                    for n in range(asks):
                        nursery.start_soon(ask, n)
            finally:
                model.gate.set()  # the two queries on threads finish now
            # Every asker got an answer (None: the queue was full) or timed out.
            assert len(outcomes) == asks
            assert any(o is None for o in outcomes)  # rejected at once, not queued
            assert actor.queries_rejected == asks - QUERY_WORKERS - QUERY_QUEUE

            async def drained():
                return actor.queries_abandoned == QUERY_QUEUE or None

            await wait_until(drained, "the queued, abandoned queries to be dropped")
            # Only the queries already on a thread when their askers gave up were embedded.
            assert model.query_calls == QUERY_WORKERS
            # And the embedder still answers.
            vector = await embedder.ask(lambda r: EmbedQuery(text="later", reply=r), timeout=5)
            assert isinstance(vector, bytes)


async def test_freed_memory_goes_back_to_the_system_after_a_backlog_not_when_idle(
        data_dir, monkeypatch):
    import memlite.actors.embedder as embedder_module

    calls: list[str] = []
    monkeypatch.setattr(embedder_module, "release_free_memory",
                        lambda: calls.append(threading.current_thread().name) or True)

    def released(n):
        async def check():
            return len(calls) >= n
        return check

    async with spawn(StorageActor(data_dir).run) as storage:
        ids = [await store(storage, f"note {i}") for i in range(40)]  # two batches
        async with running(data_dir, StandIn, storage=storage) as (_, embedder, reader):
            await vectors_for(reader, ids)
            # One after the model loaded, one after the backlog (not one per batch).
            await wait_until(released(2), "a release after loading and the backlog")
            await trio.sleep(10 * POLL)  # idle polls embed nothing: no more releases
            assert len(calls) == 2
            await vectors_for(reader, [await store(storage, "one more")])
            await wait_until(released(3), "a release after the new observation")
    assert threading.main_thread().name not in calls  # off the Trio thread
