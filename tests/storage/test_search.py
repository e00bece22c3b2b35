"""The search engine on a real database with real wordllama vectors: full text, vectors,
the two fused, the filters in every mode, the fallbacks to full text, hostile queries."""

from __future__ import annotations

import numpy as np
import pytest

from memlite import storage
from memlite.embed import load_embedder, observation_text
from memlite.storage.records import decode_list
from memlite.storage.search import (
    RELEVANCE_FLOOR,
    Filters,
    Fusion,
    search,
)
from memlite.storage.vectors import VECTOR_TABLE

BILLING, DOCS = "/src/billing", "/src/docs"
MODES = ("fts", "semantic", "hybrid")

# key: (project, session, type, at_ms, fields)
CORPUS = {
    "double_billing": (BILLING, "s-bill-1", "bugfix", 1_000, dict(
        title="Fixed double billing when the payment webhook retried",
        narrative="Invoices were charged twice because the webhook handler was not idempotent",
        files_modified=("src/billing/invoice.py",))),
    "rules_edit": (BILLING, "s-bill-1", "change", 1_500, dict(
        title="Edited the webhook handler in invoice.py",
        files_modified=("src/billing/invoice.py",), backend="rules")),
    "idempotent": (BILLING, "s-bill-1", "bugfix", 1_600, dict(
        title="Made the payment webhook idempotent",
        narrative="A retried webhook no longer creates a second invoice",
        files_modified=("src/billing/invoice.py",))),  # supersedes rules_edit
    "http_retry": (BILLING, "s-bill-1", "feature", 2_000, dict(
        title="Retry with exponential backoff in the HTTP client",
        narrative="Connection timeouts are retried three times",
        files_read=("src/net/http_client.py",))),
    "memory_leak": (BILLING, "s-bill-2", "discovery", 3_000, dict(
        title="Memory leak in the worker cache",
        narrative="The worker kept growing because the cache had no size limit")),
    "jwt": (BILLING, "s-bill-2", "decision", 4_000, dict(
        title="Login uses JSON web tokens instead of session cookies",
        narrative="Authentication moved from cookies to JWT")),
    "migration": (BILLING, "s-bill-2", "change", 5_000, dict(
        title="Database migration adds an index on created_at",
        files_modified=("migrations/0004_index.sql",))),
    "greeting": (BILLING, "s-bill-2", "refactor", 6_000, dict(
        title="Renamed the greeting helper")),
    "dark_theme": (DOCS, "s-docs", "feature", 7_000, dict(
        title="Dark theme for the documentation website",
        files_modified=("docs/theme.css",))),
    "parser": (DOCS, "s-docs", "bugfix", 8_000, dict(
        title="Parser crashes on empty input file",
        narrative="The markdown parser raised on a file with no content",
        files_modified=("docs/tools/parser.py",))),
    "docs_billing": (DOCS, "s-docs", "discovery", 9_000, dict(
        title="The billing page of the documentation has a broken link")),
    "sphinx": (DOCS, "s-docs", "decision", 10_000, dict(
        title="Build the documentation with Sphinx")),
}

# Shares no word (or stem) with "double_billing", means the same thing.
PARAPHRASE = "customers paid two times for a single purchase"


@pytest.fixture(scope="module")
def model():
    embedder = load_embedder("wordllama")
    yield embedder
    embedder.close()


def embed(model, text: str) -> bytes:
    return np.asarray(model.embed([text])[0], dtype="<f4").tobytes()


@pytest.fixture
def corpus(db):
    """The corpus stored (no vectors yet): ``{key: id}``."""
    ids: dict[str, int] = {}
    for key, (project, session, kind, at_ms, fields) in CORPUS.items():
        extra = {"supersedes": (ids["rules_edit"],)} if key == "idempotent" else {}
        ids[key] = storage.insert_observation(db, storage.NewObservation(
            session_id=session, project=project, type=kind, at_ms=at_ms, **fields, **extra)).id
    return ids


