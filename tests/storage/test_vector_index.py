"""The in-memory sign-bit index of a large project: same answers as the exact KNN on
clustered vectors, fresh after writes and deletes, rebuilt for a new model, the int8
codes it rescores with kept in step with vec0, one index for a one-project database,
and built before any search asks (``vector_warm``)."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from memlite import storage
from memlite.storage import vector_index, vector_warm
from memlite.storage.search import Filters, search
from memlite.storage.vector_codes import CODES_TABLE, codes_epoch

DIM = 64
MIN_VECTORS = vector_index.MIN_VECTORS  # before the fixture lowers it


@pytest.fixture(autouse=True)
def small_index(monkeypatch):
    """Index every project, however small (the real threshold is 20,000 vectors)."""
    monkeypatch.setattr(vector_index, "MIN_VECTORS", 1)
    monkeypatch.setattr(vector_index, "CANDIDATES", 120)
    monkeypatch.setattr(vector_index, "SQL_CANDIDATES", 120)
    vector_index.reset()
    yield
    vector_index.reset()


def clustered(rng: np.random.Generator, n: int, clusters: int = 20) -> np.ndarray:
    """Unit vectors around ``clusters`` centres plus a shared offset (like sentence
    embeddings, whose mean is far from zero); the same centres on every call."""
    fixed = np.random.default_rng(0)
    centres = fixed.standard_normal((clusters, DIM)).astype(np.float32)
    offset = fixed.standard_normal(DIM).astype(np.float32)
    rows = centres[rng.integers(0, clusters, n)] + offset
    rows += 0.5 * rng.standard_normal((n, DIM)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def populate(db, add_observation, vectors: np.ndarray, project: str = "/repo/a") -> list[int]:
    storage.ensure_vector_table(db, DIM, "m")
    with db:
        ids = [add_observation(title=f"{project} {i}", project=project)
               for i in range(len(vectors))]
        storage.upsert_vectors(db, [(oid, project, vectors[i].tobytes())
                                    for i, oid in enumerate(ids)])
    return ids


def exact(db, query: np.ndarray, k: int, project: str = "/repo/a") -> list[int]:
    return [h.observation_id for h in
            storage.nearest_observations(db, query.tobytes(), project=project, k=k)]


def indexed(db, query: np.ndarray, k: int, project: str = "/repo/a"):
    return vector_index.nearest(db, query.tobytes(), project, k, Filters(project=project)
                                .where("o"))


def test_codes_follow_upserts_and_deletes(db, add_observation):
    rng = np.random.default_rng(1)
    ids = populate(db, add_observation, clustered(rng, 3))
    rows = db.execute(f"SELECT observation_id, seq, length(code) FROM {CODES_TABLE} "
                      "ORDER BY seq").fetchall()
    assert [r[0] for r in rows] == ids and [r[2] for r in rows] == [DIM] * 3
    top = rows[-1][1]
    storage.upsert_vectors(db, [(ids[0], "/repo/a", clustered(rng, 1)[0].tobytes())])
    storage.delete_observation(db, ids[1], actor="test")
    after = dict((r[0], (r[1], r[2])) for r in db.execute(
        f"SELECT observation_id, seq, code FROM {CODES_TABLE}"))
    assert after[ids[0]][0] > top and after[ids[0]][1] is not None  # re-embedded: new seq
    assert after[ids[1]][0] > top and after[ids[1]][1] is None      # deleted: tombstone


def test_an_older_database_gets_its_codes_backfilled(db, add_observation):
    vectors = clustered(np.random.default_rng(2), 5)
    ids = populate(db, add_observation, vectors)
    db.execute(f"DROP TABLE {CODES_TABLE}")
    db.execute("DELETE FROM meta WHERE key = 'vector_codes_epoch'")
    assert codes_epoch(db) is None
    assert storage.ensure_vector_table(db, DIM, "m") is False  # no reindex needed
    assert codes_epoch(db) is not None
    codes = dict(db.execute(f"SELECT observation_id, code FROM {CODES_TABLE}").fetchall())
    assert sorted(codes) == sorted(ids)
    got = np.frombuffer(codes[ids[0]], dtype=np.int8).astype(np.float32)
    assert float(got @ vectors[0]) / np.linalg.norm(got) == pytest.approx(1.0, abs=1e-3)


def test_index_finds_what_the_exact_knn_finds(db, add_observation):
    rng = np.random.default_rng(3)
    populate(db, add_observation, clustered(rng, 600))
    queries = clustered(rng, 20)
    overlap = []
    for q in queries:
        want = exact(db, q, 10)
        got = indexed(db, q, 10)
        assert got is not None and len(got) == 10
        assert [d for _, d in got] == sorted(d for _, d in got)  # closest first
        overlap.append(len(set(want) & {oid for oid, _ in got}) / 10)
    # 120 Hamming candidates out of 600 rows (64 bits), rescored: nearly all of the top 10.
    assert np.mean(overlap) >= 0.9


def test_distances_are_cosine_distances(db, add_observation):
    rng = np.random.default_rng(4)
    populate(db, add_observation, clustered(rng, 100))
    q = clustered(rng, 1)[0]
    want = {h.observation_id: h.distance for h in
            storage.nearest_observations(db, q.tobytes(), project="/repo/a", k=100)}
    for oid, distance in indexed(db, q, 5):
        assert distance == pytest.approx(want[oid], abs=0.01)


def test_index_sees_new_and_deleted_rows(db, add_observation):
    rng = np.random.default_rng(5)
    populate(db, add_observation, clustered(rng, 200))
    q = clustered(rng, 1)[0]
    indexed(db, q, 5)  # built
    newcomer = add_observation(title="new")
    storage.upsert_vectors(db, [(newcomer, "/repo/a", q.tobytes())])  # the exact match
    assert indexed(db, q, 5)[0][0] == newcomer
    storage.delete_observation(db, newcomer, actor="test")
    assert newcomer not in {oid for oid, _ in indexed(db, q, 5)}


def test_a_new_model_rebuilds_the_index(db, add_observation):
    rng = np.random.default_rng(6)
    ids = populate(db, add_observation, clustered(rng, 100))
    q = clustered(rng, 1)[0]
    assert indexed(db, q, 3)
    storage.ensure_vector_table(db, DIM, "other-model")  # empty again: reindex pending
    assert not indexed(db, q, 3)  # nothing to index: the exact KNN (also empty) answers
    storage.upsert_vectors(db, [(ids[7], "/repo/a", q.tobytes())])
    assert [oid for oid, _ in indexed(db, q, 3)] == [ids[7]]


def test_small_projects_use_the_exact_knn(db, add_observation, monkeypatch):
    monkeypatch.setattr(vector_index, "MIN_VECTORS", 1000)
    populate(db, add_observation, clustered(np.random.default_rng(7), 50))
    assert indexed(db, clustered(np.random.default_rng(8), 1)[0], 3) is None


def test_a_project_of_a_few_thousand_vectors_uses_the_index(db, add_observation, monkeypatch):
    # The real threshold (the autouse fixture lowers it): sqlite-vec's exact KNN costs
    # 9 ms at 10,000 MiniLM vectors, the index under 4.
    monkeypatch.setattr(vector_index, "MIN_VECTORS", MIN_VECTORS)
    rng = np.random.default_rng(11)
    populate(db, add_observation, clustered(rng, 4_000))
    got = indexed(db, clustered(rng, 1)[0], 10)
    assert got is not None and len(got) == 10


def test_search_through_the_index_hides_superseded_and_other_projects(db, add_observation):
    rng = np.random.default_rng(9)
    ids = populate(db, add_observation, clustered(rng, 300))
    other = populate(db, add_observation, clustered(rng, 50), project="/repo/b")
    q = clustered(rng, 1)[0]
    storage.upsert_vectors(db, [(ids[0], "/repo/a", q.tobytes()),
                                (ids[1], "/repo/a", q.tobytes()),
                                (other[0], "/repo/b", q.tobytes())])
    db.execute("UPDATE observations SET superseded_by = ? WHERE id = ?", (ids[1], ids[0]))
    outcome = search(db, "zzz", mode="semantic", filters=Filters(project="/repo/a"),
                     query_vector=q.tobytes(), limit=10)
    got = [h.observation.id for h in outcome.hits]
    assert outcome.mode_used == "semantic" and got
    assert ids[0] not in got and other[0] not in got
    assert set(got) <= set(ids)
    shown = search(db, "zzz", mode="semantic",
                   filters=Filters(project="/repo/a", include_superseded=True),
                   query_vector=q.tobytes(), limit=10)
    shown_ids = [h.observation.id for h in shown.hits]
    assert ids[0] in shown_ids and shown_ids[0] == ids[1]  # the replacement first


def test_a_search_with_no_project_filter_uses_an_index_over_every_project(db, add_observation):
    rng = np.random.default_rng(10)
    populate(db, add_observation, clustered(rng, 300))
    populate(db, add_observation, clustered(rng, 300), project="/repo/b")
    overlap = []
    for q in clustered(rng, 10):
        want = [r[0] for r in db.execute(
            "SELECT observation_id FROM observation_vectors WHERE embedding MATCH ? "
            "AND k = 10 ORDER BY distance", (q.tobytes(),))]
        outcome = search(db, "zzz", mode="semantic", filters=Filters(),
                         query_vector=q.tobytes(), limit=10)
        got = [h.observation.id for h in outcome.hits]
        assert outcome.mode_used == "semantic" and len(got) == 10
        overlap.append(len(set(want) & set(got)) / 10)
    # The whole database's index answered (key: file, None), not the exact KNN.
    assert [project for _, project in vector_index._INDEXES] == [None]
    assert np.mean(overlap) >= 0.9
    # A row written later, in either project, is folded in.
    q = clustered(rng, 1)[0]
    newcomer = add_observation(title="new", project="/repo/b")
    storage.upsert_vectors(db, [(newcomer, "/repo/b", q.tobytes())])
    top = search(db, "zzz", mode="semantic", filters=Filters(), query_vector=q.tobytes(),
                 limit=3).hits
    assert top[0].observation.id == newcomer


def test_full_text_skips_the_join_only_when_it_changes_nothing(db, add_observation):
    from memlite.storage import fts_lists as engine
    from memlite.storage import fts_split

    def dominant(query, filters):
        return engine._fts_dominant(db, query, fts_split.plan(db, query), filters, 20)

    def joined(query, filters):
        return engine._fts_joined(db, query, fts_split.plan(db, query), filters, 20)

    rng = np.random.default_rng(10)
    words = ["alpha", "beta", "gamma", "delta", "omega"]
    storage.ensure_vector_table(db, DIM, "m")
    with db:
        for project, n in (("/repo/a", 300), ("/repo/b", 100)):
            ids = [add_observation(project=project, title=" ".join(
                rng.choice(words, size=3)) + f" {project} {i}") for i in range(n)]
            storage.upsert_vectors(db, [(oid, project, v.tobytes()) for oid, v in
                                        zip(ids, clustered(rng, n), strict=True)])
    db.execute("UPDATE observations SET superseded_by = 2 WHERE id = 1")
    a = Filters(project="/repo/a")
    assert vector_index.project_share(db, "/repo/a") == 0.0  # no index yet: joined query
    assert dominant('"alpha"', a) is None
    indexed(db, clustered(rng, 1)[0], 3)  # the index now knows /repo/a holds 3/4
    assert vector_index.project_share(db, "/repo/a") == pytest.approx(0.75, abs=0.01)
    for query in ('"alpha"', '"beta" OR "omega"', '"gamma" OR "delta" OR "alpha"'):
        fast = dominant(query, a)
        assert fast is not None
        assert sorted(fast) == sorted(joined(query, a))
    # No project filter: every row is in scope, so the same shortcut holds.
    for query in ('"alpha"', '"beta" OR "omega"'):
        fast = dominant(query, Filters())
        assert fast is not None
        assert sorted(fast) == sorted(joined(query, Filters()))
    # /repo/b holds a quarter: always the joined query.
    assert dominant('"alpha"', Filters(project="/repo/b")) is None
    # A narrowing filter, or too few of the unfiltered top passing: the joined query.
    narrow = Filters(project="/repo/a", session_id="nobody")
    assert dominant('"alpha"', narrow) is None
    db.execute("UPDATE observations SET superseded_by = 2 WHERE id > 2 AND id <= 280")
    assert dominant('"alpha"', a) is None
    assert len(joined('"alpha"', a)) > 0


def test_past_the_codes_budget_the_candidates_codes_come_from_sqlite(db, add_observation,
                                                                      monkeypatch):
    """An index that may not hold its codes (``CODES_BUDGET``) keeps the bits only and
    still answers like the exact KNN, reading its candidates' codes from the table."""
    rng = np.random.default_rng(12)
    populate(db, add_observation, clustered(rng, 600))
    monkeypatch.setattr(vector_index, "CODES_BUDGET", 0)
    q = clustered(rng, 1)[0]
    got = indexed(db, q, 10)
    index = vector_index._INDEXES[(db.filename, None)]  # one project: the database's index
    assert index.codes is None
    assert got is not None and len(set(exact(db, q, 10)) & {oid for oid, _ in got}) >= 8
    vector_index.reset()
    monkeypatch.setattr(vector_index, "CODES_BUDGET", 10**9)
    again = indexed(db, q, 10)
    assert vector_index._INDEXES[(db.filename, None)].codes is not None
    assert [oid for oid, _ in again] == [oid for oid, _ in got]  # same int8 rescoring


