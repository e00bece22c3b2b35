"""Supersession by a stated change ("switched X from A to B"), recorded at insert: the
older observation that chose A is hidden by default; other subjects, bugfixes and
discoveries never are."""

from __future__ import annotations

import pytest

from memlite.storage.changes import parse, words
from memlite.storage.search import Filters, search

DAY = 86_400_000  # tests/storage/conftest.py's DAY_MS


@pytest.mark.parametrize("title, old, new, subject", [
    ("Switched billing cycle lock from Redis to Postgres advisory locks",
     {"redis"}, {"postgre", "advisory", "lock"}, {"billing", "cycle", "lock"}),
    ("Replace metrics polling with a WebSocket stream",
     {"metric", "polling"}, {"websocket", "stream"}, set()),
    ("Per-field last-write-wins instead of CRDTs", {"crdt"},
     {"per", "field", "last", "write", "win"}, {"per", "field", "last", "write", "win"}),
    ("Dropped YAML config support; TOML only", {"yaml", "config"}, set(), {"toml"}),
    ("Sync interval changed from 15 minutes to 1 hour", {"15", "minute"}, {"hour"},
     {"sync", "interval"}),
])
def test_parse_reads_what_a_title_says_was_replaced(title, old, new, subject):
    change = parse(title)
    assert change is not None and not change.revert
    assert (set(change.old), set(change.new), set(change.subject)) == (old, new, subject)


@pytest.mark.parametrize("title", [
    "Use a Redis lock to prevent overlapping billing cycle runs",  # no change stated
    "MSRV raised from 1.70 to 1.74",                               # only numbers replaced
    "Readiness probe timeoutSeconds 1 -> 3",
    "Daily DAG moved from 02:00 to 04:00 UTC",
])
def test_parse_finds_no_change_where_none_is_named(title):
    assert parse(title) is None


def test_only_a_titles_first_characters_are_read():
    """Bad input (a huge title, from an import) costs a bounded parse, not seconds."""
    from memlite.storage.changes import PARSED_CHARS

    assert parse("Switched the HTTP client from requests to httpx") is not None
    assert parse("x" * PARSED_CHARS + " switched the HTTP client from requests to httpx") is None
    assert parse("x " + "from a " * 3000) is None


def test_words_drop_small_words_verbs_and_plurals():
    assert words("Switched the CRDTs from 15-minute queries") == {"crdt", "15", "minute", "query"}


def test_a_stated_switch_supersedes_the_decision_it_replaced(db, add, superseded_by):
    old = add("Use a Redis lock to prevent overlapping billing cycle runs", day=0)
    new = add("Switched billing cycle lock from Redis to Postgres advisory locks", day=7)
    assert superseded_by(old) == new
    assert superseded_by(new) is None


def test_a_revert_supersedes_the_switch_it_undoes(db, add, superseded_by):
    first = add("Use a Redis lock to prevent overlapping billing cycle runs", day=0)
    switch = add("Switched billing cycle lock from Redis to Postgres advisory locks", day=7)
    back = add("Reverted billing cycle lock back to Redis, with a renewal thread", day=14)
    assert (superseded_by(first), superseded_by(switch), superseded_by(back)) \
        == (switch, back, None)


def test_features_and_replace_and_dropped_forms(db, add, superseded_by):
    polling = add("Live metrics via polling every 5 seconds", type_="feature", day=0)
    stream = add("Replace metrics polling with a WebSocket stream", day=3)
    sse = add("Switched live metrics from WebSocket to Server-Sent Events", day=9)
    yaml = add("Config files can be YAML as well as TOML", type_="feature", day=1)
    toml = add("Dropped YAML config support; TOML only", day=5)
    assert (superseded_by(polling), superseded_by(stream), superseded_by(sse)) \
        == (stream, sse, None)
    assert superseded_by(yaml) == toml


def test_other_subjects_bugfixes_discoveries_and_projects_are_left_alone(db, add, superseded_by):
    rate = add("Requests per second capped at 50 for the crawler", day=0)
    fix = add("WebSocket reconnect storm after deploy", type_="bugfix", day=0)
    seen = add("WebSocket frames are gzip-compressed by the proxy", type_="discovery", day=0)
    other = add("Use requests for the HTTP client", day=0, project="/repo/b")
    # "HTTP client" is the subject; the crawler's rate note shares no word with it
    add("Switched HTTP client from requests to httpx", day=2)
    add("Switched live metrics from WebSocket to Server-Sent Events", day=3)
    for oid in (rate, fix, seen, other):
        assert superseded_by(oid) is None


def test_an_older_note_already_about_the_new_choice_is_kept(db, add, superseded_by):
    both = add("HTTP client wrapper supports requests and httpx", type_="feature", day=0)
    add("Switched HTTP client from requests to httpx", day=2)
    assert superseded_by(both) is None


def test_a_late_stored_older_observation_is_the_superseded_one(db, add, superseded_by):
    new = add("Switched HTTP client from requests to httpx", day=5)
    late = add("Use requests for the HTTP client", day=1)  # imported or observed late
    assert superseded_by(late) == new
    assert superseded_by(new) is None


