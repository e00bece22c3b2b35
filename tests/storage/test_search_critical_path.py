"""The hybrid search's own thread does less, and never waits for a thread that has not
run yet (issue 14, search p50 at 100k): the full-text list's term coverage tokenizes its
rows in one call; the KNN's filter check reads the ``(project, superseded_by)`` index, not
the rows; what needs no vector is read before waiting for the KNN; and the search's
thread scores the KNN itself when the pool thread has not started it. Each keeps the
answer the search gave before."""

from __future__ import annotations

import threading

import apsw
import numpy as np
import pytest

from memlite import storage
from memlite.storage import fts, fts_lists, vector_index, vector_job
from memlite.storage import search as engine
from memlite.storage.filters import Filters, passing
from memlite.storage.fts import STOPWORDS, query_terms
from memlite.storage.search import search

DIM = 32
WORDS = ["cache", "parser", "billing", "retry", "schema", "deploy", "token", "queue",
         "Résumé", "naïve", "retries", "parsing", "caching"]


pytestmark = pytest.mark.usefixtures("small_index")


def populate(db, add_observation, n: int = 120, project: str = "/repo/a") -> list[int]:
    rng = np.random.default_rng(5)
    offset = np.random.default_rng(0).standard_normal(DIM).astype(np.float32)
    vectors = rng.standard_normal((n, DIM)).astype(np.float32) + offset
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    storage.ensure_vector_table(db, DIM, "m")
    with db:
        ids = [add_observation(
            project=project, type=("decision", "bugfix", "discovery")[i % 3],
            session_id=f"s{i % 4}", title=" ".join(rng.choice(WORDS, size=3)) + f" step {i}",
            narrative=" ".join(rng.choice(WORDS, size=6)),
            facts=[" ".join(rng.choice(WORDS, size=2))],
            files_read=[f"src/{rng.choice(WORDS[:8])}.py"]) for i in range(n)]
        storage.upsert_vectors(db, [(oid, project, vectors[i].tobytes())
                                    for i, oid in enumerate(ids)])
    return ids


def query_vector(seed: int = 9) -> bytes:
    rng = np.random.default_rng(seed)
    offset = np.random.default_rng(0).standard_normal(DIM).astype(np.float32)
    row = rng.standard_normal(DIM).astype(np.float32) + offset
    return (row / np.linalg.norm(row)).astype(np.float32).tobytes()


def answer(outcome) -> list[tuple[int, float, int | None, int | None]]:
    return [(h.observation.id, round(h.score, 9), h.fts_rank, h.vector_rank)
            for h in outcome.hits]


def coverage_row_by_row(conn: apsw.Connection, text: str, ids: list[int]) -> dict[int, float]:
    """The term coverage as it was computed before: each row tokenized on its own."""
    tokenize = conn.fts5_tokenizer(*fts.TOKENIZER)
    terms = query_terms(text)
    content = [t for t in terms if t.lower().strip("?!.,;:'\"") not in STOPWORDS] or terms
    phrases = [p for p in (tuple(fts.document_tokens(tokenize, t)) for t in content) if p]
    out = {}
    for oid, *fields in conn.execute(
            "SELECT id, title, subtitle, narrative, facts, concepts, files_read, "
            "files_modified FROM observations WHERE id IN (SELECT value FROM json_each(?))",
            (str(ids),)):
        held = set(fts.document_tokens(tokenize, " ".join(f or "" for f in fields)))
        out[oid] = sum(1 for p in phrases if held.issuperset(p)) / len(phrases)
    return out


# --- term coverage: one tokenizer call for the rows -----------------------------------


@pytest.mark.parametrize("text", ["cache parser", "why do retries fail when parsing",
                                  "RESUME naive caching", "src/billing.py deploy",
                                  "the of and"])