def store_vectors(db, model, model_name: str | None = None) -> None:
    """A vector for every observation, embedded from the text the embedder actor uses."""
    storage.ensure_vector_table(db, model.dim, model_name or model.name)
    rows = db.execute("SELECT id, project, title, subtitle, narrative, facts, concepts,"
                      " files_modified, files_read FROM observations ORDER BY project, id"
                      ).fetchall()
    texts = [observation_text(title=r[2], subtitle=r[3], narrative=r[4],
                              facts=decode_list(r[5]), concepts=decode_list(r[6]),
                              files=[*decode_list(r[7]), *decode_list(r[8])]) for r in rows]
    vectors = model.embed(texts)
    storage.upsert_vectors(db, [(r[0], r[1], np.asarray(v, dtype="<f4").tobytes())
                                for r, v in zip(rows, vectors, strict=True)])


@pytest.fixture
def indexed(db, model, corpus):
    """The corpus with a vector for every observation: ``{key: id}``."""
    store_vectors(db, model)
    return corpus


def run(db, model, text, mode, **kwargs):
    vector = kwargs.pop("query_vector", None if mode == "fts" else embed(model, text))
    return search(db, text, mode=mode, query_vector=vector, **kwargs)


def keys(outcome, ids) -> list[str]:
    by_id = {v: k for k, v in ids.items()}
    return [by_id[h.observation.id] for h in outcome.hits]


# --- the three modes ---------------------------------------------------------------------


def test_fts_finds_the_matching_observations(db, model, indexed):
    outcome = run(db, model, "webhook", "fts")
    assert outcome.mode_used == "fts" and outcome.note is None
    assert set(keys(outcome, indexed)) == {"double_billing", "idempotent"}  # not superseded
    assert all(h.bm25 is not None and h.distance is None for h in outcome.hits)
    scores = [h.score for h in outcome.hits]
    assert scores == sorted(scores, reverse=True)


def test_semantic_finds_a_paraphrase_that_full_text_misses(db, model, indexed):
    assert "double_billing" not in keys(run(db, model, PARAPHRASE, "fts"), indexed)
    outcome = run(db, model, PARAPHRASE, "semantic")
    assert outcome.mode_used == "semantic" and outcome.note is None
    assert keys(outcome, indexed)[0] == "double_billing"
    top = outcome.hits[0]
    assert top.vector_rank == 1 and top.fts_rank is None
    assert top.score == pytest.approx(1.0 - top.distance)
    # Hybrid: full text only matched some words ("times"), a weak partial list; the
    # vector hit stays at the top.
    hybrid = run(db, model, PARAPHRASE, "hybrid")
    assert hybrid.mode_used == "hybrid" and keys(hybrid, indexed)[0] == "double_billing"


def test_semantic_ranks_by_meaning(db, model, indexed):
    outcome = run(db, model, "authentication with tokens", "semantic")
    assert keys(outcome, indexed)[0] == "jwt"
    outcome = run(db, model, "the program ran out of RAM", "semantic", limit=3)
    assert "memory_leak" in keys(outcome, indexed)
    assert len(outcome.hits) <= 3


def test_hybrid_puts_a_document_both_lists_found_first(db, model, indexed):
    outcome = run(db, model, "billing", "hybrid")
    assert outcome.mode_used == "hybrid" and outcome.note is None
    top = outcome.hits[0]
    assert top.fts_rank is not None and top.vector_rank is not None
    assert keys(outcome, indexed)[0] in {"double_billing", "docs_billing"}
    # Without the recency list its score is the RRF of its two ranks.
    plain = run(db, model, "billing", "hybrid", fusion=Fusion(recency_weight=0.0))
    first = plain.hits[0]
    k, fw, vw = Fusion().k, Fusion().fts_weight, Fusion().vector_weight
    assert first.fts_rank and first.vector_rank
    assert first.score == pytest.approx(fw / (k + first.fts_rank) + vw / (k + first.vector_rank))
    for hit in outcome.hits:
        if hit.fts_rank is None or hit.vector_rank is None:
            assert hit.score < top.score
    scores = [h.score for h in outcome.hits]
    assert scores == sorted(scores, reverse=True)


