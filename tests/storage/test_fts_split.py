"""Any-term BM25 split into selective and frequent terms (``memlite.storage.fts_split``):
every row holding a selective term keeps its exact full-query score, small databases are
searched with the full query, and the search engine uses the split when it applies."""

from __future__ import annotations

import pytest

from memlite import storage
from memlite.storage import fts_split
from memlite.storage.fts import OBSERVATION_WEIGHTS, fts_query
from memlite.storage.search import Filters, search

PROJECT = "/src/split"
ALL = (f"SELECT rowid, bm25(observations_fts, {OBSERVATION_WEIGHTS}) FROM observations_fts "
       "WHERE observations_fts MATCH ?")


@pytest.fixture
def conn(tmp_path):
    """300 observations: "common" in all, "middling" in every 3rd, "zebra" in every 30th,
    "quokka" in every 50th; lengths vary so that BM25 scores differ."""
    db = storage.connect(tmp_path)
    with db:
        for i in range(300):
            words = ["common"] * (1 + i % 3) + ["filler"] * (i % 7)
            if i % 3 == 0:
                words.append("middling")
            if i % 30 == 0:
                words.append("zebra")
            if i % 50 == 0:
                words += ["quokka"] * (1 + i % 4)
            storage.insert_observation(db, storage.NewObservation(
                session_id="s", project=PROJECT, type="discovery",
                title=" ".join(words), narrative=f"entry {i}", at_ms=1_000 + i))
    yield db
    db.close()


def _full(conn, query):
    return dict(conn.execute(ALL, (query,)).fetchall())


def test_the_split_scores_every_row_holding_a_selective_term_exactly(conn):
    query = fts_query("zebra quokka middling common", any_term=True)
    parts = fts_split.split(conn, query, budget=40)
    assert parts is not None
    assert set(parts.selective.split(" OR ")) == {'"zebra"', '"quokka"'}
    merged = parts.merge(conn.execute(ALL, (parts.selective,)).fetchall(),
                         conn.execute(ALL, (parts.both,)).fetchall())
    full = _full(conn, query)
    selective_rows = {r[0] for r in conn.execute(ALL, (parts.selective,))}
    assert {rowid for rowid, _ in merged} == selective_rows  # 10 + 6 rows, not 300
    for rowid, score in merged:  # "common", in every row, adds ~1e-6 to the full score
        assert score == pytest.approx(full[rowid], abs=1e-5)
    assert [s for _, s in merged] == sorted(s for _, s in merged)  # best (lowest) first
    # The full query's best rows are all among them (frequent-only rows score lower).
    best = sorted(full, key=full.get)[:10]
    assert set(best) <= selective_rows


def test_no_split_when_the_query_is_cheap_or_no_term_is_selective(conn):
    query = fts_query("zebra quokka middling common", any_term=True)
    assert fts_split.split(conn, query, budget=5_000) is None  # 300 + 100 + 10 + 6 rows
    assert fts_split.split(conn, fts_query("common middling", any_term=True), budget=40) is None
    assert fts_split.split(conn, '"common"', budget=1) is None  # one term: nothing to split


@pytest.mark.parametrize("share", ["dominant", "joined"])
def test_search_uses_the_split_and_keeps_the_best_matches(conn, monkeypatch, share):
    """Both full-text paths (the project holding the database, or a join on it) give the
    full query's top hits with the split on."""
    if share == "dominant":
        monkeypatch.setattr("memlite.storage.vector_index.project_share", lambda *_: 1.0)
    text = "zebra quokka middling common"
    full = [h.observation.id for h in search(conn, text, mode="fts",
                                             filters=Filters(project=PROJECT), limit=5).hits]
    calls = []
    real_plan = fts_split.plan

    def small_budget(c, query, budget=None):
        got = real_plan(c, query, budget=40)
        calls.append(got)
        return got

    monkeypatch.setattr(fts_split, "plan", small_budget)
    outcome = search(conn, text, mode="fts", filters=Filters(project=PROJECT), limit=5)
    assert calls and isinstance(calls[0], fts_split.Split)  # the split ran
    assert [h.observation.id for h in outcome.hits] == full