def test_coverage_tokenizes_the_rows_in_one_call_with_the_same_shares(
        db, add_observation, monkeypatch, text):
    populate(db, add_observation)
    ids = [r[0] for r in db.execute("SELECT id FROM observations ORDER BY id LIMIT 40")]
    expected = coverage_row_by_row(db, text, ids)
    calls: list[int] = []
    real = fts.document_tokens

    def counting(tokenize, piece):
        calls.append(len(piece))
        return real(tokenize, piece)

    monkeypatch.setattr(fts, "document_tokens", counting)
    got = fts_lists._coverage(db, text, ids)
    assert got == expected and len(got) == 40
    # The query's terms and the break word are short; the rows go in one long call.
    long_calls = [n for n in calls if n > 200]
    assert len(long_calls) == 1


@pytest.mark.parametrize("planted", ["memlitexrowxbreak", "MEMLITEXROWXBREAK now",
                                     "memlitexrowxbreaks"])
def test_a_row_holding_the_break_word_still_gets_its_own_share(db, add_observation, planted):
    """A row whose text yields the separator's token (any case; the porter stem of a
    plural too) cannot misalign the rows: each is then tokenized alone."""
    populate(db, add_observation, n=10)
    planted_id = add_observation(title=f"cache {planted} parser", narrative="retry")
    ids = [r[0] for r in db.execute("SELECT id FROM observations ORDER BY id")]
    for text in ("cache retry", "memlitexrowxbreak cache"):
        got = fts_lists._coverage(db, text, ids)
        assert got == coverage_row_by_row(db, text, ids)
    assert fts_lists._coverage(db, "cache retry", ids)[planted_id] == 1.0


def test_held_splits_at_the_breaks_and_falls_back_when_a_text_holds_one(db):
    tokenize = db.fts5_tokenizer(*fts.TOKENIZER)
    texts = ["Caching parsers", "", "retries: cache", "nothing here"]
    wanted = {"cach", "parser", "retri"}
    expected = [{"cach", "parser"}, set(), {"retri", "cach"}, set()]
    assert fts_lists._held(tokenize, texts, wanted) == expected
    assert fts_lists._held(tokenize, [*texts[:2], "x Memlitexrowxbreak y", *texts[2:]],
                           wanted) == [expected[0], set(), set(), *expected[2:]]


# --- the KNN's filter check from the index ---------------------------------------------


def test_the_knn_filter_check_reads_the_project_index_not_the_rows(db, add_observation):
    ids = populate(db, add_observation, n=30)
    other = populate(db, add_observation, n=5, project="/repo/b")
    db.execute("UPDATE observations SET superseded_by = ? WHERE id IN (?, ?)",
               (ids[5], ids[0], ids[1]))
    chunks = [[(oid, 0.1) for oid in [*ids[:10], *other]], [(oid, 0.2) for oid in ids[10:]]]
    seen: list[str] = []
    db.exec_trace = lambda _c, sql, _b: seen.append(sql) or True
    try:
        kept = vector_index.passing(db, iter(chunks), 12, Filters(project="/repo/a"))
    finally:
        db.exec_trace = None
    assert [oid for oid, _ in kept] == [*ids[2:10], *ids[10:14]]
    where = Filters(project="/repo/a").where("o")
    assert kept == vector_index.passing(db, iter(chunks), 12, where)  # the SQL conditions
    plan = db.execute("EXPLAIN QUERY PLAN " + seen[0], ("/repo/a", "[1]")).fetchall()
    assert any("COVERING INDEX observations_project_live" in row[-1] for row in plan)


@pytest.mark.parametrize("filters", [Filters(project="/repo/a"),
                                     Filters(project="/repo/a", include_superseded=True),
                                     Filters(project="/repo/b"), Filters(),
                                     Filters(project="/repo/a", types=("bugfix",))])
