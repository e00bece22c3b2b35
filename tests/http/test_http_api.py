"""The write and status routes: health, readiness, debug, ingestion, settings, deletes."""

from __future__ import annotations

import json

import pytest
import trio
from http_helpers import headers, seed_observation, seed_session

from memlite.actors.session import Deliver
from memlite.actors.storage import StorePrompt, StoreSummary
from memlite.storage import audit_entries, get_session, table_counts
from memlite.storage.records import NewSummary


async def _read(readers, fn, *args, **kwargs):
    async with readers.borrow() as conn:
        return await conn.async_run(fn, conn, *args, **kwargs)


async def test_health_needs_no_token(client, services):
    response = await client.get("/api/health", headers=headers())
    assert response.status_code == 200
    body = await response.get_json()
    assert body["status"] == "ok"
    assert body["pid"] == services.pid
    assert body["version"] == "0.0.0-test"
    assert body["uptime"] >= 0


async def test_readiness_is_503_until_ready(client, services, token):
    services.ready = trio.Event()
    response = await client.get("/api/readiness", headers=headers(token))
    assert response.status_code == 503
    body = await response.get_json()
    assert body["ready"] is False and body["status"] == 503 and body["error"]
    services.ready.set()
    response = await client.get("/api/readiness", headers=headers(token))
    assert response.status_code == 200
    assert (await response.get_json())["ready"] is True


async def test_debug_sessions_lists_actors_and_memory(client, token, sessions):
    await sessions.send(Deliver(session_id="s-1", event_id=None, event_name="SessionStart"))
    response = await client.get("/api/debug/sessions", headers=headers(token))
    assert response.status_code == 200
    body = await response.get_json()
    assert body["rss_bytes"] > 1_000_000
    assert set(body["mailboxes"]) == {"storage", "sessions", "bus"}
    assert body["mailboxes"]["storage"]["size"] > 0
    [session] = body["sessions"]
    assert session["session_id"] == "s-1" and session["observer_pid"] is None
    assert {"idle_seconds", "uptime_seconds", "mailbox_depth"} <= set(session)


async def test_every_request_touches_activity(client, services, token):
    before = services.activity.requests
    await client.get("/api/health", headers=headers())
    await client.get("/api/settings", headers=headers(token))
    assert services.activity.requests == before + 2
    assert services.activity.last_request_at > 0


# --- ingestion -----------------------------------------------------------------------------


async def test_session_event_summarize_complete_round_trip(client, token, readers):
    h = headers(token)
    start = await client.post("/api/sessions", headers=h, json={
        "session_id": "s-42", "hook_event_name": "UserPromptSubmit", "cwd": "/tmp/x",
        "prompt": "fix the flaky test"})
    assert start.status_code == 200, await start.get_data()
    body = await start.get_json()
    assert body["session_id"] == "s-42" and body["created"] is True
    assert isinstance(body["event_id"], int) and body["skipped"] is False

    event = {"session_id": "s-42", "hook_event_name": "PostToolUse", "tool_name": "Bash",
             "tool_use_id": "toolu_1", "tool_input": {"command": "ls"}, "cwd": "/tmp/x"}
    first = await (await client.post("/api/events", headers=h, json=event)).get_json()
    again = await (await client.post("/api/events", headers=h, json=event)).get_json()
    assert first["created"] is True
    assert again["event_id"] == first["event_id"] and again["created"] is False  # idempotent

    for path in ("/api/summarize", "/api/sessions/complete"):
        response = await client.post(path, headers=h, json={"session_id": "s-42"})
        assert response.status_code == 200, (path, await response.get_data())
    counts = await _read(readers, table_counts)
    assert counts["sessions"] == 1 and counts["user_prompts"] == 1
    assert counts["events"] >= 4
    assert await _read(readers, get_session, "s-42") is not None


@pytest.mark.parametrize("cwd", ["/tmp/" + "x" * 300 + "/proj", "/tmp/a\x00b"],
                         ids=["component-over-255-bytes", "nul"])
async def test_an_event_whose_cwd_cannot_be_examined_is_stored_not_500(client, token,
                                                                     readers, cwd):
    """Issue 13: it answered 500, so the hook spooled it, and it jammed every drain."""
    response = await client.post("/api/sessions", headers=headers(token), json={
        "session_id": "s-cwd", "hook_event_name": "SessionStart", "cwd": cwd})
    assert response.status_code == 200, await response.get_data()
    session = await _read(readers, get_session, "s-cwd")
    assert session.project == cwd.replace("\x00", "\ufffd")


@pytest.mark.parametrize("path", ["/api/summarize", "/api/sessions/complete"])
async def test_unknown_session_is_404(client, token, path):
    response = await client.post(path, headers=headers(token), json={"session_id": "nope"})
    assert response.status_code == 404
    body = await response.get_json()
    assert body["status"] == 404 and "nope" in body["error"]


# --- settings ------------------------------------------------------------------------------


