"""Schema 2: one store per event and backend kind (the replay guarantee), pruning, health."""

from __future__ import annotations

import apsw
import pytest

from memlite import storage
from memlite.storage import observing, writes
from memlite.storage.migrations import MIGRATIONS, migrate
from memlite.storage.records import NewObservation
from memlite.storage.timestamps import now_ms


def obs(event_ids, title="Edited x.py", backend="ai", **kw) -> NewObservation:
    return NewObservation(session_id="s1", project="/p", type="change", title=title,
                          source_event_ids=event_ids, backend=backend, **kw)


def add_event(conn, i: int, payload: str | None = None) -> int:
    return writes.insert_event(conn, session_id="s1", event_name="PostToolUse",
                               tool_name="Edit", tool_use_id=f"t{i}",
                               payload=payload or {"tool_input": {"file_path": f"x{i}.py"}}).id


@pytest.fixture
def v1(data_dir):
    """A database at schema version 1 holding a session, two events and an observation."""
    data_dir.mkdir()
    conn = apsw.Connection(str(data_dir / "memlite.db"))
    migrate(conn, "v1.db", MIGRATIONS[:1])
    conn.execute("PRAGMA foreign_keys = ON")
    ids = [add_event(conn, 1), add_event(conn, 2)]
    # As version 1 stored it (no observation_sources yet).
    conn.execute("INSERT INTO observations (session_id, project, type, title, "
                 "source_event_ids, backend, content_hash, created_at, created_at_epoch) "
                 "VALUES ('s1', '/p', 'change', 'Edited x1.py', ?, 'rules', 'h1', "
                 "'2026-01-01T00:00:00.000Z', 0)", (f"[{ids[0]}]",))
    yield conn, ids
    conn.close()


def test_m002_from_the_m001_schema_keeps_and_links_existing_observations(v1):
    conn, ids = v1
    assert migrate(conn, "v1.db") == list(range(2, len(MIGRATIONS) + 1))
    assert storage.schema_version(conn) == len(MIGRATIONS)
    indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'index'")}
    assert "observations_project_live" in indexes  # m003
    links = conn.execute("SELECT event_id, kind, batch FROM observation_sources").fetchall()
    assert [tuple(r) for r in links] == [(ids[0], "rules", "m002:1")]
    cols = {r[1] for r in conn.execute("PRAGMA table_info(events)")}
    assert "pruned_at_epoch" in cols
    cols = {r[1] for r in conn.execute("PRAGMA table_info(sessions)")}
    assert {"observer_failures", "observer_error"} <= cols


def test_the_database_refuses_a_second_observation_of_an_observed_event(db):
    (event,) = [add_event(db, 1)]
    with db:
        first = observing.store_observations(db, [obs([event])])
    # A buggy caller that skips the check still cannot store a second one.
    with pytest.raises(apsw.ConstraintError, match="already observed"), db:
        writes.insert_observation(db, obs([event], title="Something else"))
    # The checked path turns the replay into a no-op returning the first observation.
    with db:
        again = observing.store_observations(db, [obs([event], title="Replayed, reworded")])
    assert [r.id for r in again] == [r.id for r in first] and not again[0].created
    assert db.execute("SELECT count(*) FROM observations").fetchall() == [(1,)]


def test_one_reply_may_hold_several_observations_of_one_event(db):
    event = add_event(db, 1)
    with db:
        stored = observing.store_observations(db, [obs([event], title="a"),
                                                   obs([event], title="b")])
    assert [r.created for r in stored] == [True, True]
    # A rules observation and an AI one of the same event are different kinds.
    with db:
        rules = observing.store_observations(db, [obs([event], backend="rules")])
    assert rules[0].created


def test_provisional_observations_leave_events_pending(db):
    event = add_event(db, 1)
    with db:
        observing.store_observations(db, [obs([event], backend="rules")], mark_done=False)
    assert db.execute("SELECT status FROM events").fetchall() == [("pending",)]


def test_pruning_drops_old_done_payloads_only_and_keeps_observations(db):
    done, pending, recent = (add_event(db, i, payload={"big": "x" * 5000, "i": i})
                             for i in range(3))
    with db:
        observing.store_observations(db, [obs([done])])
        observing.store_observations(db, [obs([recent], title="recent")])
        db.execute("UPDATE events SET updated_at_epoch = 0 WHERE id IN (?, ?)",
                   (done, pending))
    with db:
        assert observing.prune_events(db, older_than_ms=now_ms() - 1000) == 1
    rows = dict((r[0], (r[1], r[2] is not None)) for r in db.execute(
        "SELECT id, payload, pruned_at_epoch FROM events"))
    assert rows[done] == ("{}", True)
    assert rows[pending][0] != "{}" and not rows[pending][1]
    assert rows[recent][0] != "{}" and not rows[recent][1]
    assert db.execute("SELECT count(*) FROM observations").fetchall() == [(2,)]
    assert db.execute("SELECT count(*) FROM observation_sources").fetchall() == [(2,)]
    with db:
        assert observing.prune_events(db, older_than_ms=now_ms() - 1000) == 0  # once


def test_new_databases_vacuum_incrementally(db):
    assert db.execute("PRAGMA auto_vacuum").fetchall() == [(2,)]


def test_health_line_names_the_failing_session(db):
    writes.start_session(db, session_id="s1", project="/p")
    assert observing.health_line(db, "/p") is None
    observing.set_observer_health(db, "s1", 3, "ObserverTimeout: slow")
    line = observing.health_line(db, "/p")
    assert "failed 3 times in a row" in line and "ObserverTimeout" in line
    assert observing.health_line(db, "/other") is None
