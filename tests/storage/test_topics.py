"""Supersession by topic, recorded at insert: a newer decision or fix on the same topic
replaces the older one; a different topic, type or project never does."""

from __future__ import annotations

import pytest

from memlite.storage.search import Filters, search
from memlite.storage.topics import topic_words


def test_topic_words_drop_verbs_numbers_and_small_words():
    assert topic_words("Decided: retry budget is 3") == {"retry", "budget"}
    assert topic_words("Raised the retry budget to 5") == {"retry", "budget"}


def test_a_newer_decision_on_the_same_topic_supersedes_the_older(db, add, superseded_by):
    old = add("Retry budget is 3 attempts", day=0)
    new = add("Raised the retry budget to 5 attempts", day=3)
    assert superseded_by(old) == new
    assert superseded_by(new) is None


def test_a_chain_keeps_only_the_newest_live(db, add, superseded_by):
    a = add("Session cache TTL 10 minutes", day=0)
    b = add("Session cache TTL 30 minutes", day=1)
    c = add("Session cache TTL 60 minutes", day=2)
    assert (superseded_by(a), superseded_by(b), superseded_by(c)) == (b, c, None)


def test_fixes_supersede_fixes(db, add, superseded_by):
    old = add("Fix flaky websocket reconnect test", type_="bugfix", day=0)
    new = add("Fixed flaky websocket reconnect test again", type_="bugfix", day=1)
    assert superseded_by(old) == new


@pytest.mark.parametrize("first, second", [
    ("Cache TTL for sessions", "Cache TTL for tokens"),        # another subject
    ("Use SQLite for storage", "Use Postgres for storage"),    # cannot tell: left alone
    ("Use Redis", "Use Redis cluster"),                        # a one-word topic
    ("Logging format JSON lines", "Logging rotation policy"),  # overlap, no containment
])
def test_different_or_unclear_topics_are_left_alone(db, add, superseded_by, first, second):
    old = add(first, day=0)
    add(second, day=1)
    assert superseded_by(old) is None


def test_other_types_projects_and_files_are_left_alone(db, add, superseded_by):
    discovery = add("Parser handles nested quotes", type_="discovery", day=0)
    add("Parser handles nested quotes now", type_="discovery", day=1)
    other_project = add("Retry budget is 3", day=0, project="/repo/b")
    add("Retry budget is 5", day=1)
    files_a = add("Timeout for the upload worker", day=0, files_modified=["src/up.py"])
    add("Timeout for the upload worker doubled", day=1, files_modified=["src/down.py"])
    decision = add("Database pool size", day=0)
    add("Database pool size", type_="change", day=1, subtitle="x")
    for oid in (discovery, other_project, files_a, decision):
        assert superseded_by(oid) is None


def test_a_late_older_observation_is_the_superseded_one(db, add, superseded_by):
    new = add("Retry budget is 5", day=5)
    late_old = add("Retry budget is 3", day=1)  # imported or observed late
    assert superseded_by(late_old) == new
    assert superseded_by(new) is None


def test_search_hides_the_superseded_decision_by_default(db, add):
    old = add("Retry budget is 3 attempts", day=0)
    new = add("Retry budget raised to 5 attempts", day=1)
    hits = [h.observation.id for h in search(db, "retry budget", mode="fts",
                                            filters=Filters(project="/repo/a")).hits]
    assert hits == [new]
    shown = [h.observation.id for h in search(
        db, "retry budget", mode="fts",
        filters=Filters(project="/repo/a", include_superseded=True)).hits]
    assert shown.index(new) < shown.index(old)