def test_hybrid_keeps_what_only_one_list_found(db, model, indexed):
    outcome = run(db, model, PARAPHRASE + " webhook", "hybrid")
    found = keys(outcome, indexed)
    assert "idempotent" in found and "double_billing" in found


# --- filters, in every mode ----------------------------------------------------------------

FILTER_CASES = [
    # (filters, query, expected: the set of keys allowed that the query may return)
    (Filters(project=DOCS), "billing", {"docs_billing"}),
    (Filters(project=BILLING), "billing", {"double_billing", "idempotent"}),  # its path
    (Filters(types=("decision",)), "documentation tokens", {"jwt", "sphinx"}),
    (Filters(types=("bugfix", "feature")), "webhook", {"double_billing", "idempotent"}),
    (Filters(since_ms=1_600, until_ms=1_600), "webhook", {"idempotent"}),  # both inclusive
    (Filters(since_ms=1_000, until_ms=1_000), "webhook", {"double_billing"}),
    (Filters(until_ms=1_599), "webhook", {"double_billing"}),
    (Filters(file="invoice.py"), "webhook", {"double_billing", "idempotent"}),  # modified
    (Filters(file="http_client"), "retry connection timeouts", {"http_retry"}),  # read
    (Filters(session_id="s-bill-2"), "cache worker", {"memory_leak"}),
    (Filters(include_superseded=True, file="invoice.py"), "webhook",
     {"double_billing", "idempotent", "rules_edit"}),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("filters", "query", "expected"), FILTER_CASES)
def test_filters_apply_in_every_mode(db, model, indexed, mode, filters, query, expected):
    outcome = run(db, model, query, mode, filters=filters)
    assert outcome.mode_used == mode
    found = set(keys(outcome, indexed))
    allowed = {key for key, (project, session, kind, at_ms, fields) in CORPUS.items()
               if (filters.project in (None, project))
               and (not filters.types or kind in filters.types)
               and (filters.since_ms is None or at_ms >= filters.since_ms)
               and (filters.until_ms is None or at_ms <= filters.until_ms)
               and (filters.session_id in (None, session))
               and (not filters.file or any(filters.file in f for f in (
                   *fields.get("files_read", ()), *fields.get("files_modified", ()))))
               and (filters.include_superseded or key != "rules_edit")}
    assert found <= allowed  # nothing the filters rule out
    if mode == "fts":
        assert found == expected
    else:
        assert expected & found  # and the meant ones are there


@pytest.mark.parametrize("mode", MODES)
def test_superseded_is_excluded_unless_asked_for(db, model, indexed, mode):
    query = "Edited the webhook handler in invoice.py"
    hidden = run(db, model, query, mode)
    assert "rules_edit" not in keys(hidden, indexed)
    shown = keys(run(db, model, query, mode, filters=Filters(include_superseded=True)), indexed)
    # Shown on request, but never above the observation that replaced it: just below it.
    assert "rules_edit" in shown and "idempotent" in shown
    assert shown.index("rules_edit") == shown.index("idempotent") + 1


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("filters", [
    Filters(project="/nowhere"), Filters(types=("decision",), session_id="s-docs",
                                         since_ms=10_001),
    Filters(file="no-such-file"), Filters(since_ms=5, until_ms=4)])
def test_filters_that_allow_nothing_find_nothing(db, model, indexed, mode, filters):
    outcome = run(db, model, "billing webhook documentation", mode, filters=filters)
    assert outcome.hits == [] and outcome.mode_used == mode