def test_newest_floor_keeps_the_newest_matches_or_all(conn):
    rowids = sorted(r[0] for r in conn.execute(ALL, ('"common"',)))  # all 300 rows
    assert fts_split.newest_floor(conn, '"common"', budget=40) == rowids[-40]
    assert fts_split.newest_floor(conn, '"zebra"', budget=40) == 0  # 10 rows: all kept
    assert fts_split.newest_floor(conn, '"common" OR "zebra"', budget=300) == rowids[0]
    assert fts_split.newest_floor(conn, '"common"', budget=301) == 0


def test_a_common_word_is_ranked_among_its_newest_matches(conn, monkeypatch):
    """One word matching more than the budget: nothing to split, so only the newest
    ``BUDGET`` matches are scored; the hits are the best of those, in BM25 order."""
    monkeypatch.setattr("memlite.storage.vector_index.project_share", lambda *_: 1.0)
    monkeypatch.setattr(fts_split, "BUDGET", 40)
    outcome = search(conn, "common", mode="fts", filters=Filters(project=PROJECT), limit=5)
    full = _full(conn, '"common"')
    newest = sorted(full)[-40:]
    want = sorted(newest, key=lambda rowid: (full[rowid], rowid))[:5]
    got = [h.observation.id for h in outcome.hits]
    assert got == want
    assert got != sorted(full, key=lambda rowid: (full[rowid], rowid))[:5]  # old answer
    # Under the budget, the whole query is scored as before.
    monkeypatch.setattr(fts_split, "BUDGET", 2_500)
    every = search(conn, "common", mode="fts", filters=Filters(project=PROJECT), limit=5)
    assert [h.observation.id for h in every.hits] == \
        sorted(full, key=lambda rowid: (full[rowid], rowid))[:5]


def test_a_frequent_term_in_most_rows_is_left_out_of_the_second_query(conn):
    """"common" is in every row: its BM25 IDF is clamped to 1e-6, so it scores nothing,
    and the second query leaves it out (merging its doclist cost the most)."""
    parts = fts_split.split(conn, fts_query("zebra quokka middling common", any_term=True),
                            budget=40)
    assert parts is not None and parts.both is not None
    assert '"common"' not in parts.both and '"middling"' in parts.both
    assert max(abs(score) for score in _full(conn, '"common"').values()) < 1e-5
    only_common = fts_split.split(conn, fts_query("quokka common", any_term=True),
                                  budget=10)
    assert only_common is not None and only_common.both is None  # nothing left to add
    assert only_common.selective.split(" OR ") == ['"quokka"']  # 6 rows within 10


def test_search_without_a_second_query_keeps_the_selective_rows(conn, monkeypatch):
    monkeypatch.setattr("memlite.storage.vector_index.project_share", lambda *_: 1.0)
    monkeypatch.setattr(fts_split, "BUDGET", 10)
    outcome = search(conn, "quokka common", mode="fts", filters=Filters(project=PROJECT),
                     limit=5)
    quokka = _full(conn, '"quokka"')
    assert [h.observation.id for h in outcome.hits] == \
        sorted(quokka, key=lambda rowid: (quokka[rowid], rowid))[:5]


def test_plan_skips_the_newest_walk_when_the_counts_fit_the_budget(conn, monkeypatch):
    """``plan``: the split when there is one; else 0 (score every match) when the terms'
    counts already show the query matches at most the budget, WITHOUT walking the
    doclists again (``newest_floor``); else the newest floor."""
    walks = []
    real_floor = fts_split.newest_floor

    def floor(c, query, budget=None):
        walks.append(query)
        return real_floor(c, query, budget)

    monkeypatch.setattr(fts_split, "newest_floor", floor)
    rowids = sorted(r[0] for r in conn.execute(ALL, ('"common"',)))
    zebra_quokka = fts_query("zebra quokka", any_term=True)  # 10 + 6 rows
    assert fts_split.plan(conn, zebra_quokka, budget=40) == 0
    assert walks == []
    assert fts_split.plan(conn, '"common"', budget=40) == rowids[-40]  # one term: walked
    assert fts_split.plan(conn, '"common" OR "middling"', budget=40) == rowids[-40]
    assert len(walks) == 2  # no selective term: the newest floor
    parts = fts_split.plan(conn, fts_query("zebra quokka middling common", any_term=True),
                           budget=40)
    assert isinstance(parts, fts_split.Split) and len(walks) == 2


