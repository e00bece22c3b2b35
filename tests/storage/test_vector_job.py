"""The vector side of a hybrid search overlapped with full text (``vector_job``): the
KNN runs while the BM25 list is built, the answer is the one the search gave with the
two in turn, and the fusion takes the vectors' codes from the index's memory."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from memlite import storage
from memlite.storage import search as engine
from memlite.storage import vector_index, vector_job
from memlite.storage.search import Filters, search
from memlite.storage.vector_codes import CODES_TABLE

DIM = 32
WORDS = ["cache", "parser", "billing", "retry", "schema", "deploy", "token", "queue"]


pytestmark = pytest.mark.usefixtures("small_index")


def unit(rng: np.random.Generator, n: int) -> np.ndarray:
    offset = np.random.default_rng(0).standard_normal(DIM).astype(np.float32)
    rows = rng.standard_normal((n, DIM)).astype(np.float32) + offset
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def populate(db, add_observation, n: int = 200, project: str = "/repo/a") -> list[int]:
    rng = np.random.default_rng(3)
    vectors = unit(rng, n)
    storage.ensure_vector_table(db, DIM, "m")
    with db:
        ids = [add_observation(
            project=project, type=("decision", "bugfix", "discovery")[i % 3],
            session_id=f"s{i % 4}",
            title=" ".join(rng.choice(WORDS, size=3)) + f" step {i}") for i in range(n)]
        storage.upsert_vectors(db, [(oid, project, vectors[i].tobytes())
                                    for i, oid in enumerate(ids)])
    return ids


def query_vector(seed: int = 9) -> bytes:
    return unit(np.random.default_rng(seed), 1)[0].tobytes()


def answer(outcome) -> list[tuple[int, float, int | None, int | None]]:
    return [(h.observation.id, round(h.score, 9), h.fts_rank, h.vector_rank)
            for h in outcome.hits]


def test_the_knn_runs_while_full_text_builds_its_list(db, add_observation, monkeypatch):
    populate(db, add_observation)
    vector = query_vector()
    asked = threading.Event()
    seen_during_fts: list[bool] = []
    real_fts = engine.fts_list

    def slow_fts(*args, **kwargs):
        # Full text waits (up to 10 s) for the vector side to ask for the embedding: it
        # only can when the two run at once. In turn, the source is asked after this.
        seen_during_fts.append(asked.wait(10))
        return real_fts(*args, **kwargs)

    def source():
        asked.set()
        return vector, None

    monkeypatch.setattr(engine, "fts_list", slow_fts)
    outcome = search(db, "cache parser", filters=Filters(project="/repo/a"),
                     query_vector=source)
    assert seen_during_fts == [True]
    assert outcome.mode_used == "hybrid" and any(h.vector_rank for h in outcome.hits)


@pytest.mark.parametrize("text", ["cache parser retry", "what is the latest billing decision",
                                  "why did deploy fail", "schema"])
def test_overlapped_and_in_turn_give_the_same_answer(db, add_observation, monkeypatch, text):
    populate(db, add_observation)
    populate(db, add_observation, n=50, project="/repo/b")
    db.execute("UPDATE observations SET superseded_by = 3 WHERE id IN (1, 2)")
    for seed in (9, 10, 11):
        vector = query_vector(seed)
        for filters in (Filters(project="/repo/a"), Filters()):
            overlapped = search(db, text, filters=filters, query_vector=vector)
            with monkeypatch.context() as m:
                m.setattr(vector_job, "start", lambda *_a, **_k: None)
                in_turn = search(db, text, filters=filters, query_vector=vector)
            assert overlapped.mode_used == in_turn.mode_used == "hybrid"
            assert answer(overlapped) == answer(in_turn)


def test_fusion_takes_the_codes_from_the_index_not_sqlite(db, add_observation):
    populate(db, add_observation)
    vector = query_vector()
    filters = Filters(project="/repo/a")
    # "latest" asks for the newest of the matches like the best one (``_like_best``);
    # the top 15 are diversified (``diversify``): both compare the matches' codes.
    text = "latest cache parser decision"
    search(db, text, filters=filters, query_vector=vector)  # builds the index
    statements: list[str] = []

    def trace(_cursor, sql, _bindings):
        statements.append(sql)
        return True

    db.exec_trace = trace
    try:
        outcome = search(db, text, filters=filters, query_vector=vector)
    finally:
        db.exec_trace = None
    code_reads = [s for s in statements if CODES_TABLE in s and "code" in
                  s.split("FROM")[0]]
    assert code_reads == []
    assert len(outcome.hits) >= 3


def test_codes_for_returns_the_stored_codes_and_follows_writes(db, add_observation):
    ids = populate(db, add_observation, n=40)
    index = vector_index.prepared(db, "/repo/a", DIM)
    assert index is not None

    def stored(wanted):
        return {r[0]: r[1] for r in db.execute(
            f"SELECT observation_id, code FROM {CODES_TABLE} WHERE code IS NOT NULL")
            if r[0] in wanted}

    wanted = [ids[0], ids[17], ids[-1], 10**9]  # the last one has no vector
    assert index.codes_for(wanted) == stored(wanted)
    storage.upsert_vectors(db, [(ids[17], "/repo/a", query_vector(4))])  # re-embedded
    storage.delete_observation(db, ids[0], actor="test")  # tombstone
    new = add_observation(project="/repo/a", title="cache appended")
    storage.upsert_vectors(db, [(new, "/repo/a", query_vector(5))])
    index = vector_index.prepared(db, "/repo/a", DIM)
    assert index is not None
    wanted = [ids[0], ids[17], new]
    held = index.codes_for(wanted)
    assert held == stored(wanted) and set(held) == {ids[17], new}


def test_codes_for_declines_when_ids_are_not_in_order():
    index = vector_index.ProjectIndex("e")
    code = np.arange(DIM, dtype=np.int8).tobytes()
    index._build([(5, code), (3, code), (9, code)], 0)
    assert index.codes_for([3]) is None  # the caller reads SQLite instead
    ordered = vector_index.ProjectIndex("e")
    ordered._build([(3, code), (5, code), (9, code)], 0)
    assert ordered.codes_for([5, 4]) == {5: code}


def test_no_vector_from_the_source_answers_with_full_text_and_says_why(db, add_observation):
    populate(db, add_observation)
    outcome = search(db, "cache", filters=Filters(project="/repo/a"),
                     query_vector=lambda: (None, "the embedder did not answer in time"))
    assert outcome.mode_used == "fts"
    assert "the embedder did not answer in time" in (outcome.note or "")
    short = np.ones(DIM // 2, dtype=np.float32).tobytes()
    outcome = search(db, "cache", filters=Filters(project="/repo/a"),
                     query_vector=lambda: (short, None))
    assert outcome.mode_used == "fts" and "reindex is pending" in (outcome.note or "")


def test_a_failing_source_fails_the_search(db, add_observation):
    populate(db, add_observation)

    def source():
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        search(db, "cache", filters=Filters(project="/repo/a"), query_vector=source)
