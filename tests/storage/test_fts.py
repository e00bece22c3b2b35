"""Full-text search: indexes follow every write, and no user text can break a query."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memlite import storage
from memlite.storage import NewSummary

FTS_TABLES = ("observations_fts", "summaries_fts", "prompts_fts")

HOSTILE = [
    '"', '""', '"unbalanced', "*", "foo*", "-x", "-", "OR", "AND", "NOT", "AND NOT", "NEAR",
    "NEAR(a b)", "(", ")", "((a)", "a OR", "title:wal", "^start", "+", "{a b}:x", "a AND NOT b",
    "🦀", "🙂 wal", "", "   ", "\x00", "x\x00y", "\ud800", "'; DROP TABLE observations; --",
    "a" * 5000, " ".join(["wal"] * 500),
]


def assert_in_sync(conn):
    """FTS5's own check: the index matches the content exactly (raises if not)."""
    for table in FTS_TABLES:
        conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")


def titles(hits):
    return [hit.item.title for hit in hits]


def test_observation_index_follows_insert_update_delete(db, add_observation):
    obs = add_observation(title="Checkpoint starvation", narrative="readers held the WAL",
                          files_read=["memlite/storage/db.py"], concepts=["sqlite"])
    assert_in_sync(db)
    assert titles(storage.search_observations(db, "starvation")) == ["Checkpoint starvation"]
    assert len(storage.search_observations(db, "db.py")) == 1  # file names are searchable
    assert len(storage.search_observations(db, "sqlite")) == 1  # and concepts
    db.execute("UPDATE observations SET title = 'Busy timeout tuned' WHERE id = ?", (obs,))
    assert_in_sync(db)
    assert storage.search_observations(db, "starvation") == []
    assert titles(storage.search_observations(db, "tuned")) == ["Busy timeout tuned"]
    # A write that touches no indexed column leaves the index alone (and still in sync).
    db.execute("UPDATE observations SET commit_sha = 'abc' WHERE id = ?", (obs,))
    assert_in_sync(db)
    storage.delete_observation(db, obs, actor="test")
    assert_in_sync(db)
    assert storage.search_observations(db, "tuned") == []


def test_cascaded_deletes_leave_every_index_in_sync(db, add_observation):
    storage.insert_prompt(db, session_id="s1", prompt_text="make the tests pass")
    storage.insert_summary(db, NewSummary(session_id="s1", project="/repo/a", learned="fixtures"))
    add_observation(title="Tests pass")
    assert len(storage.search_prompts(db, "tests")) == 1
    assert len(storage.search_summaries(db, "fixtures")) == 1
    storage.delete_session(db, "s1", actor="test")
    assert_in_sync(db)
    assert storage.search_prompts(db, "tests") == []
    assert storage.search_summaries(db, "fixtures") == []
    assert storage.search_observations(db, "tests") == []


def test_summary_and_prompt_updates_stay_in_sync(db):
    pid = storage.insert_prompt(db, session_id="s1", prompt_text="alpha").id
    sid = storage.insert_summary(db, NewSummary(session_id="s1", project="/p", request="beta"))
    db.execute("UPDATE user_prompts SET prompt_text = 'gamma' WHERE id = ?", (pid,))
    db.execute("UPDATE summaries SET request = 'delta' WHERE id = ?", (sid,))
    assert_in_sync(db)
    assert storage.search_prompts(db, "alpha") == []
    assert len(storage.search_prompts(db, "gamma")) == 1
    assert len(storage.search_summaries(db, "delta", project="/p")) == 1
    assert storage.search_summaries(db, "delta", project="/other") == []


def test_ranking_filters_and_stemming(db, add_observation):
    add_observation(title="Flaky test in the reaper", narrative="a timing race")
    add_observation(title="Dashboard colours", narrative="the reaper is mentioned here")
    add_observation(title="Reaper elsewhere", project="/repo/b")
    hits = storage.search_observations(db, "reaper", project="/repo/a")
    assert titles(hits) == ["Flaky test in the reaper", "Dashboard colours"]  # title weighs more
    assert hits[0].score <= hits[1].score
    assert titles(storage.search_observations(db, "races")) == ["Flaky test in the reaper"]
    assert len(storage.search_observations(db, "reaper")) == 3