def test_the_project_check_reads_the_index_and_agrees_with_the_filters(conn):
    """The join-free path's check of its top matches (project, supersession) is answered
    from the ``(project, superseded_by)`` index, with the same answer as
    ``filters.passing``, superseded rows included or not and other projects left out."""
    from memlite.storage import fts_lists
    from memlite.storage.filters import passing

    other = storage.insert_observation(conn, storage.NewObservation(
        session_id="s2", project="/src/other", type="discovery", title="common zebra",
        at_ms=5_000)).id
    conn.execute("UPDATE observations SET superseded_by = 2 WHERE id IN (1, 4)")
    ids = [1, 2, 3, 4, 5, other, 99_999]
    for filters in (Filters(project=PROJECT), Filters(project=PROJECT, include_superseded=True),
                    Filters(project="/src/other"), Filters()):
        assert fts_lists._passing(conn, ids, filters) == passing(conn, ids, filters)
    assert fts_lists._passing(conn, ids, Filters(project=PROJECT)) == {2, 3, 5}
    seen = []
    conn.exec_trace = lambda _c, sql, _b: seen.append(sql) or True
    try:
        fts_lists._passing(conn, ids, Filters(project=PROJECT))
    finally:
        conn.exec_trace = None
    plan = conn.execute("EXPLAIN QUERY PLAN " + seen[-1],
                        (PROJECT, "[1]")).fetchall()
    assert any("COVERING INDEX observations_project_live" in row[-1] for row in plan)


def test_the_join_free_path_checks_the_rest_only_when_a_top_match_fails(conn, monkeypatch):
    """The join-free path checks its top ``depth`` matches first; the next ``depth`` only
    when one of those is filtered out (a superseded match), and the answer is the joined
    query's either way."""
    from memlite.storage import fts_lists

    checked = []
    real_passing = fts_lists._passing

    def counting(c, ids, filters):
        checked.append(len(ids))
        return real_passing(c, ids, filters)

    monkeypatch.setattr(fts_lists, "_passing", counting)
    query = fts_query("common middling", any_term=True)
    plan = fts_split.plan(conn, query)
    rows = fts_lists._fts_dominant(conn, query, plan, Filters(), 10)
    assert checked == [10] and rows is not None and len(rows) == 10
    conn.execute("UPDATE observations SET superseded_by = ? WHERE id = ?",
                 (rows[-1][0], rows[0][0]))  # the best match is replaced
    checked.clear()
    again = fts_lists._fts_dominant(conn, query, plan, Filters(), 10)
    assert checked == [10, 10]
    assert again == fts_lists._fts_joined(conn, query, plan, Filters(), 10)
    assert again == rows[1:] + [again[-1]] and again[-1] not in rows


def test_full_text_mode_reads_only_the_list_it_shows(conn, monkeypatch):
    """``mode="fts"`` asks the BM25 list for ``limit`` hits, not the fusion's depth (its
    list is the answer); with superseded rows shown, the deeper list is kept (a replaced
    hit moves below its replacement, which may be found further down); the hits are the
    same as the deep list's top."""
    import memlite.storage.search as engine

    depths = []
    real_fts_list = engine.fts_list

    def fts_list(c, text, filters, depth, **kwargs):
        depths.append(depth)
        return real_fts_list(c, text, filters, depth, **kwargs)

    monkeypatch.setattr(engine, "fts_list", fts_list)
    text = "zebra middling common"
    shown = [h.observation.id for h in search(conn, text, mode="fts", limit=5).hits]
    assert depths == [5]
    deep = real_fts_list(conn, text, Filters(), engine.DEFAULT_FUSION.depth)
    assert shown == deep.ids[:5]
    search(conn, text, mode="fts", limit=5, filters=Filters(include_superseded=True))
    assert depths == [5, engine.DEFAULT_FUSION.depth]
