"""The full-text list does less for the same answer (issue 14, search p50 at 100k): a
query of one term gets every hit's term coverage without reading a row; the coverage's
read brings the fusion's facts of the rows it reads (no second read of them); and the
split's "term in most rows" check stops counting past half the window. Each keeps the
answer: the shares are the row-by-row tokenizer's, the facts ``search._facts``', the
check the full count's."""

from __future__ import annotations

import numpy as np
import pytest

from memlite import storage
from memlite.storage import fts_lists, fts_split
from memlite.storage import search as engine
from memlite.storage.filters import Filters
from memlite.storage.search import search
from tests.storage.test_search_critical_path import DIM, coverage_row_by_row, populate, query_vector

pytestmark = pytest.mark.usefixtures("small_index")

ONE_TERM = ["cache", "the cache", "Parsing?", "src/billing.py", "RÉSUMÉ", "caching"]
MANY_TERMS = ["cache parser", "why do retries fail when parsing", "src/billing.py deploy",
              "cache of the retry", "Résumé naive caching"]


def _reads_of_rows(seen: list[str]) -> list[str]:
    return [sql for sql in seen if "narrative" in sql and "FROM observations" in sql]


@pytest.mark.parametrize("text", ONE_TERM)
def test_one_term_gets_every_hit_whole_without_reading_a_row(db, add_observation, text):
    populate(db, add_observation)
    add_observation(title="src/billing.py fixed", narrative="billing py src")
    seen: list[str] = []
    db.exec_trace = lambda _c, sql, _b: seen.append(sql) or True
    try:
        listed = fts_lists.fts_list(db, text, Filters(project="/repo/a"), 50, coverage=True)
    finally:
        db.exec_trace = None
    assert listed.ids, text
    assert listed.coverage == coverage_row_by_row(db, text, listed.ids)
    assert set(listed.coverage.values()) == {1.0}
    assert _reads_of_rows(seen) == []  # the old code read and tokenized the 50 rows


@pytest.mark.parametrize("text", MANY_TERMS)
def test_many_terms_still_read_the_rows_and_bring_their_facts(db, add_observation, text):
    populate(db, add_observation)
    seen: list[str] = []
    db.exec_trace = lambda _c, sql, _b: seen.append(sql) or True
    try:
        listed = fts_lists.fts_list(db, text, Filters(project="/repo/a"), 50, coverage=True)
    finally:
        db.exec_trace = None
    assert listed.ids, text
    assert listed.coverage == coverage_row_by_row(db, text, listed.ids)
    assert len(_reads_of_rows(seen)) == 1
    assert listed.facts == engine._facts(db, listed.ids)
    # Only with coverage: a plain list reads no row and so knows no facts.
    assert fts_lists.fts_list(db, text, Filters(project="/repo/a"), 50).facts == {}


def test_coverage_of_ids_the_query_did_not_match_is_still_counted(db, add_observation):
    """The one-term shortcut holds for the list's own hits only: asked about any ids,
    ``_coverage`` still reads them (a row without the term holds none of it)."""
    ids = populate(db, add_observation, n=30)
    lacking = add_observation(title="nothing relevant", narrative="here")
    got = fts_lists._coverage(db, "cache", [*ids, lacking])
    assert got == coverage_row_by_row(db, "cache", [*ids, lacking])
    assert got[lacking] == 0.0


@pytest.mark.parametrize("text", ["cache parser retry", "why do retries fail when parsing"])
def test_a_hybrid_search_reads_the_full_text_hits_facts_once(db, add_observation, text):
    populate(db, add_observation)
    filters = Filters(project="/repo/a")
    expected = [(h.observation.id, round(h.score, 9)) for h in
                search(db, text, filters=filters, query_vector=query_vector()).hits]
    listed = fts_lists.fts_list(db, text, Filters(project="/repo/a", include_superseded=True),
                                50, coverage=True)
    assert listed.facts
    asked: list[int] = []
    real = engine._facts

    def facts(conn, ids):
        asked.extend(ids)
        return real(conn, ids)

    engine._facts = facts
    try:
        got = search(db, text, filters=filters, query_vector=query_vector())
    finally:
        engine._facts = real
    assert [(h.observation.id, round(h.score, 9)) for h in got.hits] == expected
    assert not set(asked) & set(listed.facts)  # the old code asked for all of them again


def _window_rows(db, add_observation, n: int, share: float) -> None:
    for i in range(n):
        add_observation(title=("cache " if i % 100 < share * 100 else "") + f"row {i}",
                        narrative=("parser " if i % 2 else "") + "text")


@pytest.mark.parametrize("share", [0.1, 0.45, 0.5, 0.55, 0.9])
def test_the_most_rows_check_answers_as_the_full_count(db, add_observation, share):
    _window_rows(db, add_observation, 400, share)
    window = fts_split._window(db)
    floor, rows = window
    for phrase in ('"cache"', '"parser"', '"text"', '"row"', '"absent"'):
        full = db.execute("SELECT count(*) FROM observations_fts WHERE observations_fts "
                          "MATCH ? AND rowid > ?", (phrase, floor)).fetchall()[0][0]
        assert fts_split._in_most_rows(db, phrase, window) == (2 * full > rows), phrase


