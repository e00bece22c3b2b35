"""A same-session follow-up of the best match is admitted to ``followup_slot`` (issue 14,
own eval's recall): the matches above the slot never move. Real database for the search
path; the pure function on hand-made lists."""

from __future__ import annotations

from memlite import storage
from memlite.storage.fusion import Fusion, admit_followup
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