@pytest.mark.parametrize("scan_limit", [0, 50_000], ids=["over-fetch", "id-list"])
def test_narrowed_semantic_search_both_paths(db, model, indexed, monkeypatch, scan_limit):
    """Under FILTERED_SCAN_LIMIT the KNN runs on the allowed ids, above it the neighbours
    are over-fetched and filtered: both give the same allowed answer."""
    from memlite.storage import vector_lists

    monkeypatch.setattr(vector_lists, "FILTERED_SCAN_LIMIT", scan_limit)
    filters = Filters(types=("decision",))
    outcome = run(db, model, "authentication with tokens", "semantic", filters=filters)
    assert keys(outcome, indexed)[0] == "jwt"
    assert set(keys(outcome, indexed)) <= {"jwt", "sphinx"}


@pytest.mark.parametrize("scan_limit", [0, 50_000], ids=["over-fetch", "id-list"])
def test_a_filtered_knn_finds_the_allowed_row_behind_closer_ones(db, model, corpus,
                                                                 monkeypatch, scan_limit):
    """The nearest rows are all ruled out; with depth 1 the allowed one must still come
    back (the id-list KNN ranks only allowed ids; the over-fetch takes 8x depth)."""
    from memlite.storage import vector_lists

    monkeypatch.setattr(vector_lists, "FILTERED_SCAN_LIMIT", scan_limit)
    store_vectors(db, model, "some-ollama-model")  # no relevance floor
    filters = Filters(types=("feature",), session_id="s-docs")  # only dark_theme
    unfiltered = run(db, model, "Build the documentation with Sphinx", "semantic")
    assert keys(unfiltered, corpus)[0] == "sphinx"
    assert keys(unfiltered, corpus).index("dark_theme") > 0
    outcome = run(db, model, "Build the documentation with Sphinx", "semantic",
                  filters=filters, fusion=Fusion(depth=1), limit=1)
    assert keys(outcome, corpus) == ["dark_theme"]


# --- fallbacks to full text ---------------------------------------------------------------


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_no_query_vector_answers_with_full_text(db, model, indexed, mode):
    outcome = search(db, "webhook", mode=mode, query_vector=None)
    assert outcome.mode == mode and outcome.mode_used == "fts"
    assert "no embedding model is loaded" in outcome.note
    assert set(keys(outcome, indexed)) == {"double_billing", "idempotent"}
    why = search(db, "webhook", mode=mode, no_vector_reason="the model is still loading")
    assert why.mode_used == "fts" and "the model is still loading" in why.note
    assert mode in why.note


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_no_vector_table_or_an_empty_one_answers_with_full_text(db, model, corpus, mode):
    vector = embed(model, "webhook")
    outcome = search(db, "webhook", mode=mode, query_vector=vector)
    assert outcome.mode_used == "fts" and "no vectors are stored" in outcome.note
    assert set(keys(outcome, corpus)) == {"double_billing", "idempotent"}
    storage.ensure_vector_table(db, model.dim, model.name)  # empty table
    outcome = search(db, "webhook", mode=mode, query_vector=vector)
    assert outcome.mode_used == "fts" and "no vectors are stored" in outcome.note
    assert len(outcome.hits) == 2


@pytest.mark.parametrize("mode", ["semantic", "hybrid"])
def test_a_query_vector_of_another_dimension_answers_with_full_text(db, model, indexed, mode):
    wrong = np.ones(384, dtype="<f4").tobytes()
    outcome = search(db, "webhook", mode=mode, query_vector=wrong)
    assert outcome.mode_used == "fts"
    assert "reindex" in outcome.note and "384" in outcome.note and "256" in outcome.note
    assert len(outcome.hits) == 2


def test_fts_mode_ignores_the_vector_and_has_no_note(db, model, indexed):
    outcome = search(db, "webhook", mode="fts", query_vector=b"garbage",
                     no_vector_reason="ignored")
    assert outcome.mode_used == "fts" and outcome.note is None and len(outcome.hits) == 2


