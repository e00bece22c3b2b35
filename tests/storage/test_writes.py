"""Write functions: idempotent capture, sessions, observations, deletion with audit."""

from __future__ import annotations

import json

import apsw
import pytest

from memlite import storage
from memlite.storage import NewObservation, NewSummary

BASH = {"tool_input": {"command": "ls"}, "tool_response": {"stdout": "a"}}


def event(conn, **overrides):
    fields = {"session_id": "s1", "event_name": "PostToolUse", "payload": BASH}
    fields.update(overrides)
    return storage.insert_event(conn, **fields)


def test_event_with_the_same_tool_use_id_is_stored_once(db):
    first = event(db, tool_name="Bash", tool_use_id="toolu_1")
    again = event(db, tool_name="Bash", tool_use_id="toolu_1", payload={"different": True})
    assert first.created and not again.created
    assert again.id == first.id
    assert storage.get_event(db, first.id).data() == BASH  # the first one wins
    assert storage.count_events(db) == 1


def test_tool_use_ids_are_scoped_to_their_session(db):
    a = event(db, session_id="s1", tool_use_id="toolu_1")
    b = event(db, session_id="s2", tool_use_id="toolu_1")
    assert a.created and b.created and a.id != b.id


def test_event_without_tool_use_id_is_deduplicated_by_content(db):
    first = event(db, event_name="Stop", payload={"b": 1, "a": [1, 2]})
    # Same content as JSON text with other key order and spacing: still the same event.
    again = event(db, event_name="Stop", payload='{ "a": [1, 2], "b": 1 }')
    other = event(db, event_name="Stop", payload={"b": 2, "a": [1, 2]})
    assert (first.created, again.created, other.created) == (True, False, True)
    assert again.id == first.id
    assert storage.count_events(db, session_id="s1") == 2


def test_content_hash_and_tool_use_id_never_collide(db):
    with_id = event(db, tool_use_id="toolu_9", payload={"x": 1})
    without = event(db, payload={"x": 1})
    assert with_id.created and without.created


def test_event_payload_must_be_json(db):
    with pytest.raises(json.JSONDecodeError):
        event(db, payload="{not json")
    assert storage.count_events(db) == 0


def test_event_before_its_session_start_creates_a_stub_that_start_fills(db):
    event(db, session_id="early")
    stub = storage.get_session(db, "early")
    assert stub.project is None and stub.status == "active"
    session = storage.start_session(
        db, session_id="early", project="/repo/a", project_name="a", cwd="/repo/a/src",
        branch="main", source="startup",
    )
    assert (session.project, session.project_name, session.branch) == ("/repo/a", "a", "main")
    assert session.started_at_epoch == stub.started_at_epoch


def test_resume_reactivates_and_keeps_known_fields(db):
    storage.start_session(db, session_id="s1", project="/repo/a", branch="main")
    assert storage.complete_session(db, "s1")
    completed = storage.get_session(db, "s1")
    assert completed.status == "completed" and completed.completed_at is not None
    resumed = storage.start_session(db, session_id="s1", source="resume")
    assert resumed.status == "active" and resumed.completed_at is None
    assert (resumed.project, resumed.branch, resumed.source) == ("/repo/a", "main", "resume")
    assert not storage.complete_session(db, "nope")


def test_sdk_session_id(db):
    storage.start_session(db, session_id="s1")
    assert storage.set_sdk_session_id(db, "s1", "sdk-1")
    assert storage.get_session(db, "s1").sdk_session_id == "sdk-1"
    assert not storage.set_sdk_session_id(db, "nope", "sdk-2")


def test_prompts_are_numbered_and_idempotent(db):
    one = storage.insert_prompt(db, session_id="s1", prompt_text="first")
    two = storage.insert_prompt(db, session_id="s1", prompt_text="")  # private
    replay = storage.insert_prompt(db, session_id="s1", prompt_text="first", prompt_number=1)
    assert (one.created, two.created, replay.created) == (True, True, False)
    assert replay.id == one.id
    prompts = storage.get_prompts(db, "s1")
    assert [(p.prompt_number, p.prompt_text) for p in prompts] == [(1, "first"), (2, "")]
    assert storage.get_session(db, "s1").prompt_count == 2


def test_observation_marks_its_events_done_in_the_same_call(db, add_observation):
    ids = [event(db, tool_use_id=f"t{i}").id for i in range(3)]
    obs_id = add_observation(
        title="Fixed the WAL checkpoint", facts=["uses apsw"], files_modified=["db.py"],
        source_event_ids=ids[:2],
    )
    statuses = [storage.get_event(db, i).status for i in ids]
    assert statuses == ["done", "done", "pending"]
    obs = storage.get_observation(db, obs_id)
    assert obs.facts == ("uses apsw",) and obs.files_modified == ("db.py",)
    assert obs.source_event_ids == tuple(ids[:2]) and obs.superseded_by is None
    assert [e.id for e in storage.pending_events(db, session_id="s1")] == [ids[2]]


