"""Ranking beyond the words (issue 14): any-term BM25, score-aware fusion, file paths with
their role, temporal intent, supersession order. Real database, real wordllama vectors."""

from __future__ import annotations

import attrs
import numpy as np
import pytest

from memlite import storage
from memlite.embed import load_embedder, observation_text
from memlite.storage.fusion import Fusion, demote_superseded, favour_newest, fuse
from memlite.storage.query import analyse, path_matches
from memlite.storage.search import Filters, search

P = "/src/app"


@pytest.fixture(scope="module")
def model():
    embedder = load_embedder("wordllama")
    yield embedder
    embedder.close()


def add(db, title, at_ms, *, kind="decision", read=(), modified=(), narrative="",
        supersedes=()):
    return storage.insert_observation(db, storage.NewObservation(
        session_id=f"s{at_ms}", project=P, type=kind, title=title, narrative=narrative,
        files_read=read, files_modified=modified, supersedes=supersedes, at_ms=at_ms)).id


def vectors(db, model):
    storage.ensure_vector_table(db, model.dim, model.name)
    rows = db.execute("SELECT id, project, title, narrative, files_read, files_modified "
                      "FROM observations").fetchall()
    texts = [observation_text(r[2], "", r[3], None, None,
                              [*storage.records.decode_list(r[4]),
                               *storage.records.decode_list(r[5])]) for r in rows]
    matrix = model.embed(texts)
    storage.upsert_vectors(db, [(r[0], r[1], np.asarray(v, "<f4").tobytes())
                                for r, v in zip(rows, matrix, strict=True)])


def run(db, model, text, mode="hybrid", **kwargs):
    vector = None if mode == "fts" else np.asarray(model.embed([text])[0], "<f4").tobytes()
    out = search(db, text, mode=mode, query_vector=vector, filters=Filters(project=P, **kwargs))
    return [h.observation.id for h in out.hits]


# --- query analysis ----------------------------------------------------------------------


@pytest.mark.parametrize(("text", "temporal"), [
    ("what lock do we currently use", True),
    ("latest bundle size", True),
    ("how does the dashboard receive metrics now", True),
    ("is the cron still at 02:00", True),
    ("what did we decide about the cache", True),
    ("what did we end up doing for retries", True),
    ("last time the deploy failed", True),
    # Present tense asks for the state now as much as "now" does (round 5).
    ("which lock do we use for the billing cycle", True),
    ("which charting library are we using", True),
    ("where did we land on the sync interval", True),
    ("what does the app use for JSON parsing", True),
    ("which config formats do we accept in the end", True),
    ("why was the lock added", False),
    ("we use redis for the lock", False),
    ("the users endpoint", False),
    ("nowhere stillborn currency", False),  # words that only contain a cue
])
def test_temporal_cues(text, temporal):
    assert analyse(text).temporal is temporal


def test_temporal_cue_words_leave_the_full_text_query():
    assert analyse("what is the current minSdk").text == "what is the minSdk"
    assert analyse("latest").text == "latest"  # nothing else left: kept


def test_temporal_cue_phrases_leave_the_full_text_query():
    assert analyse("which charting library do we use these days").text == \
        "which charting library do we use"
    assert analyse("what is the pool size at the moment, per pod").text == \
        "what is the pool size per pod"
    assert analyse("which formats do we accept right now").text == \
        "which formats do we accept"
    assert analyse("these days").text == "these days"  # nothing else left: kept
    assert analyse("the moment of truth").text == "the moment of truth"  # no time cue


@pytest.mark.parametrize(("text", "paths", "role"), [
    ("what changed in invoices/numbering.py", ("invoices/numbering.py",), "modified"),
    ("edits to internal/carriers/client.go", ("internal/carriers/client.go",), "modified"),
    ("which files did we read, like `src/error.rs`?", ("src/error.rs",), "read"),
    ("RetryInterceptor.kt", ("RetryInterceptor.kt",), None),
    ("bumped MSRV to 1.74 e.g. for let-else", (), None),  # versions and e.g. are not files
    ("see https://example.com/a.html", (), None),
])
def test_file_paths_and_role(text, paths, role):
    intent = analyse(text)
    assert intent.paths == paths and intent.file_role == role


def test_path_matches_whole_components_only():
    assert path_matches("src/api/client.ts", "client.ts")
    assert path_matches("src/api/client.ts", "api/client.ts")
    assert path_matches("src\\api\\client.ts", "api/client.ts")
    assert not path_matches("src/api/myclient.ts", "client.ts")
    assert not path_matches("src/api/client.tsx", "client.ts")


# --- fusion helpers ------------------------------------------------------------------------


def test_coverage_makes_a_weak_full_text_list_count_less():
    plain = Fusion(k=5.0, vector_weight=0.9, coverage_power=0.0, recency_weight=0.0)
    aware = Fusion(k=5.0, vector_weight=0.9, coverage_power=1.0, recency_weight=0.0)
    # Full text's top row shares one word of six; the vector list's top is another row.
    weak = {1: 1 / 6}
    assert fuse([1], [3], fusion=plain, fts_coverage=weak)[0][0] == 1
    assert fuse([1], [3], fusion=aware, fts_coverage=weak)[0][0] == 3
    assert fuse([1], [3], fusion=aware, fts_coverage={1: 1.0})[0][0] == 1


def test_a_neighbour_under_the_floor_votes_its_share():
    # Vector rank 1 alone against a row full text ranks first (a third of its terms) and
    # the KNN second: as a full vote the weak neighbour wins, at a fifth of one it cannot.
    weak_fts = {2: 1 / 3}
    assert fuse([2], [1, 2], fts_coverage=weak_fts)[0][0] == 2
    assert fuse([2], [1, 2], fts_coverage=weak_fts, vector_share={2: 0.2})[0][0] == 1


