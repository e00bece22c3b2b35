"""Recall on paraphrases (issue 14, own eval): a same-session follow-up of the best match
is admitted to ``followup_slot`` (the matches above the slot never move), and a duration
in words finds the compact form observations write ("nine seconds" -> "9s"). Real
database for the search path; the pure functions on hand-made input."""

from __future__ import annotations

import numpy as np
import pytest

from memlite import storage
from memlite.storage.fusion import Fusion, admit_followup
from memlite.storage.query import analyse
from memlite.storage.search import Filters, search

P = "/src/app"
MIN = 60_000


def ranked(*ids):
    return [(oid, 1.0 / i) for i, oid in enumerate(ids, start=1)]


def test_the_best_ranked_eligible_follow_up_takes_the_slot():
    sessions = {1: "a", 2: "b", 3: "b", 4: "c", 5: "d", 6: "a", 7: "a"}
    created = dict.fromkeys(sessions, 0)
    out = admit_followup(ranked(1, 2, 3, 4, 5, 6, 7), [1, 2, 7, 6], sessions, created,
                         fusion=Fusion(followup_slot=4))
    assert [oid for oid, _ in out] == [1, 2, 3, 6, 4, 5, 7]  # 6 outranks 7 in the fused order
    assert [score for _, score in out] == [score for _, score in ranked(1, 2, 3, 4, 5, 6, 7)]


def test_nothing_moves_without_an_eligible_follow_up():
    base = ranked(1, 2, 3, 4, 5, 6, 7)
    sessions = {1: "a", 2: "b", 3: "b", 4: "c", 5: "d", 6: "a", 7: "a"}
    created = {**dict.fromkeys(sessions, 0), 7: 10 * 3_600_000}
    fusion = Fusion(followup_slot=4)
    # 6 is the same session but in neither list's top; 7 was written ten hours later.
    assert admit_followup(base, [1, 7], sessions, created, fusion=fusion) == base
    # Already at or above the slot: nothing to admit.
    assert admit_followup(ranked(1, 6, 2, 3, 4), [6], sessions, created,
                          fusion=fusion) == ranked(1, 6, 2, 3, 4)
    assert admit_followup(base, [6], sessions, created,
                          fusion=Fusion(followup_slot=0)) == base
    assert admit_followup(base, [6], {}, created, fusion=fusion) == base


def add(db, session, title, at_ms, narrative=""):
    return storage.insert_observation(db, storage.NewObservation(
        session_id=session, project=P, type="discovery", title=title, narrative=narrative,
        at_ms=at_ms)).id


def test_search_admits_the_follow_up_of_its_best_match(db):
    problem = add(db, "s1", "Overview page with forty charts renders slowly", 0)
    fix = add(db, "s1", "Switched to a canvas drawing library", 10 * MIN,
              narrative="Dense charts draw on canvas now")
    others = [add(db, f"s{i}", f"Overview page slowly loads widget {i} charts", i * 1000 * MIN)
              for i in range(2, 8)]
    text = "overview page charts slowly render"

    def found(fusion):
        return [h.observation.id for h in search(db, text, mode="hybrid", fusion=fusion,
                                                 filters=Filters(project=P)).hits]

    plain = found(Fusion(followup_slot=0))
    assert plain[0] == problem
    assert plain.index(fix) > 3  # the follow-up shares few words: below the top 4
    admitted = found(Fusion())
    assert admitted[:4] == [*plain[:3], fix]  # the default slot is 4; the top 3 stay
    assert set(admitted) == {problem, fix, *others}


def test_the_next_observation_of_the_best_matchs_session_is_admitted(db):
    """The fix is written down right after the problem, in other words: it is in neither
    list (no word of the query, a vector unlike it), and still takes slot 4."""
    problem = add(db, "s1", "Overview page with forty charts renders slowly", 0)
    fix = add(db, "s1", "Switched to a canvas drawing library", 10 * MIN)
    later = add(db, "s1", "Dense plots moved to canvas", 20 * MIN)  # not the next one
    before = add(db, "s0", "Renamed the sidebar", -10 * MIN)
    others = [add(db, f"s{i}", f"Overview page slowly loads widget {i} charts", i * 1000 * MIN)
              for i in range(2, 8)]
    like, unlike = np.array([1, 0, 0, 0], "<f4"), np.array([-1, 0, 0, 0], "<f4")
    storage.ensure_vector_table(db, 4, "test-model")  # no relevance floor for it
    storage.upsert_vectors(db, [(oid, P, (unlike if oid in (fix, later, before) else
                                          like + 0.01 * n).astype("<f4").tobytes())
                                for n, oid in enumerate([problem, fix, later, before,
                                                         *others])])
    text, query_vector = "overview page charts slowly render", like.tobytes()

    def found(fusion, query=text, filters=None, vector=query_vector):
        return [h.observation.id for h in search(
            db, query, mode="hybrid", fusion=fusion, query_vector=vector,
            filters=filters or Filters(project=P)).hits]

    plain = found(Fusion(followup_next=0))
    assert plain[0] == problem and fix not in plain and later not in plain
    admitted = found(Fusion())
    assert admitted[:4] == [*plain[:3], fix]  # the top 3 stay; only the next one comes
    assert set(admitted) == {problem, fix, *others} and before not in admitted
    # A question about now asks for the newest state, not for what followed the best
    # match; the filters hold for the follow-up too; and a search that fell back to full
    # text (no query vector) shows only full-text matches.
    assert fix not in found(Fusion(), query=text + " now")
    assert found(Fusion(), filters=Filters(project=P, until_ms=5 * MIN)) == [problem]
    assert fix not in found(Fusion(), vector=None)


