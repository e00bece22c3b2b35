"""Ranking beyond the words, part two (issue 14): a calendar date named in the query, and
near-duplicate matches that must not fill the top 5. Real database, real wordllama vectors."""

from __future__ import annotations

import datetime

import numpy as np
import pytest

from memlite import storage
from memlite.embed import load_embedder, observation_text
from memlite.storage.fusion import Fusion, diversify, fuse
from memlite.storage.query import DATE_SLACK_DAYS, analyse
from memlite.storage.search import Filters, search

P = "/src/app"
DAY = 86_400_000


def ms(year, month, day):
    return int(datetime.datetime(year, month, day, tzinfo=datetime.UTC).timestamp() * 1000)


@pytest.fixture(scope="module")
def model():
    embedder = load_embedder("wordllama")
    yield embedder
    embedder.close()


def add(db, title, at_ms):
    return storage.insert_observation(db, storage.NewObservation(
        session_id=f"s{at_ms}", project=P, type="discovery", title=title, at_ms=at_ms)).id


def vectors(db, model):
    storage.ensure_vector_table(db, model.dim, model.name)
    rows = db.execute("SELECT id, project, title FROM observations").fetchall()
    matrix = model.embed([observation_text(r[2], "", "", None, None, []) for r in rows])
    storage.upsert_vectors(db, [(r[0], r[1], np.asarray(v, "<f4").tobytes())
                                for r, v in zip(rows, matrix, strict=True)])


def run(db, model, text):
    vector = np.asarray(model.embed([text])[0], "<f4").tobytes()
    out = search(db, text, query_vector=vector, filters=Filters(project=P))
    return [h.observation.id for h in out.hits]


# --- dates in the query -----------------------------------------------------------------


@pytest.mark.parametrize(("text", "start", "days"), [
    ("what did we change on 7 July, 2023?", ms(2023, 7, 7), 1),
    ("what did we change on the 7th of July 2023", ms(2023, 7, 7), 1),
    ("deploys on July 7, 2023", ms(2023, 7, 7), 1),
    ("deploys on Sept 3rd, 2024", ms(2024, 9, 3), 1),
    ("what broke on 2024-05-03", ms(2024, 5, 3), 1),
    ("which cache did we pick in March 2023", ms(2023, 3, 1), 31),
    ("outage in feb 2024", ms(2024, 2, 1), 29),  # a leap year
])
def test_a_named_date_gives_a_window(text, start, days):
    intent = analyse(text)
    assert intent.dated == (start, start + (days + DATE_SLACK_DAYS) * DAY - 1)


@pytest.mark.parametrize("text", [
    "may we retry 2023 times",  # "may" is a verb, and a bare number is no date
    "bump the version to 2024",  # a year alone is too wide
    "what did we do last week",  # relative: no "now" to count from
    "the report of 31 February 2023",  # no such day
    "config.2023-13-45.bak",  # no such month
    "99 May 2023",  # no such day
    "0000-01-01",  # no year 0
])
def test_no_window_without_a_real_calendar_date(text):
    assert analyse(text).dated is None


def test_the_date_words_leave_the_full_text_query():
    assert analyse("what did we change on 7 July, 2023?").text.split() == \
        ["what", "did", "we", "change", "on", "?"]
    assert analyse("March 2023").text == "March 2023"  # nothing else left: kept


def test_the_dated_list_is_one_more_fused_list():
    fusion = Fusion(recency_weight=0.0)
    assert fuse([1, 2], [1, 2], fusion=fusion)[0][0] == 1
    assert fuse([1, 2], [1, 2], fusion=fusion, dated_ids=[2])[0][0] == 2
    assert fuse([1, 2], [1, 2], fusion=Fusion(recency_weight=0.0, date_weight=0.0),
                dated_ids=[2])[0][0] == 1


