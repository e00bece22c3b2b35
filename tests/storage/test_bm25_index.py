"""The in-memory full-text index (``memlite.storage.bm25_index``) answers what FTS5's
``bm25()`` answers: the same rows, the same scores, kept up to date as rows are added,
deleted or changed, and it stands aside (None: FTS5 answers) whenever it cannot."""

from __future__ import annotations

import time

import numpy as np
import pytest

from memlite import storage
from memlite.storage import bm25_copy, bm25_index, fts, fts_lists, fts_split
from memlite.storage.filters import Filters
from memlite.storage.fts import OBSERVATION_WEIGHTS, fts_query

WORDS = ["cache", "parser", "retry", "billing", "invoice", "deploy", "lock", "queue",
         "token", "schema", "migration", "worker", "session", "timeout", "flush", "index",
         "résumé", "naïve", "caching", "parsing", "retries", "deployed", "Tokens"]
QUERIES = ["cache", "parser retry", "why do retries fail when parsing the invoice",
           "billing billing lock", "résumé naive", "Caching deployed workers",
           "schema migration timeout flush index queue", "nothingmatcheshere", "cache nothere"]


@pytest.fixture(autouse=True, params=["row by row", "in chunks"])
def any_size(monkeypatch, request):
    """An index for every table, however small (the real threshold is 2,500 rows);
    each test twice: rows added one by one, and in chunks of 16 past 8 rows at once
    (the real ones: 2,048 past 256, a build's)."""
    monkeypatch.setattr(bm25_index, "MIN_ROWS", 1)
    monkeypatch.setattr(bm25_index, "_AUTO_BUILD", True)  # as in the worker
    if request.param == "in chunks":
        monkeypatch.setattr(bm25_copy, "_BULK", 8)
        monkeypatch.setattr(bm25_copy, "_CHUNK", 16)
    bm25_index.reset()
    yield
    bm25_index.reset()


def _fill(add_observation, n: int, seed: int = 3, project: str = "/repo/a") -> list[int]:
    rng = np.random.default_rng(seed)
    return [add_observation(
        project=project, title=" ".join(rng.choice(WORDS, size=3)),
        subtitle=" ".join(rng.choice(WORDS, size=2)),
        narrative=" ".join(rng.choice(WORDS, size=int(rng.integers(3, 30)))),
        facts=[" ".join(rng.choice(WORDS, size=2)) for _ in range(int(rng.integers(0, 3)))],
        concepts=[str(rng.choice(WORDS))],
        files_read=[f"src/{rng.choice(WORDS[:8])}.py"],
        files_modified=[f"lib/{rng.choice(WORDS[8:16])}.py"] if i % 3 else [])
        for i in range(n)]


def _fts5(db, query: str, fetch: int, floor: int = 0) -> list[tuple[int, float]]:
    return [(r[0], r[1]) for r in db.execute(
        f"SELECT rowid, bm25(observations_fts, {OBSERVATION_WEIGHTS}) AS s "
        "FROM observations_fts WHERE observations_fts MATCH ? AND rowid >= ? "
        "ORDER BY s, rowid LIMIT ?", (query, floor, fetch))]


def _same(got, expected) -> None:
    assert got is not None
    assert [oid for oid, _ in got] == [oid for oid, _ in expected]
    assert np.allclose([s for _, s in got], [s for _, s in expected], rtol=0, atol=1e-12)


@pytest.mark.parametrize("text", QUERIES)
def test_the_scores_are_fts5s_own(db, add_observation, text):
    _fill(add_observation, 150)
    assert bm25_index.warm(db)
    query = fts_query(text, any_term=True)
    _same(bm25_index.top(db, query, 40, 10**9), _fts5(db, query, 40))