def test_a_preferred_follow_up_goes_before_the_better_ranked_ones():
    sessions = {1: "a", 2: "b", 3: "b", 4: "c", 5: "d", 6: "a", 7: "a"}
    created = dict.fromkeys(sessions, 0)
    base = ranked(1, 2, 3, 4, 5, 6, 7)
    fusion = Fusion(followup_slot=4)
    out = admit_followup(base, [1, 2, 7, 6], sessions, created, fusion=fusion, preferred=7)
    assert [oid for oid, _ in out] == [1, 2, 3, 7, 4, 5, 6]
    # Preferred, but not eligible (another session): the best-ranked eligible one, as before.
    assert [oid for oid, _ in admit_followup(base, [1, 2, 6, 5], sessions, created,
                                             fusion=fusion, preferred=5)] \
        == [1, 2, 3, 6, 4, 5, 7]


def test_the_action_written_right_after_the_best_match_beats_an_earlier_note(db):
    """Own dev, round 7: "users saw a never-ending loading wheel when the backend hung"
    found "API client has no request timeout" first, and slot 4 went to a note of the
    same session written before it ("Charts flashed empty on every poll"), not to the fix
    written next ("Added a 15s timeout"). The next observation goes first when it records
    an action; a discovery written next does not push the others aside."""
    def note(title, at_ms, type_="discovery"):
        return storage.insert_observation(db, storage.NewObservation(
            session_id="s1", project=P, type=type_, title=title, at_ms=at_ms)).id

    earlier = note("Charts flashed empty while the backend hung", -15 * MIN)
    problem = note("Loading wheel never ends when the backend hangs", 0)
    fix = note("Added a 15s timeout to the API client", 10 * MIN, "change")
    others = [add(db, f"s{i}", f"Backend {i} loading wheel hangs on widget", i * 1000 * MIN)
              for i in range(2, 8)]
    rows = {problem: (1, 0, 0, 0), earlier: (0.5, 0.86, 0, 0), fix: (-1, 0, 0, 0),
            **{oid: (0.9, 0.1 * n, 0.3, 0) for n, oid in enumerate(others)}}
    storage.ensure_vector_table(db, 4, "test-model")
    storage.upsert_vectors(db, [(oid, P, np.asarray(v, "<f4").tobytes())
                                for oid, v in rows.items()])
    text = "never-ending loading wheel when the backend hung"
    vector = np.asarray((1, 0, 0, 0), "<f4").tobytes()

    def found(fusion):
        return [h.observation.id for h in search(db, text, mode="hybrid", fusion=fusion,
                                                 query_vector=vector,
                                                 filters=Filters(project=P)).hits]

    old = found(Fusion(followup_prefer_next=0))
    assert old[0] == problem and old[3] == earlier and fix not in old[:5], old
    new = found(Fusion())
    assert new[:4] == [*old[:3], fix], new
    # Written next but a discovery: no preference, the earlier note keeps the slot.
    db.execute("UPDATE observations SET type = 'discovery' WHERE id = ?", (fix,))
    assert found(Fusion())[:4] == old[:4]


# --- durations in words -----------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("index update went from nine seconds to one", "index update went from 9s 9 seconds to one"),
    ("took 9 seconds", "took 9s 9 seconds"),
    ("Retry After Two Hours", "Retry After 2h 2 Hours"),
    ("p99 of 250 ms", "p99 of 250ms 250 ms"),
    ("cut to 1.5 s", "cut to 1.5s 1.5 s"),
    ("fifteen minutes", "15min 15 minutes"),
])
def test_a_duration_is_also_searched_in_its_compact_form(text, expected):
    assert analyse(text).text == expected


@pytest.mark.parametrize("text", [
    "why were we billed two times", "one bash task", "the 9s timeout", "seconds matter",
    "nine secondary replicas", "2 mins2",
])
def test_other_numbers_and_words_stay_as_typed(text):
    assert analyse(text).text == text


def test_a_spelled_out_duration_finds_the_compact_one(db):
    wal = add(db, "s1", "SQLite index switched to WAL mode", 0,
              narrative="The end-of-backup index write dropped from 9s to 1.2s")
    for i in range(6):
        add(db, f"s{i + 2}", f"Chunk catalog rebuilt for repository {i}", (i + 1) * 1000 * MIN)
    hits = search(db, "catalog took nine seconds", mode="fts",
                  filters=Filters(project=P)).hits
    assert wal not in [h.observation.id for h in hits]  # plain full text: no shared term
    found = [h.observation.id for h in search(db, "catalog took nine seconds", mode="hybrid",
                                              filters=Filters(project=P)).hits]
    assert wal == found[0]