def test_a_query_naming_a_date_ranks_that_dates_match_first(db, model):
    older = add(db, "Deployed the billing service to the staging cluster", ms(2023, 7, 7))
    newer = add(db, "Deployed the billing service to the production cluster",
                ms(2023, 9, 12))
    add(db, "Dark theme for the docs", ms(2023, 7, 7) + 3_600_000)  # same day, off topic
    vectors(db, model)
    assert run(db, model, "what did we deploy the billing service to")[0] == newer
    found = run(db, model, "what did we deploy the billing service to on 7 July, 2023")
    assert found[0] == older
    assert found[1] == newer  # the other date is not dropped


# --- near-duplicates --------------------------------------------------------------------


def code(*values):
    return np.asarray(values, dtype=np.int8).tobytes()


def test_diversify_gives_a_near_duplicate_slot_to_a_different_match():
    ranked = [(1, 0.30), (2, 0.29), (3, 0.28), (4, 0.27), (5, 0.20)]
    codes = {1: code(100, 0, 0), 2: code(99, 5, 0), 3: code(98, 0, 6),  # one fact, 3 ways
             4: code(0, 100, 0), 5: code(0, 0, 100)}
    out = diversify(ranked, codes, fusion=Fusion(diversity=0.5, diversity_window=15))
    order = [oid for oid, _ in out]
    assert order[0] == 1  # the best match stays first
    assert order[:3] == [1, 4, 5]  # the two different matches move above the restatements
    assert set(order) == {1, 2, 3, 4, 5}
    assert [score for _, score in out] == [0.30, 0.29, 0.28, 0.27, 0.20]  # still descend
    assert diversify(ranked, codes, fusion=Fusion(diversity=0.0)) == ranked


def test_diversify_keeps_order_past_the_window_and_without_codes():
    ranked = [(i, 1.0 - i / 100) for i in range(1, 30)]
    codes = {i: code(100, 0, 0) for i in range(1, 30)}  # all alike
    out = diversify(ranked, codes, fusion=Fusion(diversity=0.5, diversity_window=10))
    assert out[10:] == ranked[10:]
    assert diversify(ranked, {}, fusion=Fusion(diversity=0.5)) == ranked


def test_a_fact_stated_three_times_does_not_fill_the_top(db):
    same = [add(db, "Caroline is considering a career in counseling", 1_000),
            add(db, "Caroline is considering a career in counseling and mental health",
                2_000),
            add(db, "Caroline considers a counseling career in mental health", 3_000)]
    other = add(db, "Caroline went to a counseling career fair for trans youth", 4_000)
    for i in range(6):
        add(db, f"Melanie painted landscape number {i} at the lake", 5_000 + i)
    # Hand-made 4-d vectors: the three restatements nearly one direction, the workshop
    # close to the query but elsewhere, the paintings far.
    by_id = {same[0]: (1.0, 0.0, 0.0, 0.0), same[1]: (0.99, 0.1, 0.0, 0.0),
             same[2]: (0.98, 0.0, 0.1, 0.0), other: (0.3, 0.95, 0.0, 0.0)}
    storage.ensure_vector_table(db, 4, "test-4d")
    rows = db.execute("SELECT id, project FROM observations").fetchall()
    storage.upsert_vectors(db, [(r[0], r[1], np.asarray(by_id.get(r[0], (0, 0, 0.2, 1)),
                                                        "<f4").tobytes()) for r in rows])
    query = np.asarray((0.9, 0.3, 0.0, 0.0), "<f4").tobytes()
    text = "Caroline counseling career"

    def found(diversity):
        fusion = Fusion(diversity=diversity)
        return [h.observation.id for h in search(db, text, query_vector=query, fusion=fusion,
                                                 filters=Filters(project=P)).hits]

    plain = found(0.0)
    assert plain[0] in same and plain[1] in same  # restatements hold the top
    diverse = found(0.5)
    assert diverse[0] in same
    assert diverse[1] == other  # the different match takes the second slot


@pytest.mark.parametrize("text", ["what did we do on 7 July, 2023?", "2023-07-07",
                                  "what happened on July 7, 2023"])