async def test_settings_never_show_a_secret(client, token):
    response = await client.get("/api/settings", headers=headers(token))
    assert response.status_code == 200
    text = (await response.get_data()).decode()
    assert token not in text
    settings = json.loads(text)["settings"]
    assert settings["SUMMARY_COUNT"]["value"] == 3
    assert {"value", "source", "default", "doc"} <= set(settings["SUMMARY_COUNT"])


@pytest.fixture
def observer_unset(monkeypatch):
    """Without the suite's MEMLITE_OBSERVER=rules (conftest), OBSERVER is the file's."""
    monkeypatch.delenv("MEMLITE_OBSERVER")


async def test_settings_round_trip_persisted_and_audited(observer_unset, client, token,
                                                         services, readers, data_dir):
    response = await client.put("/api/settings", headers=headers(token),
                                json={"SUMMARY_COUNT": 7, "OBSERVER": "rules"})
    assert response.status_code == 200, await response.get_data()
    body = await response.get_json()
    assert body["changed"] == ["OBSERVER", "SUMMARY_COUNT"]
    assert body["restart_required"] == [] and body["overridden_by_env"] == []
    assert body["settings"]["SUMMARY_COUNT"]["value"] == 7
    assert services.settings.summary_count == 7  # the live settings were replaced
    stored = json.loads((data_dir / "settings.json").read_text())
    assert stored["SUMMARY_COUNT"] == 7 and stored["OBSERVER"] == "rules"
    again = await (await client.get("/api/settings", headers=headers(token))).get_json()
    assert again["settings"]["OBSERVER"]["value"] == "rules"

    [entry] = [e for e in await _read(readers, audit_entries) if e.action == "update_settings"]
    assert entry.actor == "http:token" and entry.target == "settings"
    assert json.loads(entry.detail) == {"changes": {
        "OBSERVER": {"old": "auto", "new": "rules"},
        "SUMMARY_COUNT": {"old": 3, "new": 7}}}


async def test_port_change_needs_a_restart(client, token):
    body = await (await client.put("/api/settings", headers=headers(token),
                                   json={"WORKER_PORT": 40123})).get_json()
    assert body["restart_required"] == ["WORKER_PORT"]


@pytest.mark.parametrize(("update", "named"), [
    ({"SUMMARY_COUNT": "lots"}, "SUMMARY_COUNT"),
    ({"SUMMARY_COUNT": 999}, "SUMMARY_COUNT"),
    ({"NOPE": 1}, "NOPE"),
    ({"OLLAMA_URL": "http://10.0.0.5:11434"}, "OLLAMA_URL"),  # no non-loopback address
    ({"OBSERVER_MODEL": "/usr/bin/evil"}, "OBSERVER_MODEL"),  # no program paths
    ({}, "no settings"),
])
async def test_bad_settings_are_400_naming_the_key(client, token, data_dir, update, named):
    before = (data_dir / "settings.json").read_text()
    response = await client.put("/api/settings", headers=headers(token), json=update)
    assert response.status_code == 400
    body = await response.get_json()
    assert named in body["error"] and body["status"] == 400
    assert (data_dir / "settings.json").read_text() == before  # nothing half-written


# --- deletes -------------------------------------------------------------------------------


async def test_delete_session_cascades_and_is_audited(client, token, storage, readers):
    await seed_session(storage, "s-del")
    obs_id = await seed_observation(storage, "s-del", title="doomed", at_ms=1_000)
    await storage.ask(lambda reply: StorePrompt(session_id="s-del", prompt_text="hi",
                                                reply=reply), timeout=5)
    summary_id = await storage.ask(lambda reply: StoreSummary(summary=NewSummary(
        session_id="s-del", project="/p/alpha", request="r"), reply=reply), timeout=5)

    response = await client.delete("/api/sessions/s-del", headers=headers(token))
    assert response.status_code == 200
    assert await response.get_json() == {"deleted": True, "session_id": "s-del"}
    counts = await _read(readers, table_counts)
    assert counts["sessions"] == counts["observations"] == counts["summaries"] == 0
    assert counts["user_prompts"] == 0
    [entry] = await _read(readers, audit_entries)
    assert (entry.action, entry.target, entry.actor) == ("delete_session", "session:s-del",
                                                         "http:token")
    assert json.loads(entry.detail)["observations"] == 1
    for path in ("/api/sessions/s-del", f"/api/observations/{obs_id}",
                 f"/api/summaries/{summary_id}"):
        again = await client.delete(path, headers=headers(token))
        assert again.status_code == 404, path


async def test_delete_observation_and_summary_are_audited(client, token, storage, readers):
    await seed_session(storage, "s-1")
    obs_id = await seed_observation(storage, "s-1", title="one", at_ms=1_000)
    summary_id = await storage.ask(lambda reply: StoreSummary(summary=NewSummary(
        session_id="s-1", project="/p/alpha"), reply=reply), timeout=5)
    first = await client.delete(f"/api/observations/{obs_id}", headers=headers(token))
    second = await client.delete(f"/api/summaries/{summary_id}", headers=headers(token))
    assert first.status_code == second.status_code == 200
    actions = sorted(e.action for e in await _read(readers, audit_entries))
    assert actions == ["delete_observation", "delete_summary"]