def test_a_reembedded_row_is_rescored_with_its_new_vector(db, add_observation):
    rng = np.random.default_rng(13)
    ids = populate(db, add_observation, clustered(rng, 300))
    q = clustered(rng, 1)[0]
    indexed(db, q, 5)  # built
    storage.upsert_vectors(db, [(ids[17], "/repo/a", q.tobytes())])
    oid, distance = indexed(db, q, 5)[0]
    assert oid == ids[17] and distance == pytest.approx(0.0, abs=1e-3)


def test_rows_appended_after_the_build_grow_the_index(db, add_observation):
    rng = np.random.default_rng(14)
    populate(db, add_observation, clustered(rng, 100))
    q = clustered(rng, 1)[0]
    indexed(db, q, 5)
    index = vector_index._INDEXES[(db.filename, None)]  # one project: the database's index
    later = clustered(rng, 400)  # appended in batches: the arrays grow several times
    added = []
    for start in range(0, 400, 50):
        with db:
            batch = [add_observation(title=f"later {start + i}", project="/repo/a")
                     for i in range(50)]
            storage.upsert_vectors(db, [(oid, "/repo/a", later[start + i].tobytes())
                                        for i, oid in enumerate(batch)])
        added += batch
        indexed(db, q, 5)
    assert vector_index._INDEXES[(db.filename, None)] is index  # folded in, not rebuilt
    assert index.size == 500 and len(index.ids) >= 500
    for i in (0, 199, 399):  # each appended row is its own nearest neighbour
        assert indexed(db, later[i], 1)[0][0] == added[i]