def test_rows_added_deleted_and_reused_are_followed(db, add_observation):
    ids = _fill(add_observation, 80)
    assert bm25_index.warm(db)
    query = fts_query("cache parser retry billing", any_term=True)
    _fill(add_observation, 20, seed=4)  # added after the build
    _same(bm25_index.top(db, query, 200, 10**9), _fts5(db, query, 200))
    with db:
        db.execute("DELETE FROM observations WHERE id IN (SELECT value FROM json_each(?))",
                   (str(ids[::3]).replace(" ", ""),))
    _same(bm25_index.top(db, query, 200, 10**9), _fts5(db, query, 200))
    # The highest id deleted, then a new row takes it again between two searches: the
    # held copy cannot tell it from a text changed in place. FTS5 answers, a build
    # starts, and the rebuilt copy has the new row.
    top = max(r[0] for r in db.execute("SELECT id FROM observations"))
    with db:
        db.execute("DELETE FROM observations WHERE id = ?", (top,))
    reused = add_observation(title="zebra", narrative="parser")
    assert reused == top
    assert bm25_index.top(db, query, 200, 10**9) is None
    _same(_when_built(db, query, 200), _fts5(db, query, 200))
    assert bm25_index.top(db, '"zebra"', 10, 10**9) == _fts5(db, '"zebra"', 10)
    assert [oid for oid, _ in _fts5(db, '"zebra"', 10)] == [reused]


def _when_built(db, query: str, fetch: int) -> list[tuple[int, float]]:
    deadline = time.monotonic() + 30
    while (got := bm25_index.top(db, query, fetch, 10**9)) is None:
        assert time.monotonic() < deadline, "the index was never built again"
        time.sleep(0.02)
    return got


def test_a_text_changed_in_place_is_not_answered_until_built_again(db, add_observation):
    ids = _fill(add_observation, 60)
    assert bm25_index.warm(db)
    query = fts_query("zebra", any_term=True)
    assert bm25_index.top(db, query, 10, 10**9) == []
    with db:  # same row count; the narrative's token count changes
        db.execute("UPDATE observations SET narrative = 'zebra zebra crossing' WHERE id = ?",
                   (ids[5],))
    # The held copy cannot say which row changed: FTS5 answers, and a build starts.
    assert bm25_index.top(db, query, 10, 10**9) is None
    got = _when_built(db, query, 10)
    assert got == _fts5(db, query, 10)
    assert [oid for oid, _ in got] == [ids[5]]


@pytest.mark.parametrize("text", ["src/cache.py", "what's in lib/lock.py for the cache",
                                  "billing's retry", "parser_retry cache", "lock py",
                                  "REQUEST_LIMIT_EXCEEDED: limit exceeded"])
def test_a_phrase_of_several_tokens_gets_its_rows_from_fts5(db, add_observation, text):
    """Positions are not held: the phrase's rows and weighted counts come from FTS5
    (its single-phrase scores, inverted), the words' from the copy: FTS5's scores."""
    _fill(add_observation, 120)
    add_observation(title="billing's retry parser_retry", narrative="billing s retry")
    # "exceeded" stems to "exceed", and "exceed" to "excee": the phrase is asked of FTS5
    # as the query quotes it, not rebuilt from its stems.
    add_observation(title="REQUEST_LIMIT_EXCEEDED: over the limit", facts=["limit exceeded"])
    assert bm25_index.warm(db)
    query = fts_query(text, any_term=True)
    _same(bm25_index.top(db, query, 40, 10**9), _fts5(db, query, 40))
    _same(bm25_index.top(db, query, 40, 10**9, "/repo/a"), _fts5_in(db, query, 40, "/repo/a"))
    assert bm25_index.phrase_tokens(db, '"Caching" OR "résumé" OR "?" OR "a.b"') == [
        ("cach",), ("resum",), ("a", "b")]


def test_common_terms_rank_their_newest_matches_only(db, add_observation):
    """Every term in more than ``newest`` rows: the best of the newest ``newest``
    matches, as ``fts_split.newest_floor`` has FTS5 do."""
    _fill(add_observation, 200)
    assert bm25_index.warm(db)
    query = fts_query("cache parser", any_term=True)
    floor = fts_split.newest_floor(db, query, 50)
    assert floor > 0
    _same(bm25_index.top(db, query, 20, 50), _fts5(db, query, 20, floor))
    # Slots out of id order (rows re-added after a resync): the newest found by id.
    bm25_index._INDEXES[db.filename].ascending = False
    _same(bm25_index.top(db, query, 20, 50), _fts5(db, query, 20, floor))
    # One rare term (in at most ``newest`` rows) and the whole query is scored.
    add_observation(title="zebra cache")
    query = fts_query("zebra cache parser", any_term=True)
    _same(bm25_index.top(db, query, 20, 50), _fts5(db, query, 20))


def test_a_small_table_gets_no_index(db, add_observation, monkeypatch):
    monkeypatch.setattr(bm25_index, "MIN_ROWS", 100)
    _fill(add_observation, 40)
    assert not bm25_index.warm(db)
    assert bm25_index.top(db, fts_query("cache", any_term=True), 10, 10**9) is None
    assert not bm25_index.build_soon(db)


