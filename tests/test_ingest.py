"""Ingestion, with the real storage actor, bus and session supervisor (real clock).

Every captured hook payload goes in and the right rows come out; a replay writes
nothing; bad payloads are refused with a message naming the field, and store nothing.
"""

from __future__ import annotations

import json
import logging

import pytest
from worker_helpers import (
    fixture,
    published,
    query,
    running_services,
    session_actors,
    subscribe,
)

from memlite.errors import InputError, NotFound
from memlite.ingest import KNOWN_EVENTS, IngestResult, ingest_hook_event

pytestmark = pytest.mark.loop_guard  # issue 17: fail when the event loop is blocked

SID = "063ff789-6364-494f-89fe-b93ab95a9061"


@pytest.fixture
async def services(data_dir):
    async with running_services(data_dir) as found:
        yield found


def events(data_dir, session_id=SID):
    return query(data_dir, "SELECT event_name, tool_name, tool_use_id, status FROM events "
                           "WHERE session_id = ? ORDER BY id", (session_id,))


def session(data_dir, session_id=SID):
    rows = query(data_dir, "SELECT status, project, project_name, branch, commit_sha, source, "
                           "cwd, prompt_count FROM sessions WHERE id = ?", (session_id,))
    return rows[0] if rows else None


def prompts(data_dir, session_id=SID):
    return query(data_dir, "SELECT prompt_number, prompt_text FROM user_prompts "
                           "WHERE session_id = ? ORDER BY prompt_number", (session_id,))