def test_search_hides_the_replaced_choice_but_a_file_query_lists_its_history(db, add):
    old = add("Use requests for the HTTP client", day=0, files_modified=["app/client.py"])
    new = add("Switched HTTP client from requests to httpx", day=2,
              files_modified=["app/client.py"], session_id="s2")
    found = [h.observation.id for h in search(db, "HTTP client", mode="hybrid",
                                             filters=Filters(project="/repo/a")).hits]
    assert found == [new]
    history = [h.observation.id for h in search(db, "what did we change in app/client.py",
                                               mode="hybrid",
                                               filters=Filters(project="/repo/a")).hits]
    assert history.index(new) < history.index(old)


def test_a_query_matching_only_the_replaced_choice_finds_the_current_one(db, add, superseded_by):
    old = add("Use requests for the HTTP client", day=0,
              narrative="requests.Session with urllib3 Retry for every carrier call")
    new = add("Switched HTTP client from requests to httpx", day=2, session_id="s2",
              narrative="httpx.AsyncClient with HTTP/2")
    assert superseded_by(old) == new
    only_old = Filters(project="/repo/a")
    found = [h.observation.id for h in search(db, "urllib3 Retry carrier", mode="hybrid",
                                             filters=only_old).hits]
    assert found == [new]  # the old one matched; the current one answers in its place
    both = [h.observation.id for h in search(db, "HTTP client requests", mode="hybrid",
                                            filters=only_old).hits]
    assert both == [new]  # once, not twice
    shown = [h.observation.id for h in search(
        db, "urllib3 Retry carrier", mode="hybrid",
        filters=Filters(project="/repo/a", include_superseded=True)).hits]
    assert shown == [old]  # asked for: the old one itself
    before = [h.observation.id for h in search(
        db, "urllib3 Retry carrier", mode="hybrid",
        filters=Filters(project="/repo/a", until_ms=1_700_000_000_000 + DAY)).hits]
    assert before == []  # the replacement fails the filters: nothing stands in


def test_the_project_check_counts_superseded_rows_only_when_asked(db, add):
    from memlite.storage.filters import passing

    old = add("Use requests for the HTTP client", day=0)
    new = add("Switched HTTP client from requests to httpx", day=2)
    elsewhere = add("Use requests for the HTTP client", day=0, project="/repo/b")
    ids = [old, new, elsewhere]
    assert passing(db, ids, Filters(project="/repo/a")) == {new}
    assert passing(db, ids, Filters(project="/repo/a", include_superseded=True)) == {old, new}


HPA = "deploy/helm/router/templates/hpa.yaml"
KEDA = "Autoscale on Kafka consumer lag with KEDA instead of CPU"


def test_a_change_that_removed_the_older_ones_file_supersedes_it(db, add, superseded_by):
    """The titles share no subject word ("HorizontalPodAutoscaler" / "Autoscale ...
    KEDA"): the newer one's facts saying it removed the file the older one wrote tell
    that the older setup is gone (round 7; own eval corpus, router-029 <- router-037)."""
    hpa = add("HorizontalPodAutoscaler on CPU 70%", type_="change", day=0,
              files_modified=(HPA, "deploy/helm/router/values-prod.yaml"))
    keda = add(KEDA, day=14, files_read=(HPA,),
               facts=("KEDA kafka scaler, lagThreshold: 500", "hpa.yaml removed"))
    assert superseded_by(hpa) == keda
    assert superseded_by(keda) is None


def test_the_removal_links_an_older_one_stored_late(db, add, superseded_by):
    keda = add(KEDA, day=14, facts=("hpa.yaml removed",))
    hpa = add("HorizontalPodAutoscaler on CPU 70%", type_="change", day=0,
              files_modified=(HPA,))
    assert superseded_by(hpa) == keda


@pytest.mark.parametrize("facts, files, title", [
    ((), (HPA,), "HorizontalPodAutoscaler on CPU 70%"),               # nothing removed
    (("values.yaml removed",), (HPA,), "HorizontalPodAutoscaler on CPU 70%"),  # not its file
    (("hpa.yaml removed",), (), "HorizontalPodAutoscaler on CPU 70%"),  # it wrote no file
    (("hpa.yaml removed",), (HPA,), "HorizontalPodAutoscaler on memory"),  # A not named
])
def test_no_link_without_both_the_named_choice_and_its_removed_file(db, add, superseded_by,
                                                                    facts, files, title):
    old = add(title, type_="change", day=0, files_modified=files)
    add(KEDA, day=14, facts=facts)
    assert superseded_by(old) is None


@pytest.mark.parametrize("text, names", [
    ("hpa.yaml removed", {"hpa.yaml"}),
    ("Deleted src/lib/reconnect.ts", {"reconnect.ts"}),
    ("the old `config.yml` was deleted; Removed redis", {"config.yml"}),
    ("Removed redis from the stack; once_cell removed", set()),  # no file named
    ("1.74 removed", set()),
])
def test_removed_files_reads_the_file_names_said_removed(text, names):
    from memlite.storage.changes import removed_files

    assert removed_files(text) == names