def test_over_its_memory_budget_it_answers_nothing(db, add_observation, monkeypatch):
    monkeypatch.setattr(bm25_copy, "MEMORY_BUDGET", 1_000)
    _fill(add_observation, 60)
    assert not bm25_index.warm(db)
    assert bm25_index.top(db, fts_query("cache", any_term=True), 10, 10**9) is None


def test_the_first_search_builds_it_on_a_thread_and_fts5_answers_meanwhile(db, add_observation):
    _fill(add_observation, 120)
    text = "why do retries fail when parsing the invoice"
    first = fts_lists.fts_list(db, text, Filters(), 20)
    assert first.ids  # FTS5's answer: the index is being built
    _when_built(db, fts_query(text, any_term=True), 40)
    assert fts_lists.fts_list(db, text, Filters(), 20) == first


@pytest.mark.parametrize("text", QUERIES)
def test_the_full_text_list_is_the_same_with_or_without_it(db, add_observation, text,
                                                            monkeypatch):
    """Below ``fts_split.BUDGET`` matches FTS5 scores every match: the same list."""
    ids = _fill(add_observation, 150)
    _fill(add_observation, 60, seed=8, project="/repo/b")
    with db:  # a few superseded rows: the list checks its filters on the index's best
        db.execute("UPDATE observations SET superseded_by = ? WHERE id IN (?, ?, ?)",
                   (ids[-1], ids[0], ids[1], ids[2]))
    for filters in (Filters(), Filters(project="/repo/a"),
                    Filters(project="/repo/a", include_superseded=True)):
        monkeypatch.setattr(bm25_index, "top", lambda *a, **k: None)
        without = fts_lists.fts_list(db, text, filters, 20, coverage=True)
        monkeypatch.undo()
        monkeypatch.setattr(bm25_index, "MIN_ROWS", 1)
        assert bm25_index.warm(db)
        listed = fts_lists.fts_list(db, text, filters, 20, coverage=True)
        # The same list and shares; a list the index answered reads no row, so it
        # brings no facts (the search reads them with the other candidates').
        assert (listed.ids, listed.measure, listed.coverage) == \
            (without.ids, without.measure, without.coverage)
        assert set(listed.facts) <= set(without.facts)


@pytest.mark.parametrize("text", [*QUERIES, "src/cache.py parser", "the of", "don't cache"])
def test_term_coverage_from_the_postings_is_the_row_by_rows(db, add_observation, text):
    ids = _fill(add_observation, 120)
    assert bm25_index.warm(db)
    tokenize = db.fts5_tokenizer(*bm25_index.TOKENIZER)
    got = bm25_index.coverage(db, fts_lists._phrases(tokenize, text), ids)
    assert got == fts_lists._coverage(db, text, ids)
    assert bm25_index.coverage(db, [("cach",)], [10**6]) is None  # an id it does not hold


def test_many_superseded_best_rows_ask_it_for_more(db, add_observation, monkeypatch):
    ids = _fill(add_observation, 40)
    best = [add_observation(title="zebra zebra zebra", narrative=f"step{i}") for i in range(30)]
    with db:
        db.execute("UPDATE observations SET superseded_by = ? WHERE id IN "
                   "(SELECT value FROM json_each(?))", (ids[0], str(best[:25]).replace(" ", "")))
    add_observation(title="zebra")
    assert bm25_index.warm(db)
    asked: list[int] = []
    real = bm25_index.top
    monkeypatch.setattr(bm25_index, "top", lambda conn, q, fetch, newest, project:
                        asked.append(fetch) or real(conn, q, fetch, newest, project))
    listed = fts_lists.fts_list(db, "zebra", Filters(), 5)
    assert asked == [10, 20, 40]  # 10 and 20 rows hold no live one; 40 hold five
    assert listed.ids == best[25:]


def test_varints_are_sqlites():
    assert fts.varints(b"\xce\x10\x05", 2) == [10_000, 5]
    assert fts.varints(b"\x81\x80\x00", 1) == [16_384]
    assert fts.varints(b"\xff" * 8 + b"\x01", 1) == [(2**56 - 1) << 8 | 1]
    assert fts.varints(b"\x81", 1) is None