def test_filters_that_reject_the_nearest_rows_reach_further_down(db, add_observation,
                                                                monkeypatch):
    """The filters run on the best 2k, then 8k more...: with the 40 nearest rows
    superseded, the answer is the exact top 10 of the rows left (every row a candidate
    here, so that only the filter loop is tested)."""
    monkeypatch.setattr(vector_index, "CANDIDATES", 600)
    rng = np.random.default_rng(15)
    ids = populate(db, add_observation, clustered(rng, 600))
    q = clustered(rng, 1)[0]
    order = exact(db, q, 600)
    hidden = order[:40]
    db.execute("UPDATE observations SET superseded_by = ? WHERE id IN (SELECT value FROM "
               "json_each(?))", (order[-1], "[" + ",".join(map(str, hidden)) + "]"))
    got = indexed(db, q, 10)
    assert got is not None and len(got) == 10
    assert not set(hidden) & {oid for oid, _ in got}
    assert len(set(order[40:50]) & {oid for oid, _ in got}) >= 9  # int8 near-ties
    assert set(ids) >= {oid for oid, _ in got}


def test_a_project_filter_with_superseded_rows_needs_no_check_and_stays_lazy():
    """The project's index holds only its live rows (deleted ones are tombstones), so a
    search whose lists see superseded rows takes the first ``k`` as ranked, without a
    query, and ranks no more chunks than it needs."""
    from memlite.storage.filters import Filters
    from memlite.storage.vector_index import passing

    pulled = []

    def chunks():
        for start in range(0, 1000, 10):
            pulled.append(start)
            yield [(start + i, 0.1) for i in range(10)]

    class NoQueries:
        def execute(self, *args, **kwargs):
            raise AssertionError("no query expected")

    got = passing(NoQueries(), chunks(), 25, Filters(project="/p", include_superseded=True))
    assert [oid for oid, _ in got] == list(range(25))
    assert pulled == [0, 10, 20]