def test_all_terms_first_then_any_term(db, add_observation):
    add_observation(title="WAL checkpoint")
    add_observation(title="WAL mode and busy timeout")
    assert titles(storage.search_observations(db, "wal busy")) == ["WAL mode and busy timeout"]
    # No observation has both words: fall back to either, rather than nothing.
    assert len(storage.search_observations(db, "checkpoint timeout")) == 2
    assert storage.search_observations(db, "checkpoint nonexistentword") != []


def test_superseded_observations_are_hidden_unless_asked(db, add_observation):
    old = add_observation(title="Ran pytest", backend="rules")
    add_observation(title="Pytest fixtures leak threads", supersedes=[old])
    assert titles(storage.search_observations(db, "pytest")) == ["Pytest fixtures leak threads"]
    assert len(storage.search_observations(db, "pytest", include_superseded=True)) == 2


def test_fts_query_drops_small_words_when_others_remain():
    assert storage.fts_query("what did we decide about Redis?") == '"decide" "Redis?"'
    assert storage.fts_query("a OR b", any_term=True) == '"b"'  # "or" is a small word too
    assert storage.fts_query("the a") == '"the" "a"'  # nothing else left: kept


def test_fts_query_quotes_every_token():
    assert storage.fts_query("wal busy") == '"wal" "busy"'
    assert storage.fts_query('say "hi"') == '"say" """hi"""'
    assert storage.fts_query("wal NEAR b", any_term=True) == '"wal" OR "NEAR" OR "b"'
    assert storage.fts_query("  \t\n ") is None
    assert storage.fts_query("x\x00y") == '"x" "y"'


@pytest.mark.parametrize("text", HOSTILE, ids=repr)
def test_hostile_queries_never_raise(db, add_observation, text):
    add_observation(title="wal start")
    for search in (storage.search_observations, storage.search_summaries,
                   storage.search_prompts):
        assert isinstance(search(db, text), list)


@pytest.fixture(scope="module")
def shared_db(tmp_path_factory):
    conn = storage.connect(tmp_path_factory.mktemp("fts"))
    storage.insert_observation(conn, storage.NewObservation(
        session_id="s", project="p", type="t", title="wal checkpoint", narrative="émoji 🦀 ok",
    ))
    yield conn
    conn.close()


@settings(max_examples=300, deadline=None)
@given(text=st.text())
def test_any_text_is_a_valid_query(shared_db, text):
    assert isinstance(storage.search_observations(shared_db, text), list)


@settings(max_examples=200, deadline=None)
@given(word=st.text(alphabet=st.characters(categories=["L", "Nd"]), min_size=1, max_size=30))
def test_a_stored_word_is_found_by_searching_for_it(shared_db, word):
    # Quoting must only make text safe, never stop it matching.
    storage.insert_observation(shared_db, storage.NewObservation(
        session_id="s", project="p", type="t", title=f"title {word}",
    ))
    hits = storage.search_observations(shared_db, word, limit=1000)
    assert f"title {word}" in titles(hits)


def _statements(conn, run):
    """The SQL statements ``run()`` executes on ``conn`` (APSW's exec tracer)."""
    seen: list[str] = []

    def trace(_cursor, sql, _bindings):
        seen.append(sql)
        return True

    conn.exec_trace = trace
    try:
        run()
    finally:
        conn.exec_trace = None
    return seen


def test_empty_summaries_and_prompts_are_not_asked_of_fts5(db, add_observation):
    """A store without summaries or prompts answers their searches without a MATCH (two
    FTS5 queries each, the all-words one and its any-term retry, ~0.2 ms a search); once
    a row is there, it is found as before."""
    add_observation(title="flush checker fails")
    seen = _statements(db, lambda: (storage.search_summaries(db, "flush checker"),
                                    storage.search_prompts(db, "flush checker")))
    assert seen and not any("MATCH" in sql for sql in seen)
    storage.insert_summary(db, NewSummary(session_id="s1", project="/repo/a",
                                          learned="the flush checker"))
    storage.insert_prompt(db, session_id="s1", prompt_text="why does flush fail")
    assert len(storage.search_summaries(db, "flush checker", project="/repo/a")) == 1
    assert len(storage.search_prompts(db, "flush checker")) == 1  # any-term retry
    assert storage.search_prompts(db, "quokka") == []