def test_a_stored_database_keeps_its_answers_through_a_reopen(data_dir, add_observation, db):
    _fill(add_observation, 50)
    query = fts_query("cache parser", any_term=True)
    reader = storage.connect(data_dir, writer=False)
    try:
        assert bm25_index.warm(reader)
        _same(bm25_index.top(reader, query, 30, 10**9), _fts5(db, query, 30))
    finally:
        reader.close()


def test_a_merge_keeps_every_answer(db, add_observation):
    """Postings added since the build, and dropped rows, folded into the arrays: the
    same answers before and after, and FTS5's."""
    ids = _fill(add_observation, 80)
    assert bm25_index.warm(db)
    _fill(add_observation, 5, seed=6)  # fewer than a chunk: listed apart
    with db:
        db.execute("DELETE FROM observations WHERE id IN (SELECT value FROM json_each(?))",
                   (str(ids[1::4]).replace(" ", ""),))
    queries = [fts_query(text, any_term=True) for text in QUERIES]
    before = [bm25_index.top(db, query, 60, 10**9) for query in queries]
    index = bm25_index._INDEXES[db.filename]
    assert index.added  # the rows added since the build are still listed apart
    with index.lock:
        index.merge()
    assert not index.added
    assert not np.isin(index.slots, np.flatnonzero(~index.alive[:index.count])).any()
    for query, earlier in zip(queries, before, strict=True):
        assert bm25_index.top(db, query, 60, 10**9) == earlier
        _same(earlier, _fts5(db, query, 60))


def test_a_weighted_count_past_uint16_is_kept_exact(db, add_observation):
    _fill(add_observation, 20)
    add_observation(title="flood", narrative="zebra " * 70_000)  # f = 70,000 > 65,535
    assert bm25_index.warm(db)
    assert bm25_index._INDEXES[db.filename].weights.dtype == np.float32
    query = fts_query("zebra cache", any_term=True)
    _same(bm25_index.top(db, query, 10, 10**9), _fts5(db, query, 10))


def test_rows_holding_the_break_word_are_tokenized_one_by_one(db, add_observation):
    """A build tokenizes many texts in one call with a marker word between them; rows
    that hold that word themselves are tokenized text by text instead, same scores."""
    _fill(add_observation, 40)
    add_observation(title=f"cache {fts.SEPARATOR} parser", narrative=fts.SEPARATOR)
    _fill(add_observation, 40, seed=9)
    assert bm25_index.warm(db)
    for text in ("cache parser", fts.SEPARATOR, "retry"):
        query = fts_query(text, any_term=True)
        _same(bm25_index.top(db, query, 30, 10**9), _fts5(db, query, 30))


def test_a_one_off_process_starts_no_build(db, add_observation, monkeypatch):
    """Outside the worker (``memlite search`` with the worker down) FTS5 answers and no
    thread is started for a copy the process would not live to use."""
    monkeypatch.setattr(bm25_index, "_AUTO_BUILD", False)
    _fill(add_observation, 30)
    assert fts_lists.fts_list(db, "cache parser", Filters(), 10).ids
    assert bm25_index.top(db, fts_query("cache", any_term=True), 10, 10**9) is None
    assert db.filename not in bm25_index._INDEXES
    assert db.filename not in bm25_index._BUILDING


def test_a_copy_whose_tokens_are_not_fts5s_is_given_up(db, add_observation, monkeypatch):
    _fill(add_observation, 30)
    real = fts.document_tokens
    monkeypatch.setattr(fts, "document_tokens", lambda tok, text: [*real(tok, text), "extra"])
    assert not bm25_index.warm(db)
    index = bm25_index._INDEXES[db.filename]
    assert index.unusable and index.count == 0
    monkeypatch.setattr(fts, "document_tokens", real)
    _fill(add_observation, 5, seed=11)  # the table changes: still given up, no rebuild
    assert bm25_index.top(db, fts_query("cache", any_term=True), 10, 10**9) is None
    assert index.count == 0


def _fts5_in(db, query: str, fetch: int, project: str) -> list[tuple[int, float]]:
    return [(r[0], r[1]) for r in db.execute(
        f"SELECT o.id, bm25(observations_fts, {OBSERVATION_WEIGHTS}) AS s "
        "FROM observations_fts JOIN observations AS o ON o.id = observations_fts.rowid "
        "WHERE observations_fts MATCH ? AND o.project = ? ORDER BY s, o.id LIMIT ?",
        (query, project, fetch))]