def test_the_most_rows_check_stops_past_half_the_window(db, add_observation):
    _window_rows(db, add_observation, 400, 0.9)
    window = fts_split._window(db)
    steps = [0]

    def count() -> bool:
        steps[0] += 1
        return False

    def measured(fn) -> int:
        steps[0] = 0
        db.set_progress_handler(count, 1)
        try:
            fn()
        finally:
            db.set_progress_handler(None)
        return steps[0]

    capped = measured(lambda: fts_split._in_most_rows(db, '"cache"', window))
    full = measured(lambda: db.execute(
        "SELECT count(*) FROM observations_fts WHERE observations_fts MATCH ? AND rowid > ?",
        ('"cache"', window[0])).fetchall())
    assert fts_split._in_most_rows(db, '"cache"', window)
    # 360 of 400 rows hold it: the check stops at 201 (the old one counted all 360).
    assert capped < 0.7 * full


def test_same_answers_at_the_split_on_a_generated_corpus(db, add_observation, monkeypatch):
    """Past the budget (a small one here), the split's lists and shares are the
    row-by-row tokenizer's for every query (one term and many), and a hybrid search's
    answer does not depend on where the fusion's facts were read."""
    rng = np.random.default_rng(3)
    words = ["cache", "parser", "billing", "retry", "schema", "deploy", "token", "queue",
             "lock", "flush", "index", "vector"]
    with db:
        for i in range(300):
            picked = rng.choice(words, size=6, p=np.linspace(3, 0.2, len(words))
                                / np.linspace(3, 0.2, len(words)).sum())
            add_observation(title=" ".join(picked[:3]) + f" n{i}",
                            narrative=" ".join(picked[3:]), session_id=f"s{i % 7}")
    monkeypatch.setattr(fts_split, "BUDGET", 60)
    storage.ensure_vector_table(db, DIM, "m")
    for text in ["cache", "lock flush", "why does the parser fail on billing retry",
                 "vector index schema", "queue"]:
        listed = fts_lists.fts_list(db, text, Filters(project="/repo/a",
                                                      include_superseded=True),
                                    50, coverage=True)
        assert listed.coverage == coverage_row_by_row(db, text, listed.ids)
        if listed.facts:
            assert listed.facts == engine._facts(db, listed.ids)


def test_the_project_check_with_superseded_rows_reads_each_row_once(db, add_observation):
    """With superseded rows included (a hybrid search's lists), the project check reads
    each id's row by its rowid: one lookup an id, where the index form sought the
    ``(project, superseded_by)`` index twice (live, then superseded). Same ids."""
    from memlite.storage.filters import passing

    ids = populate(db, add_observation, n=20)
    other = populate(db, add_observation, n=4, project="/repo/b")
    db.execute("UPDATE observations SET superseded_by = ? WHERE id IN (?, ?)",
               (ids[5], ids[0], ids[1]))
    asked = [*ids, *other, 99_999]
    seen: list[str] = []
    db.exec_trace = lambda _c, sql, _b: seen.append(sql) or True
    try:
        got = passing(db, asked, Filters(project="/repo/a", include_superseded=True))
    finally:
        db.exec_trace = None
    assert got == set(ids)
    assert got == passing(db, asked, Filters(project="/repo/a")) | {ids[0], ids[1]}
    assert len(seen) == 1 and "UNION" not in seen[0]
    plan = db.execute("EXPLAIN QUERY PLAN " + seen[0], ("[1]", "/repo/a")).fetchall()
    assert any("INTEGER PRIMARY KEY" in row[-1] for row in plan)


# --- reads needing no vector happen while the query is still being embedded ------------


def test_reads_needing_no_vector_come_while_the_query_is_still_being_embedded(
        db, add_observation, monkeypatch):
    """The embedding is still running when full text is done (the pool thread waits for
    it, so it is not scoring yet): the search's thread reads the file lists and the
    full-text ids' facts before it waits for the vector (the old code read them only
    while the pool thread scored, so here after the KNN). Same answer."""
    import threading

    from memlite.storage import vector_job

    populate(db, add_observation)
    text, filters, vector = "cache src/retry.py", Filters(project="/repo/a"), query_vector()
    expected = [(h.observation.id, round(h.score, 9)) for h in
                search(db, text, filters=filters, query_vector=vector).hits]
    events: list[str] = []
    read = threading.Event()
    real_facts, real_files = engine._facts, engine._file_lists

    def facts(conn, ids):
        events.append("facts")
        read.set()
        return real_facts(conn, ids)

    def files(*args, **kwargs):
        events.append("files")
        return real_files(*args, **kwargs)

    def source():  # the embedding: done once the search's thread has read what it can
        read.wait(10)
        events.append("vector")
        return vector, None

    monkeypatch.setattr(engine, "_facts", facts)
    monkeypatch.setattr(engine, "_file_lists", files)
    jobs: list[vector_job.VectorJob] = []
    real_start = vector_job.start

    def start(*args, **kwargs):
        job = real_start(*args, **kwargs)
        jobs.append(job)
        return job

    monkeypatch.setattr(engine.vector_job, "start", start)
    outcome = search(db, text, filters=filters, query_vector=source)
    assert jobs and jobs[0] is not None
    assert events[:2] == ["files", "facts"] and "vector" in events[2:]
    assert [(h.observation.id, round(h.score, 9)) for h in outcome.hits] == expected