def test_same_observation_twice_is_one_row(db, add_observation):
    first = add_observation(title="same", narrative="text")
    second = add_observation(title="same", narrative="text")
    assert first == second
    assert storage.count_observations(db) == 1


def test_ai_observation_supersedes_the_plain_one(db, add_observation):
    plain = add_observation(title="Ran ls", backend="rules")
    ai = add_observation(title="Listed the repo to find the config", supersedes=[plain])
    assert storage.get_observation(db, plain).superseded_by == ai
    assert [o.id for o in storage.recent_observations(db, "/repo/a")] == [ai]
    every = storage.recent_observations(db, "/repo/a", include_superseded=True)
    assert {o.id for o in every} == {plain, ai}
    # Deleting the newer one brings the plain one back rather than dangling.
    assert storage.delete_observation(db, ai, actor="user")
    assert storage.get_observation(db, plain).superseded_by is None


def test_a_failed_write_in_a_savepoint_undoes_only_itself(db):
    with db:
        event(db, session_id="kept")
        with pytest.raises(apsw.ConstraintError):
            with db:
                storage.insert_summary(db, NewSummary(session_id="gone", project=None))
    assert storage.get_session(db, "kept") is not None
    assert storage.get_session(db, "gone") is None  # its stub session went with it


def test_event_status_transitions_count_attempts(db):
    ids = [event(db, tool_use_id=f"t{i}").id for i in range(2)]
    assert storage.set_event_status(db, ids, "processing") == 2
    assert storage.requeue_processing_events(db) == 2
    assert storage.set_event_status(db, ids[:1], "processing") == 1
    assert storage.set_event_status(db, ids[1:], "skipped") == 1
    first, second = (storage.get_event(db, i) for i in ids)
    assert (first.status, first.attempts) == ("processing", 2)
    assert (second.status, second.attempts) == ("skipped", 1)
    with pytest.raises(ValueError, match="unknown event status"):
        storage.set_event_status(db, ids, "lost")


def test_summaries(db):
    sid = storage.insert_summary(
        db, NewSummary(session_id="s1", project="/repo/a", request="fix tests", learned="x")
    )
    assert storage.get_summary(db, sid).request == "fix tests"
    assert [s.id for s in storage.recent_summaries(db, "/repo/a")] == [sid]


def test_deletes_are_audited(db, add_observation):
    obs = add_observation(title="secret-ish")
    summary = storage.insert_summary(db, NewSummary(session_id="s1", project="/repo/a"))
    assert storage.delete_observation(db, obs, actor="user")
    assert storage.delete_summary(db, summary, actor="api")
    assert not storage.delete_observation(db, obs, actor="user")  # already gone: no audit
    entries = storage.audit_entries(db)
    assert [(e.actor, e.action, e.target) for e in entries] == [
        ("api", "delete_summary", f"summary:{summary}"),
        ("user", "delete_observation", f"observation:{obs}"),
    ]
    assert json.loads(entries[1].detail) == {"title": "secret-ish"}


def test_delete_session_cascades_and_records_counts(db, add_observation):
    storage.start_session(db, session_id="s1", project="/repo/a")
    event(db, tool_use_id="t1")
    storage.insert_prompt(db, session_id="s1", prompt_text="hi")
    add_observation()
    storage.insert_summary(db, NewSummary(session_id="s1", project="/repo/a"))
    event(db, session_id="other", tool_use_id="t1")
    assert storage.delete_session(db, "s1", actor="user")
    counts = storage.table_counts(db)
    assert counts == {"sessions": 1, "user_prompts": 0, "events": 1, "observations": 0,
                      "summaries": 0, "audit_log": 1}
    (entry,) = storage.audit_entries(db)
    assert json.loads(entry.detail) == {
        "events": 1, "user_prompts": 1, "observations": 1, "summaries": 1
    }
    assert not storage.delete_session(db, "s1", actor="user")


def test_record_audit(db):
    entry_id = storage.record_audit(
        db, actor="cli", action="export", target="project:/repo/a", detail={"rows": 3}
    )
    (entry,) = storage.audit_entries(db)
    assert entry.id == entry_id and entry.at.endswith("Z")
    assert json.loads(entry.detail) == {"rows": 3}


def test_new_observation_coerces_sequences():
    obs = NewObservation(session_id="s", project="p", type="t", title="x", facts="one fact",
                         source_event_ids=[1, "2"])
    assert obs.facts == ("one fact",) and obs.source_event_ids == (1, 2)