def test_the_relevance_floor_drops_unrelated_neighbours(db, model, indexed):
    assert RELEVANCE_FLOOR[model.name] > 0
    outcome = run(db, model, "xyzzy quantum banana", "semantic")
    assert outcome.mode_used == "semantic"
    # Every neighbour the KNN returns scores under the floor: none is a match.
    assert outcome.hits == []
    good = run(db, model, PARAPHRASE, "semantic")
    assert good.hits and all(h.score >= RELEVANCE_FLOOR[model.name] for h in good.hits)
    assert len(good.hits) < len(CORPUS) - 1  # the unrelated ones were dropped


def _pointing_at(model, db, oid: int, cosine: float) -> bytes:
    """A unit query vector whose cosine to observation ``oid``'s stored vector is
    ``cosine`` (the rest of it orthogonal to that vector)."""
    stored = db.execute(f"SELECT embedding FROM {VECTOR_TABLE} WHERE observation_id = ?",
                        (oid,)).fetchone()[0]
    target = np.frombuffer(stored, dtype="<f4").astype(np.float64)
    target /= np.linalg.norm(target)
    other = np.random.default_rng(7).standard_normal(target.shape)
    other -= (other @ target) * target
    other /= np.linalg.norm(other)
    return (cosine * target + np.sqrt(1 - cosine ** 2) * other).astype("<f4").tobytes()


def test_hybrid_keeps_a_top_neighbour_under_the_floor_when_full_text_matched(db, model,
                                                                             indexed):
    """Hybrid's first ``vector_free_ranks`` neighbours need only ``vector_free_floor`` of
    the model's floor (a paraphrase's answer often scores just under it); semantic alone,
    and a hybrid query that full text found nothing for, keep the whole floor."""
    floor = RELEVANCE_FLOOR[model.name]
    vector = _pointing_at(model, db, indexed["greeting"], floor * 0.7)
    billing = Filters(project=BILLING)
    hybrid = search(db, "webhook", mode="hybrid", query_vector=vector, filters=billing)
    assert "greeting" in keys(hybrid, indexed)  # not a full-text match: the vector's
    assert "double_billing" in keys(hybrid, indexed)
    strict = search(db, "webhook", mode="hybrid", query_vector=vector, filters=billing,
                    fusion=Fusion(vector_free_ranks=0))
    assert "greeting" not in keys(strict, indexed)
    too_far = search(db, "webhook", mode="hybrid", filters=billing,
                     query_vector=_pointing_at(model, db, indexed["greeting"], floor * 0.3))
    assert "greeting" not in keys(too_far, indexed)
    semantic = search(db, "webhook", mode="semantic", query_vector=vector, filters=billing)
    assert "greeting" not in keys(semantic, indexed)
    nothing = search(db, "xyzzy quantum", mode="hybrid", query_vector=vector, filters=billing)
    assert nothing.mode_used == "hybrid" and "greeting" not in keys(nothing, indexed)


def test_a_model_with_no_floor_keeps_every_neighbour(db, model, corpus):
    store_vectors(db, model, "some-ollama-model")
    outcome = run(db, model, "xyzzy quantum banana", "semantic")
    # The wordllama floor would have dropped them all (test above); with none, the
    # neighbours that point the same way at all are kept, however weak.
    assert outcome.hits and all(h.score < RELEVANCE_FLOOR[model.name] for h in outcome.hits)
    assert all(h.score >= 0 for h in outcome.hits)


# --- hostile input ------------------------------------------------------------------------