@pytest.mark.parametrize("text", QUERIES)
def test_a_project_of_a_few_rows_is_searched_in_the_copy_too(db, add_observation, text):
    """A project holding a small share of the database: its own rows, FTS5's scores
    (IDFs over the whole table, as FTS5's), with no vector index to say its share."""
    _fill(add_observation, 150)
    _fill(add_observation, 12, seed=13, project="/repo/small")
    assert bm25_index.warm(db)
    query = fts_query(text, any_term=True)
    _same(bm25_index.top(db, query, 20, 10**9, "/repo/small"),
          _fts5_in(db, query, 20, "/repo/small"))
    assert bm25_index.top(db, query, 20, 10**9, "/repo/none") == []
    listed = fts_lists.fts_list(db, text, Filters(project="/repo/small"), 20, coverage=True)
    assert listed.ids == [oid for oid, _ in _fts5_in(db, query, 20, "/repo/small")]


def test_many_new_rows_are_taken_in_by_a_new_build_not_by_a_search(db, add_observation,
                                                                    monkeypatch):
    monkeypatch.setattr(bm25_copy, "FOLD_LIMIT", 10)
    _fill(add_observation, 30)
    assert bm25_index.warm(db)
    query = fts_query("cache parser", any_term=True)
    _fill(add_observation, 5, seed=21)  # a few: taken in by the search
    _same(bm25_index.top(db, query, 50, 10**9), _fts5(db, query, 50))
    _fill(add_observation, 40, seed=22)  # an import's worth: FTS5 answers, a build starts
    assert bm25_index.top(db, query, 50, 10**9) is None
    _same(_when_built(db, query, 50), _fts5(db, query, 50))


def test_a_row_committed_during_a_refresh_does_not_start_a_build(data_dir, db, add_observation,
                                                                 monkeypatch):
    """The refresh reads FTS5's counts and the new rows in one snapshot: a row another
    connection commits in between is seen by the next search, not half by this one
    (which made the totals disagree and started a needless build)."""
    _fill(add_observation, 30)
    reader = storage.connect(data_dir, writer=False)
    try:
        assert bm25_index.warm(reader)
        add_observation(title="a commit since: the next search reads the counts again")
        real = fts.fts5_averages
        written: list[int] = []

        def averages_then_a_write(conn):
            got = real(conn)
            if not written:  # once
                written.append(add_observation(title="zebra crossing"))
            return got

        monkeypatch.setattr(fts, "fts5_averages", averages_then_a_write)
        query = fts_query("zebra", any_term=True)
        first = bm25_index.top(reader, query, 10, 10**9)
        assert written and first == []  # its snapshot: before the zebra
        assert not bm25_index._INDEXES[reader.filename].stale
        second = bm25_index.top(reader, query, 10, 10**9)
        _same(second, _fts5(db, query, 10))
        assert [oid for oid, _ in second] == written
    finally:
        reader.close()


def test_with_no_commit_since_a_search_reads_no_counts(data_dir, db, add_observation,
                                                        monkeypatch):
    """A connection that found the copy current, with no commit since, does not read
    FTS5's counts again; a commit by another connection (the worker's writer), or rows
    the connection wrote itself, make the next search read them and find the new rows."""
    _fill(add_observation, 30)
    reader = storage.connect(data_dir, writer=False)
    try:
        assert bm25_index.warm(reader)
        real = fts.fts5_averages
        reads: list[object] = []

        def counted(conn):
            reads.append(conn)
            return real(conn)

        monkeypatch.setattr(fts, "fts5_averages", counted)
        query = fts_query("zebra", any_term=True)
        assert bm25_index.top(reader, query, 10, 10**9) == []
        assert reads == []  # nothing committed since the build's refresh
        written = [add_observation(title="zebra crossing")]  # through ``db``: another one
        _same(bm25_index.top(reader, query, 10, 10**9), _fts5(db, query, 10))
        assert [oid for oid, _ in bm25_index.top(reader, query, 10, 10**9)] == written
        assert reads == [reader]  # once, for the commit; not for the search after it
        assert bm25_index.top(db, query, 10, 10**9) is not None  # ``db`` current too
        reads.clear()
        written.append(add_observation(title="zebra again"))  # ``db`` writes itself
        assert sorted(oid for oid, _ in bm25_index.top(db, query, 10, 10**9)) == written
        assert reads == [db]
    finally:
        reader.close()