def test_a_query_that_is_only_a_date_lists_that_days_observations_newest_first(db, model, text):
    """User trial, round 4: "what did we do on 1 December 2026" listed 1 of the 7
    observations of that day: with the date words taken out nothing but small words was
    left to search, so only a stray vector neighbour answered. A query that names a date
    and no topic lists that day's observations first (newest first), then the rest."""
    day = ms(2023, 7, 7)
    that_day = [add(db, title, day + hour * 3_600_000) for hour, title in enumerate(
        ["Renamed the greeting helper", "Parser accepts trailing commas",
         "Deploy script pins the region"], start=9)]
    add(db, "Cache keys carry the tenant id", day - 2 * DAY)
    add(db, "Login page shows the last sign-in", day + DAY)  # inside the slack, not that day
    vectors(db, model)
    ids = run(db, model, text)
    assert ids[:3] == that_day[::-1], ids


def test_the_project_name_in_a_dated_query_is_no_topic(db, model):
    """"what happened in the app on 7 July 2023", searched in /src/app: "app" names the
    project, not a topic, so the query is only a date (round 5, own dev half)."""
    day = ms(2023, 7, 7)
    that_day = [add(db, title, day + hour * 3_600_000) for hour, title in enumerate(
        ["Renamed the greeting helper", "Parser accepts trailing commas"], start=9)]
    for i in range(4):  # rows that match "app" but were written on other days
        add(db, f"The app starts faster, step {i}", day - (i + 2) * DAY)
    vectors(db, model)
    ids = run(db, model, "what happened in the app on 7 July 2023")
    assert ids[:2] == that_day[::-1], ids
    assert analyse("what happened in the app on 7 July 2023",
                   framing=frozenset({"app"})).date_only
    assert not analyse("what happened in the app on 7 July 2023").date_only


def test_project_words():
    from memlite.storage.query import project_words
    assert project_words("/home/dev/pulse-dashboard") == {"pulse", "dashboard"}
    assert project_words("C:\\src\\stash_cli\\") == {"stash", "cli"}
    assert project_words(None) == frozenset()


def test_a_days_record_keeps_what_a_later_session_replaced(db, model):
    """"What did we do on 7 July" lists what was done that day, even a decision a later
    session replaced (history, like a named file's: round 7, own dev half); its
    replacement is not put in its place. A rules twin replaced within its own session
    stays out, as everywhere."""
    day = ms(2023, 7, 7)

    def decide(title, at_ms, session):
        return storage.insert_observation(db, storage.NewObservation(
            session_id=session, project=P, type="decision", title=title, at_ms=at_ms)).id

    old = decide("Use a Redis lock to prevent overlapping billing cycle runs",
                 day + 9 * 3_600_000, "s-day")
    other = add(db, "Parser accepts trailing commas", day + 10 * 3_600_000)
    new = decide("Switched billing cycle lock from Redis to Postgres advisory locks",
                 day + 7 * DAY, "s-later")
    twin = storage.insert_observation(db, storage.NewObservation(
        session_id="s-twin", project=P, type="decision", title="Deploy script pins a region",
        at_ms=day + 11 * 3_600_000)).id
    ai = storage.insert_observation(db, storage.NewObservation(
        session_id="s-twin", project=P, type="decision", title="Deploy script pins the region",
        at_ms=day + 11 * 3_600_000 + 60_000)).id
    db.execute("UPDATE observations SET superseded_by = ? WHERE id = ?", (ai, twin))
    assert db.execute("SELECT superseded_by FROM observations WHERE id = ?",
                      (old,)).fetchall()[0][0] == new
    vectors(db, model)
    ids = run(db, model, "what did we do on 7 July 2023")
    assert ids[:3] == [ai, other, old], ids
    assert twin not in ids
    # A topic search still shows the current decision instead of the replaced one.
    topic = run(db, model, "billing cycle lock")
    assert new in topic and old not in topic