def test_passing_agrees_with_the_filters_conditions(db, add_observation, filters):
    ids = populate(db, add_observation, n=20)
    ids += populate(db, add_observation, n=5, project="/repo/b")
    db.execute("UPDATE observations SET superseded_by = ? WHERE id IN (?, ?, ?)",
               (ids[3], ids[0], ids[7], ids[-1]))
    clauses, params = filters.where("o")
    sql = ("SELECT o.id FROM observations AS o WHERE o.id IN (SELECT value FROM json_each(?))"
           + "".join(" AND " + c for c in clauses))
    asked = [*ids, 10**9]
    assert passing(db, asked, filters) == {r[0] for r in db.execute(sql, (str(asked), *params))}


# --- reads needing no vector happen before the wait for the KNN -------------------------


def test_reads_needing_no_vector_come_before_waiting_for_the_knn(db, add_observation,
                                                               monkeypatch):
    """While the pool thread is still scoring, the search's thread reads the file lists
    and the full-text ids' facts instead of waiting idle; the answer is unchanged."""
    populate(db, add_observation)
    events: list[str] = []
    real_result, real_facts = vector_job.VectorJob.result, engine._facts
    real_files, real_scored = engine._file_lists, vector_index.scored
    read_early = threading.Event()

    def result(self):
        events.append("wait")
        return real_result(self)

    def facts(conn, ids):
        events.append("facts")
        read_early.set()
        return real_facts(conn, ids)

    def files(*args, **kwargs):
        events.append("files")
        return real_files(*args, **kwargs)

    scoring = threading.Event()
    real_fts = engine.fts_list

    def scored(*args, **kwargs):
        scoring.set()
        read_early.wait(10)  # the pool thread is slow: still scoring after full text
        return real_scored(*args, **kwargs)

    def fts(*args, **kwargs):
        scoring.wait(10)  # full text ends once the pool thread is scoring
        return real_fts(*args, **kwargs)

    text = "cache parser src/retry.py"
    filters = Filters(project="/repo/a")
    expected = answer(search(db, text, filters=filters, query_vector=query_vector()))
    monkeypatch.setattr(vector_job.VectorJob, "result", result)
    monkeypatch.setattr(engine, "_facts", facts)
    monkeypatch.setattr(engine, "_file_lists", files)
    monkeypatch.setattr(vector_index, "scored", scored)
    monkeypatch.setattr(engine, "fts_list", fts)
    outcome = search(db, text, filters=filters, query_vector=query_vector())
    assert events[:3] == ["files", "facts", "wait"]
    assert answer(outcome) == expected
    with monkeypatch.context() as m:  # the lists in turn: the same answer
        m.setattr(vector_job, "start", lambda *_a, **_k: None)
        assert answer(search(db, text, filters=filters, query_vector=query_vector())) \
            == expected


def test_nothing_is_read_twice_when_the_knn_is_already_done(db, add_observation,
                                                           monkeypatch):
    """With the KNN scored by the time full text is done, the fusion's facts are read
    in one go, after it (no early read to add a statement)."""
    populate(db, add_observation)
    reads: list[int] = []
    real_facts, real_fts = engine._facts, engine.fts_list

    def facts(conn, ids):
        reads.append(len(ids))
        return real_facts(conn, ids)

    def fts(*args, **kwargs):
        out = real_fts(*args, **kwargs)
        for job in started:  # full text ends after the pool thread's KNN
            job.future.result(timeout=30)
        return out

    started: list[vector_job.VectorJob] = []
    real_start = vector_job.start

    def start(*args, **kwargs):
        job = real_start(*args, **kwargs)
        started.append(job)
        return job

    monkeypatch.setattr(engine, "_facts", facts)
    monkeypatch.setattr(engine, "fts_list", fts)
    monkeypatch.setattr(vector_job, "start", start)
    search(db, "cache parser", filters=Filters(project="/repo/a"), query_vector=query_vector())
    assert started and len(reads) == 1


# --- the search's thread scores when the pool thread has not ---------------------------