# name of the fixture: (event_name, tool_name, tool_use_id, status)
EXPECTED = {
    "SessionStart.startup": ("SessionStart", None, None, "pending"),
    "SessionStart.resume": ("SessionStart", None, None, "pending"),
    "SessionStart.compact": ("SessionStart", None, None, "pending"),
    "UserPromptSubmit": ("UserPromptSubmit", None, None, "pending"),
    "PostToolUse.Bash": ("PostToolUse", "Bash", "toolu_fake00009f09cacfb14f", "pending"),
    "PostToolUse.Read": ("PostToolUse", "Read", None, "pending"),
    "PostToolUse.mcp": ("PostToolUse", "mcp__plugin_memlab_memlab-mcp__memlab_search",
                        "toolu_fake000370f6c488f32d", "pending"),
    "PostToolUse.Agent": ("PostToolUse", "Agent", None, "pending"),
    "PostToolUseFailure.Bash": ("PostToolUseFailure", "Bash", "toolu_fake0002ec3b49d9d668",
                                "pending"),
    "Stop": ("Stop", None, None, "pending"),
    "SubagentStop": ("SubagentStop", None, None, "pending"),
    "SubagentStop.compaction-internal": ("SubagentStop", None, None, "pending"),
    "PreCompact.manual": ("PreCompact", None, None, "pending"),
    "SessionEnd.other": ("SessionEnd", None, None, "pending"),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
async def test_every_captured_event_is_stored(services, data_dir, name):
    payload = fixture(name)
    session_id = payload["session_id"]
    result = await ingest_hook_event(services, payload)
    assert result == IngestResult(event_id=1, created=True, session_id=session_id,
                                  skipped=False)
    expected = list(EXPECTED[name])
    if expected[2] is None and "tool_use_id" in payload:
        expected[2] = payload["tool_use_id"]
    assert events(data_dir, session_id) == [tuple(expected)]
    (stored,) = query(data_dir, "SELECT payload FROM events")
    assert json.loads(stored[0]) == payload  # the whole payload is kept
    status = session(data_dir, session_id)[0]
    assert status == ("completed" if name.startswith("SessionEnd") else "active")
    assert prompts(data_dir, session_id) == ([(1, "Do the lab steps")]
                                             if name == "UserPromptSubmit" else [])


async def test_a_whole_session(services, data_dir):
    channel = await subscribe(services)
    order = ["SessionStart.startup", "UserPromptSubmit", "PostToolUse.Bash", "PostToolUse.Read",
             "PostToolUseFailure.Bash", "PostToolUse.Agent", "SubagentStop", "Stop",
             "PreCompact.manual", "SessionStart.compact", "SessionEnd.other"]
    results = [await ingest_hook_event(services, fixture(name)) for name in order]
    assert [r.event_id for r in results] == list(range(1, 12))
    assert [e[0] for e in events(data_dir)] == [
        "SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUse", "PostToolUseFailure",
        "PostToolUse", "SubagentStop", "Stop", "PreCompact", "SessionStart", "SessionEnd"]
    assert session(data_dir) == ("completed", None, None, None, None, "compact",
                                 "<PROJECT_DIR>", 1)
    assert prompts(data_dir) == [(1, "Do the lab steps")]
    sent = await published(channel)
    assert [(e["type"], e["sessionId"], e["eventId"], e["eventName"]) for e in sent] == [
        ("event", SID, i, fixture(name)["hook_event_name"]) for i, name in enumerate(order, 1)]
    assert sent[2]["toolName"] == "Bash" and isinstance(sent[2]["at"], int)
    assert await session_actors(services) == []  # started on the first event, ended by the last


async def test_the_session_actor_sees_each_stored_event(services):
    for name in ("SessionStart.startup", "UserPromptSubmit", "PostToolUse.Bash"):
        await ingest_hook_event(services, fixture(name))
    (info,) = await session_actors(services)
    assert (info.session_id, info.events_seen) == (SID, 3)


async def test_a_replay_writes_nothing_and_tells_no_one(services, data_dir):
    channel = await subscribe(services)
    for name in ("UserPromptSubmit", "PostToolUse.Bash", "PostToolUse.Read", "Stop"):
        first = await ingest_hook_event(services, fixture(name))
        again = await ingest_hook_event(services, fixture(name))
        assert (again.event_id, again.created) == (first.event_id, False)
    assert len(events(data_dir)) == 4
    assert prompts(data_dir) == [(1, "Do the lab steps")]  # not a second prompt
    assert len(await published(channel)) == 4
    (info,) = await session_actors(services)
    assert info.events_seen == 4


async def test_a_replayed_session_start_does_not_reopen_an_ended_session(services, data_dir):
    await ingest_hook_event(services, fixture("SessionStart.startup"))
    await ingest_hook_event(services, fixture("SessionEnd.other"))
    await ingest_hook_event(services, fixture("SessionStart.startup"))  # a late replay
    assert session(data_dir)[0] == "completed"
    await ingest_hook_event(services, fixture("SessionStart.resume"))  # a real resume
    assert session(data_dir)[0] == "active"


@pytest.mark.parametrize("tool", ["TodoWrite", "mcp__plugin_memlite_memlite__memory_search"])
async def test_skipped_tools_are_stored_but_not_observed(services, data_dir, tool):
    channel = await subscribe(services)
    payload = fixture("PostToolUse.Bash", tool_name=tool, tool_use_id="toolu_skip")
    result = await ingest_hook_event(services, payload)
    assert (result.created, result.skipped) == (True, True)
    assert events(data_dir) == [("PostToolUse", tool, "toolu_skip", "skipped")]
    assert await published(channel) == []
    assert await session_actors(services) == []


async def test_an_empty_prompt_marks_a_private_turn(services, data_dir):
    await ingest_hook_event(services, fixture("UserPromptSubmit", prompt=""))
    assert prompts(data_dir) == [(1, "")]


async def test_prompts_are_numbered_in_order(services, data_dir):
    for i, text in enumerate(["first", "second", "third"]):
        await ingest_hook_event(services, fixture("UserPromptSubmit", prompt=text,
                                                  prompt_id=f"p{i}"))
    assert prompts(data_dir) == [(1, "first"), (2, "second"), (3, "third")]
    assert session(data_dir)[7] == 3


async def test_a_prompt_without_its_text_is_stored_without_a_prompt_row(services, data_dir,
                                                                        caplog):
    payload = fixture("UserPromptSubmit")
    del payload["prompt"]
    await ingest_hook_event(services, payload)
    assert events(data_dir)[0][0] == "UserPromptSubmit" and prompts(data_dir) == []
    assert "UserPromptSubmit without a prompt" in caplog.text


async def test_an_event_of_an_unknown_session_creates_it_with_a_warning(services, data_dir,
                                                                        caplog):
    await ingest_hook_event(services, fixture("PostToolUse.Bash"))
    assert session(data_dir)[0] == "active"
    assert f"session {SID} was unknown: created from its PostToolUse event" in caplog.text


@pytest.mark.parametrize(("route_event", "name"), [("Stop", "Stop"),
                                                   ("SessionEnd", "SessionEnd.other")])
async def test_summarize_and_complete_need_a_known_session(services, data_dir, route_event,
                                                            name):
    with pytest.raises(NotFound, match="unknown session"):
        await ingest_hook_event(services, fixture(name), event_name=route_event)
    assert query(data_dir, "SELECT count(*) FROM events") == [(0,)]
    assert session(data_dir) is None
    await ingest_hook_event(services, fixture("SessionStart.startup"))
    result = await ingest_hook_event(services, fixture(name), event_name=route_event)
    assert result.created


async def test_project_identity_from_the_cwd(services, data_dir, tmp_path):
    repo = tmp_path / "work" / "api"
    (repo / ".git" / "refs" / "heads").mkdir(parents=True)
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/dev\n")
    (repo / ".git" / "refs" / "heads" / "dev").write_text("d" * 40 + "\n")
    (repo / "src").mkdir()
    await ingest_hook_event(services, fixture("SessionStart.startup", cwd=str(repo / "src")))
    assert session(data_dir)[1:6] == (str(repo), "api", "dev", "d" * 40, "startup")
    # A session whose start was missed still gets its project from its first event.
    await ingest_hook_event(services, fixture("PostToolUse.Bash", session_id="other",
                                              cwd=str(repo)))
    assert session(data_dir, "other")[1:3] == (str(repo), "api")


async def test_the_time_given_is_the_time_stored(services, data_dir):
    await ingest_hook_event(services, fixture("Stop"), at_ms=1_700_000_000_000)
    assert query(data_dir, "SELECT created_at_epoch FROM events") == [(1_700_000_000_000,)]


BAD = [
    ([1, 2], "the body must be a JSON object, not an array"),
    ({}, "missing field 'hook_event_name'"),
    ({"hook_event_name": "Stop"}, "missing field 'session_id'"),
    ({"hook_event_name": "Stop", "session_id": "  "}, "missing field 'session_id'"),
    ({"hook_event_name": "Stop", "session_id": 7}, "field 'session_id' must be a string, "
                                                   "not a number"),
    ({"hook_event_name": "Stop", "session_id": "x" * 201}, "field 'session_id' is too long"),
    ({"hook_event_name": ["Stop"], "session_id": "s"}, "field 'hook_event_name' must be a "
                                                       "string, not an array"),
    ({"hook_event_name": "PostToolUse", "session_id": "s"}, "missing field 'tool_name'"),
    ({"hook_event_name": "PostToolUse", "session_id": "s", "tool_name": {}},
     "field 'tool_name' must be a string, not an object"),
    ({"hook_event_name": "PostToolUse", "session_id": "s", "tool_name": "Bash",
      "tool_use_id": 5}, "field 'tool_use_id' must be a string"),
    ({"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": None, "cwd": True},
     "field 'cwd' must be a string, not true/false"),
    ({"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": 3},
     "field 'prompt' must be a string"),
    ({"hook_event_name": "SessionEnd", "session_id": "s", "reason": 1},
     "field 'reason' must be a string"),
    ({"hook_event_name": "Stop", "session_id": "s", "last_assistant_message": []},
     "field 'last_assistant_message' must be a string"),
    ({"hook_event_name": "Stop", "session_id": "s", "cwd": "/" + "a" * 5000},
     "field 'cwd' is too long (5001 > 4096 characters)"),
    ({"hook_event_name": "Stop", "session_id": "s", "x": float("nan")},
     "the payload is not storable as JSON: Out of range float values"),
    ({"hook_event_name": "Stop", "session_id": "s", "x": "\ud800"},
     "the payload is not storable as JSON: 'utf-8' codec can't encode"),
]


@pytest.mark.parametrize(("payload", "message"), BAD, ids=[m for _, m in BAD])
async def test_bad_payloads_are_refused_and_nothing_is_stored(services, data_dir, payload,
                                                              message):
    with pytest.raises(InputError) as caught:
        await ingest_hook_event(services, payload)
    assert caught.value.status == 400
    assert message in str(caught.value)
    assert query(data_dir, "SELECT count(*) FROM events") == [(0,)]


@pytest.mark.parametrize("name", ["PreToolUse.Bash", "PermissionRequest.Bash",
                                  "PostCompact.manual"])
async def test_unknown_events_are_refused_with_the_known_ones_listed(services, name):
    with pytest.raises(InputError) as caught:
        await ingest_hook_event(services, fixture(name))
    assert "unknown hook event" in str(caught.value)
    assert ", ".join(KNOWN_EVENTS) in str(caught.value)


async def test_a_route_and_a_payload_that_disagree(services):
    with pytest.raises(InputError, match="'hook_event_name' is 'Stop' but this endpoint takes "
                                         "'SessionEnd' events"):
        await ingest_hook_event(services, fixture("Stop"), event_name="SessionEnd")


async def test_the_route_may_name_the_event(services, data_dir):
    payload = fixture("SessionStart.startup")
    del payload["hook_event_name"]
    await ingest_hook_event(services, payload, event_name="SessionStart")
    assert events(data_dir)[0][0] == "SessionStart"


async def test_a_dead_session_supervisor_does_not_fail_a_stored_event(services, data_dir,
                                                                      caplog, monkeypatch):
    class Dead:
        async def send(self, message):
            from memlite.errors import ActorDied

            raise ActorDied("actor 'sessions' is not running")

    monkeypatch.setattr(services, "sessions", Dead())
    caplog.set_level(logging.WARNING)
    result = await ingest_hook_event(services, fixture("Stop"))
    assert result.created and len(events(data_dir)) == 1
    assert "Deliver not sent" in caplog.text


async def test_a_large_high_entropy_body_is_redacted_off_the_event_loop(services, data_dir):
    """Issue 17: redacting a 1 MB high-entropy body took ~42 ms on the Trio thread; the
    module's ``loop_guard`` fails the test if any step holds the loop over its limit."""
    import secrets

    import trio

    from memlite.privacy import clean

    def make() -> str:  # on a thread: the test's own work must not block the loop either
        return " ".join(f"key{i}={secrets.token_urlsafe(16)}" for i in range(30_000))

    # ~1 MB of key=value pairs with random values (a dumped environment, a log): ~25-40
    # ms of redaction on one core.
    body = await trio.to_thread.run_sync(make)
    payload = fixture("PostToolUse.Bash", tool_use_id="toolu_big",
                      tool_response={"stdout": body, "stderr": "", "interrupted": False})
    result = await ingest_hook_event(services, payload)
    assert result.created
    (stored,) = await trio.to_thread.run_sync(query, data_dir, "SELECT payload FROM events")
    expected = await trio.to_thread.run_sync(clean, dict(payload))
    assert await trio.to_thread.run_sync(json.loads, stored[0]) == expected  # redacted