HOSTILE = ['"', '""', "*", "parser*", "OR", "AND NOT", "(", ")", "parser)", "NEAR(a b)",
           "col:x", "-parser", "^", "🦀", "billing 🦀 OR (", "\x00", "bill\x00ing",
           "'; DROP TABLE observations; --", "\\", "", "   ", "a" * 1000,
           " ".join(["webhook"] * 200), "\ud800"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("query", HOSTILE)
def test_hostile_queries_never_raise(db, model, indexed, mode, query):
    vector = None if mode == "fts" else embed(model, query)
    outcome = search(db, query, mode=mode, query_vector=vector, filters=Filters(
        file='"*%_\x00', include_superseded=True) if query == "(" else Filters())
    assert outcome.mode == mode
    assert all(h.observation.id in indexed.values() for h in outcome.hits)
    assert run(db, model, "webhook", "fts").hits  # nothing was harmed


def test_hostile_text_is_searched_as_text(db, model, indexed):
    outcome = run(db, model, "invoice.py", "fts")
    assert set(keys(outcome, indexed)) == {"double_billing", "idempotent"}
    # Unquoted, "invoice.py" is an FTS5 syntax error and "webhook*" a prefix query.
    assert run(db, model, "webho*", "fts").hits == []


@pytest.mark.parametrize("mode", ["fuzzy", "", "FTS"])
def test_a_bad_mode_is_a_value_error(db, mode):
    with pytest.raises(ValueError, match="mode"):
        search(db, "x", mode=mode)


@pytest.mark.parametrize("limit", [0, -1])
def test_a_limit_below_one_is_a_value_error(db, limit):
    with pytest.raises(ValueError, match="limit"):
        search(db, "x", mode="fts", limit=limit)


def test_limit_caps_the_hits(db, model, indexed):
    for mode in MODES:
        outcome = run(db, model, "the documentation billing webhook", mode, limit=1)
        assert len(outcome.hits) == 1


def test_hybrid_prefers_the_newer_of_two_equal_matches(db, model):
    # Discoveries: two decisions on one topic would be a supersession (storage.topics).
    older = storage.insert_observation(db, storage.NewObservation(
        session_id="s", project="/p", type="discovery", title="Cache size limit is 100 MB",
        at_ms=1_000)).id
    newer = storage.insert_observation(db, storage.NewObservation(
        session_id="s2", project="/p", type="discovery", title="Cache size limit is 100 MB",
        at_ms=2_000)).id
    store_vectors(db, model)
    outcome = run(db, model, "cache size limit", "hybrid")
    assert [h.observation.id for h in outcome.hits] == [newer, older]
    plain = run(db, model, "cache size limit", "hybrid", fusion=Fusion(recency_weight=0.0))
    assert [h.observation.id for h in plain.hits] == [older, newer]  # a tie: lower id
    assert plain.hits[0].score == pytest.approx(plain.hits[1].score)


def test_a_deferred_query_vector_is_asked_for_after_the_full_text_list(db, model, indexed,
                                                                         monkeypatch):
    """A ``VectorSource`` (the HTTP API embeds the query while full text runs) gives the
    same answer as the vector itself, is called once the BM25 list is built, and its
    reason for having no vector reaches the note."""
    import memlite.storage.search as engine

    text = "customers were charged twice"
    vector = embed(model, text)
    events: list[str] = []
    real_fts_list = engine.fts_list

    def fts_list(*args, **kwargs):
        events.append("fts")
        return real_fts_list(*args, **kwargs)

    def source():
        events.append("vector")
        return vector, None

    monkeypatch.setattr(engine, "fts_list", fts_list)
    direct = search(db, text, mode="hybrid", query_vector=vector)
    events.clear()
    deferred = search(db, text, mode="hybrid", query_vector=source)
    assert events == ["fts", "vector"]
    assert deferred.mode_used == "hybrid"
    assert [h.observation.id for h in deferred.hits] == [h.observation.id for h in direct.hits]
    missing = search(db, text, mode="hybrid", query_vector=lambda: (None, "still embedding"))
    assert missing.mode_used == "fts" and "still embedding" in missing.note
    semantic = search(db, text, mode="semantic", query_vector=source)
    assert semantic.mode_used == "semantic" and semantic.hits
