"""Temporal intent beyond the score band (issue 14, user trial round 4 finding 10): the
newest decision on a topic outranks the one it replaced even when it matches the query
poorly. Real database and search path; hand-made 4-d vectors, so the test says exactly
which vector is close to which."""

from __future__ import annotations

import numpy as np

from memlite import storage
from memlite.storage.fusion import Fusion
from memlite.storage.search import Filters, search

P = "/src/app"


def add(db, title, at_ms, vector, *, kind="decision", narrative=""):
    oid = storage.insert_observation(db, storage.NewObservation(
        session_id=f"s{at_ms}", project=P, type=kind, title=title, narrative=narrative,
        at_ms=at_ms)).id
    storage.ensure_vector_table(db, 4, "hand-made-4d")
    storage.upsert_vectors(db, [(oid, P, np.asarray(vector, "<f4").tobytes())])
    return oid


def ids(db, text, vector, **fusion):
    out = search(db, text, query_vector=np.asarray(vector, "<f4").tobytes(),
                 filters=Filters(project=P), fusion=Fusion(**fusion))
    return [h.observation.id for h in out.hits]


def corpus(db, newest_kind="change"):
    first = add(db, "Chose requests as the HTTP client for payments", 1_000, [1, 0.1, 0, 0])
    add(db, "Dark theme for the docs site", 1_500, [0, 1, 0, 0])
    add(db, "Nightly backup of the wiki", 1_600, [0, 0, 1, 0])
    add(db, "Retry budget for background jobs", 1_700, [0, 0, 0.2, 1])
    # The newest: a commit made of a shell command, no query word, a vector close to the
    # first decision's (cosine ~0.8) but far from the query's.
    newest = add(db, "git -c user.email=dev@example.com commit -qam 'payments: back to "
                 "requests from httpx'", 3_000, [0.8, 0, 0.6, 0.1], kind=newest_kind)
    return first, newest


QUERY = [1, 0.3, 0.5, 0]


def test_the_newest_decision_on_the_best_matchs_topic_comes_first(db):
    first, newest = corpus(db)
    found = ids(db, "what HTTP client do we use now", QUERY)
    assert found[0] == newest
    assert first in found
    # Without the lift (temporal_like 1.0: no vector is that close), the old order:
    # the newest scores outside the band of the best and stays below it.
    old = ids(db, "what HTTP client do we use now", QUERY, temporal_like=1.0)
    assert old.index(first) < old.index(newest)


def test_no_lift_for_a_discovery(db):
    first, newest = corpus(db, newest_kind="discovery")
    found = ids(db, "what HTTP client do we use now", QUERY)
    assert found.index(first) < found.index(newest)  # a discovery replaces nothing


def test_no_lift_without_a_time_cue(db):
    first, newest = corpus(db)
    found = ids(db, "which HTTP client for payments", QUERY)
    assert found.index(first) < found.index(newest)


def companion_corpus(db, companion_vector, companion_kind="feature"):
    """An old decision, three unrelated notes, the newest decision and, ten minutes later
    in its session, a note that says how it was done in words of neither the question nor
    the decision: ``(newest, companion)``."""
    def note(title, at_ms, vector, kind, session):
        oid = storage.insert_observation(db, storage.NewObservation(
            session_id=session, project=P, type=kind, title=title, at_ms=at_ms)).id
        storage.ensure_vector_table(db, 4, "hand-made-4d")
        storage.upsert_vectors(db, [(oid, P, np.asarray(vector, "<f4").tobytes())])
        return oid

    note("Chose polling every 5 seconds for live metrics", 1_000, [1, 0.1, 0, 0],
         "decision", "s-old")
    note("Dark theme for the docs site", 1_500, [0.3, 0, 1, 0], "feature", "s-a")
    note("Nightly backup of the wiki", 1_600, [0.3, 0, 0, 1], "change", "s-b")
    note("Retry budget for background jobs", 1_700, [0.2, 0, 0.5, 0.5], "change", "s-c")
    newest = note("Switched live metrics to server-sent events", 5_000, [0.6, 0.8, 0, 0],
                  "decision", "s-new")
    companion = note("useLiveMetrics rewritten with EventSource", 605_000, companion_vector,
                     companion_kind, "s-new")
    return newest, companion


def test_the_newest_decisions_companion_takes_the_follow_up_slot(db):
    # The companion points away from the question (no list finds it) but close to the
    # newest decision (cosine ~0.74): it is how the current state was built.
    newest, companion = companion_corpus(db, [-0.1, 1, 0, 0])
    query = "how are live metrics pushed now"
    found = ids(db, query, [1, 0, 0, 0])
    assert found[0] == newest and found[3] == companion
    assert companion not in ids(db, query, [1, 0, 0, 0], temporal_companion=1.0)


def test_no_companion_unlike_the_newest_decision(db):
    newest, unlike = companion_corpus(db, [-0.1, 0, 0, 1])  # cosine to it < 0
    assert unlike not in ids(db, "how are live metrics pushed now", [1, 0, 0, 0])


def test_no_companion_that_is_a_discovery(db):
    newest, found_out = companion_corpus(db, [-0.1, 1, 0, 0], companion_kind="discovery")
    assert found_out not in ids(db, "how are live metrics pushed now", [1, 0, 0, 0])