def test_the_search_thread_scores_when_the_pool_thread_has_not_started(
        db, add_observation, monkeypatch):
    """The pool thread is held back (as a busy machine may not run it for ms); the
    search's thread, its full text done, scores the KNN itself instead of waiting, with
    the same answer; the pool thread, let go later, scores nothing."""
    populate(db, add_observation)
    vector = query_vector(11)
    filters = Filters(project="/repo/a")
    with monkeypatch.context() as m:
        m.setattr(vector_job, "start", lambda *_a, **_k: None)
        expected = answer(search(db, "cache retry", filters=filters, query_vector=vector))
    release = threading.Event()
    scorers: list[str] = []
    real_scored = vector_index.scored

    def scored(*args, **kwargs):
        scorers.append(threading.current_thread().name)
        return real_scored(*args, **kwargs)

    def source():
        if threading.current_thread().name.startswith("memlite-knn"):
            release.wait(30)  # the pool thread, held back until the search is over
        return vector, None

    monkeypatch.setattr(vector_index, "scored", scored)
    seen: list[vector_job.VectorJob] = []
    real_start = vector_job.start

    def start(*args, **kwargs):
        job = real_start(*args, **kwargs)
        seen.append(job)
        return job

    monkeypatch.setattr(engine.vector_job, "start", start)
    try:
        outcome = search(db, "cache retry", filters=filters, query_vector=source)
        assert scorers == [threading.current_thread().name]
        assert answer(outcome) == expected and outcome.mode_used == "hybrid"
    finally:
        release.set()
    assert seen and seen[0] is not None
    assert seen[0].future.result(timeout=30) is None  # the pool thread left it alone
    assert len(scorers) == 1


def test_the_pool_thread_scores_when_it_has_the_vector_first(db, add_observation,
                                                           monkeypatch):
    """With the vector at hand, the pool thread scores while full text runs (the
    search's thread then only takes its result)."""
    populate(db, add_observation)
    scorers: list[str] = []
    real_scored = vector_index.scored
    scored_done = threading.Event()
    real_fts = engine.fts_list

    def scored(*args, **kwargs):
        scorers.append(threading.current_thread().name)
        out = real_scored(*args, **kwargs)
        scored_done.set()
        return out

    def fts(*args, **kwargs):
        scored_done.wait(30)  # full text finishes after the pool thread scored
        return real_fts(*args, **kwargs)

    monkeypatch.setattr(vector_index, "scored", scored)
    monkeypatch.setattr(engine, "fts_list", fts)
    outcome = search(db, "cache retry", filters=Filters(project="/repo/a"),
                     query_vector=query_vector())
    assert len(scorers) == 1 and scorers[0].startswith("memlite-knn")
    assert outcome.mode_used == "hybrid"


# --- a large database is read through a memory map --------------------------------------


def test_a_large_database_is_memory_mapped_for_readers_only(data_dir, db, monkeypatch):
    from memlite.storage import db as dbmodule

    def mapped(conn) -> int:
        return int(conn.execute("PRAGMA mmap_size").fetchall()[0][0])

    small = storage.connect(data_dir, writer=False)  # a new database: far below 64 MB
    try:
        assert mapped(small) == 0
    finally:
        small.close()
    monkeypatch.setattr(dbmodule, "READER_MMAP_FROM_BYTES", 1)  # as if it were large
    reader = storage.connect(data_dir, writer=False)
    writer = storage.connect(data_dir)
    try:
        assert mapped(reader) == dbmodule.READER_MMAP_BYTES
        assert mapped(writer) == 0
        # The mapped reader answers like any other (it reads the committed rows).
        storage.insert_observation(writer, storage.NewObservation(
            session_id="s1", project="/repo/a", type="discovery", title="mapped cache"))
        found = search(reader, "cache", mode="fts")
        assert [h.observation.title for h in found.hits] == ["mapped cache"]
    finally:
        reader.close()
        writer.close()
