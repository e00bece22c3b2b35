"""An AI observation supersedes the rules observations of the same events, nothing else."""

from __future__ import annotations

from memlite import storage
from memlite.observer.parse import classify
from memlite.observer.rules import observe
from memlite.observer.supersede import superseded_ids, with_supersedes
from memlite.storage.reads import get_event, session_observations
from memlite.storage.records import NewObservation, Observation
from memlite.storage.writes import insert_event, insert_observation, start_session


def old(id: int, sources: tuple[int, ...], *, backend: str = "rules", session: str = "s",
        superseded_by: int | None = None) -> Observation:
    return Observation(id=id, session_id=session, project="/p", branch=None, commit_sha=None,
                       type="change", title="t", subtitle="", narrative="", facts=(),
                       concepts=(), files_read=(), files_modified=(),
                       source_event_ids=sources, superseded_by=superseded_by,
                       backend=backend, content_hash=str(id), created_at="",
                       created_at_epoch=0)


def new(sources: tuple[int, ...], *, backend: str = "ai", supersedes=()) -> NewObservation:
    return NewObservation(session_id="s", project="/p", type="change", title="AI",
                          source_event_ids=sources, backend=backend, supersedes=supersedes)


EXISTING = [
    old(1, (10,)), old(2, (11, 12)), old(3, (13,)),
    old(4, (10,), backend="ai"), old(5, (12,), superseded_by=99), old(6, (10,), session="t"),
]


def test_rules_observations_sharing_an_event_are_superseded():
    assert superseded_ids(new((10, 12)), EXISTING) == (1, 2)
    assert superseded_ids(new((13,)), reversed(EXISTING)) == (3,)


def test_nothing_else_is():
    assert superseded_ids(new((14,)), EXISTING) == ()
    assert superseded_ids(new(()), EXISTING) == ()
    assert superseded_ids(new((10,), backend="rules"), EXISTING) == ()


def test_with_supersedes_keeps_what_was_there():
    assert with_supersedes(new((11,), supersedes=(7, 2)), EXISTING).supersedes == (2, 7)
    unchanged = new((14,))
    assert with_supersedes(unchanged, EXISTING) is unchanged


def test_end_to_end_on_a_real_database(data_dir):
    """Rules first, then the AI: the plain row is linked, not deleted."""
    conn = storage.connect(data_dir)
    try:
        start_session(conn, session_id="s", project="/p", cwd="/p")
        payload = {"session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "Edit",
                   "tool_use_id": "t1", "tool_input": {"file_path": "/p/x.py",
                                                       "old_string": "a", "new_string": "b"}}
        event_id = insert_event(conn, session_id="s", event_name="PostToolUse",
                                payload=payload, tool_name="Edit", tool_use_id="t1").id
        plain = observe(get_event(conn, event_id), project="/p")
        plain_id = insert_observation(conn, plain).id
        reply = classify("<observation><type>bugfix</type><title>Fix pager bound</title>"
                         "<files_modified><file>/p/x.py</file></files_modified>"
                         "</observation>", project="/p")
        ai = reply.observations[0].to_new(session_id="s", project="/p",
                                          source_event_ids=[event_id])
        ai = with_supersedes(ai, session_observations(conn, "s"))
        assert ai.supersedes == (plain_id,)
        ai_id = insert_observation(conn, ai).id
        rows = {o.id: o for o in session_observations(conn, "s")}
        assert rows[plain_id].superseded_by == ai_id and rows[plain_id].backend == "rules"
        assert rows[ai_id].files_modified == ("x.py",)
        assert get_event(conn, event_id).status == "done"
    finally:
        conn.close()
