"""The in-memory full-text index against FTS5 on data nobody here wrote: LoCoMo's ten
conversations (``bench/eval/locomo_data``, its licence beside it) in one database, every
category 1-4 question asked of both, within its conversation and across all of them."""

from __future__ import annotations

import pytest

from bench.eval import locomo
from memlite import storage
from memlite.storage import bm25_index, fts_lists
from memlite.storage.filters import Filters
from memlite.storage.fts import OBSERVATION_WEIGHTS, fts_query


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    items, questions = locomo.load()
    built = locomo.build(items, questions, tmp_path_factory.mktemp("locomo"), None)
    yield built.conn, questions
    built.conn.close()


def _fts5(conn, query: str, fetch: int, project: str | None) -> list[tuple[int, float]]:
    where, params = ("AND o.project = ?", (project,)) if project else ("", ())
    return [(r[0], r[1]) for r in conn.execute(
        f"SELECT o.id, bm25(observations_fts, {OBSERVATION_WEIGHTS}) AS s "
        "FROM observations_fts JOIN observations AS o ON o.id = observations_fts.rowid "
        f"WHERE observations_fts MATCH ? {where} ORDER BY s, o.id LIMIT ?",
        (query, *params, fetch))]


def test_every_locomo_question_gets_fts5s_answer(corpus, monkeypatch):
    conn, questions = corpus
    monkeypatch.setattr(bm25_index, "MIN_ROWS", 1)  # 2,541 facts: over the real one too
    bm25_index.reset()
    try:
        assert bm25_index.warm(conn)
        asked = phrases = 0
        for q in questions:
            query = fts_query(q.text, any_term=True)
            if query is None:
                continue
            phrases += any(len(t) > 1 for t in bm25_index.phrase_tokens(conn, query))
            for project in (q.conversation, None):
                got = bm25_index.top(conn, query, 50, 10**9, project)
                expected = _fts5(conn, query, 50, project)
                assert got is not None, q.text
                assert [oid for oid, _ in got] == [oid for oid, _ in expected], q.text
                assert all(abs(a[1] - b[1]) <= 1e-12
                           for a, b in zip(got, expected, strict=True)), q.text
                asked += 1
            listed = fts_lists.fts_list(conn, q.text, Filters(project=q.conversation), 20,
                                        coverage=True)
            assert listed.coverage == fts_lists._coverage(conn, q.text, listed.ids), q.text
        assert asked >= 2_500 and phrases >= 100  # possessives: "John's" is "john s"
    finally:
        bm25_index.reset()


def test_the_database_is_large_enough_for_the_real_threshold(corpus):
    conn, _ = corpus
    assert conn.execute("SELECT count(*) FROM observations").fetchall()[0][0] \
        >= bm25_index.MIN_ROWS
    assert storage.schema_version(conn) >= 5