def test_one_project_s_searches_share_the_whole_database_s_index(db, add_observation,
                                                                 monkeypatch):
    rng = np.random.default_rng(21)
    populate(db, add_observation, clustered(rng, 300))
    queries = clustered(rng, 5)
    shared = [indexed(db, q, 10) for q in queries]
    assert [project for _, project in vector_index._INDEXES] == [None]  # one index held
    # The same answers as an index of the project's own (the same rows, same order).
    vector_index.reset()
    with monkeypatch.context() as patched:
        patched.setattr(vector_index, "index_scope", lambda conn, project: project)
        assert [indexed(db, q, 10) for q in queries] == shared
        assert [project for _, project in vector_index._INDEXES] == ["/repo/a"]
    vector_index.reset()
    # A second project: each project has its own index again.
    populate(db, add_observation, clustered(rng, 50), project="/repo/b")
    assert indexed(db, queries[0], 10) is not None
    assert [project for _, project in vector_index._INDEXES] == ["/repo/a"]


def test_warm_builds_the_indexes_the_first_searches_use(db, add_observation, monkeypatch):
    rng = np.random.default_rng(22)
    populate(db, add_observation, clustered(rng, 40))
    populate(db, add_observation, clustered(rng, 30), project="/repo/b")
    monkeypatch.setattr(vector_index, "MIN_VECTORS", 50)
    # The whole database (70 vectors) passes; /repo/b, written last, has 30: too few.
    assert vector_warm.warm(db) == [None]
    assert [project for _, project in vector_index._INDEXES] == [None]
    monkeypatch.setattr(vector_index, "MIN_VECTORS", 20)
    assert vector_warm.warm(db) == [None, "/repo/b"]
    index = vector_index._INDEXES[(db.filename, "/repo/b")]
    assert index.size == 30
    # A search finds the index built (not a new one) and answers from it.
    assert indexed(db, clustered(rng, 1)[0], 5, project="/repo/b") is not None
    assert vector_index._INDEXES[(db.filename, "/repo/b")] is index
    monkeypatch.setattr(vector_index, "MIN_VECTORS", 1000)
    vector_index.reset()
    assert vector_warm.warm(db) == [] and not vector_index._INDEXES


def test_warm_without_vectors_builds_nothing(db, add_observation):
    add_observation(title="no vector table yet")
    assert vector_warm.warm(db) == [] and not vector_index._INDEXES


def test_warm_soon_builds_on_a_thread_of_its_own(db, add_observation):
    assert not vector_warm.warm_soon(db)  # no vectors: no thread
    populate(db, add_observation, clustered(np.random.default_rng(23), 40))
    assert vector_warm.warm_soon(db)
    deadline = time.monotonic() + 30
    while any(t.name == "memlite-vector-warm" for t in threading.enumerate()):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert vector_index._INDEXES[(db.filename, None)].size == 40