def test_favour_newest_only_within_the_band():
    fusion = Fusion(temporal_band=0.7)
    ranked = [(1, 0.30), (2, 0.28), (3, 0.05)]
    created = {1: 100, 2: 200, 3: 999}
    out = favour_newest(ranked, created, fusion=fusion)
    assert [oid for oid, _ in out] == [2, 1, 3]  # 3 is newest but a weak match: not lifted
    assert [score for _, score in out] == [0.30, 0.28, 0.05]  # scores still descend
    assert favour_newest(ranked, created, fusion=Fusion(temporal_band=1.0)) == ranked


def test_demote_superseded():
    assert demote_superseded([1, 2, 3], {1: 3}) == [2, 3, 1]
    assert demote_superseded([3, 2, 1], {1: 3}) == [3, 2, 1]  # already below: untouched
    assert demote_superseded([1, 2, 3], {1: 2, 2: 3}) == [3, 2, 1]  # a chain
    assert demote_superseded([1, 2], {1: 9}) == [1, 2]  # replacement not shown
    assert demote_superseded([1, 2], {1: 2, 2: 1}) in ([1, 2], [2, 1])  # a cycle ends


# --- through search() ----------------------------------------------------------------------


def test_partial_matches_rank_after_full_ones_and_are_not_dropped(db, model):
    both = add(db, "Webhook retries are idempotent", 1_000)
    one = add(db, "Stripe webhook signature check", 2_000)
    add(db, "Dark theme for the docs", 3_000)
    found = run(db, model, "webhook idempotent", "fts")
    # The old all-words query found only the first and never tried the partial one.
    assert found == [both, one]


def test_a_paraphrase_is_not_drowned_by_a_framing_word_match(db, model):
    target = add(db, "Fixed double billing when the payment webhook retried", 1_000,
                 narrative="Invoices were charged twice")
    add(db, "Retry with exponential backoff", 2_000,
        narrative="Connection timeouts are retried three times")
    add(db, "Renamed the greeting helper", 3_000)
    vectors(db, model)
    assert run(db, model, "customers paid two times for a single purchase")[0] == target


def test_a_file_query_matches_the_path_exactly_and_knows_modified_from_read(db, model):
    read_only = add(db, "Looked into how numbering works", 3_000,
                    read=("billing/invoices/numbering.py",))
    changed = add(db, "Gapless invoice numbers per tenant", 1_000,
                  modified=("billing/invoices/numbering.py",))
    lookalike = add(db, "Renumbered the docs pages", 4_000,
                    modified=("docs/renumbering.py",))
    add(db, "Unrelated change to the settings page", 2_000, modified=("web/settings.tsx",))
    vectors(db, model)
    found = run(db, model, "what changed in invoices/numbering.py")
    assert found[:2] == [changed, read_only]
    assert lookalike not in found[:2]
    found = run(db, model, "which code read numbering.py")
    assert found[:2] == [read_only, changed]


def test_a_temporal_query_puts_the_newest_decision_first(db, model):
    first = add(db, "The billing lock uses Redis SETNX", 1_000)
    second = add(db, "The billing lock uses Postgres advisory locks", 2_000)
    third = add(db, "The billing lock uses Redis with a fencing token", 3_000)
    add(db, "Dark theme for the docs", 4_000)
    vectors(db, model)
    found = run(db, model, "which billing lock do we currently use")
    assert found[0] == third
    assert set(found[1:3]) == {first, second}


def test_hidden_superseded_decision_and_order_when_shown(db, model):
    old = add(db, "Sync runs every 15 minutes with WorkManager", 1_000)
    new = add(db, "Sync runs every 15 minutes with WorkManager, now also on app start",
              2_000, supersedes=(old,))
    vectors(db, model)
    assert old not in run(db, model, "Sync runs every 15 minutes with WorkManager")
    shown = run(db, model, "Sync runs every 15 minutes with WorkManager",
                include_superseded=True)
    assert shown.index(new) < shown.index(old)


def test_favour_newest_lifts_a_newer_match_about_the_same_thing_as_the_best():
    fusion = Fusion(temporal_band=0.7, temporal_depth=10, temporal_like=0.7)
    # 4 is the newest and close to the best (1) but scores far outside the band.
    ranked = [(1, 0.30), (2, 0.25), (3, 0.20), (4, 0.10), (5, 0.09)]
    created = {1: 100, 2: 50, 3: 300, 4: 400, 5: 500}
    like = {2: 0.2, 3: 0.3, 4: 0.8, 5: 0.75}
    out = favour_newest(ranked, created, fusion=fusion, like_best=like)
    assert [oid for oid, _ in out] == [5, 4, 1, 2, 3]
    assert [score for _, score in out] == [score for _, score in ranked]
    # Not lifted: older than the best, too far down, or not close enough.
    assert [oid for oid, _ in favour_newest(
        ranked, {**created, 4: 10, 5: 20}, fusion=fusion, like_best=like)] == [1, 2, 3, 4, 5]
    assert [oid for oid, _ in favour_newest(
        ranked, created, fusion=attrs.evolve(fusion, temporal_depth=3), like_best=like)] == \
        [1, 2, 3, 4, 5]
    assert favour_newest(ranked, created, fusion=fusion,
                         like_best={4: 0.69, 5: 0.5}) == ranked
    assert favour_newest(ranked, created, fusion=fusion) == ranked  # no vectors: the band

