"""The observer in the status routes: health line, token count, per-session backend."""

from __future__ import annotations

from http_helpers import headers

from memlite.actors.observer import ObserverHub
from memlite.actors.session import Deliver
from memlite.observer.governor import Governor


async def test_health_and_debug_show_the_observer(client, token, services, storage):
    async def read(fn, *args, **kwargs):
        raise AssertionError("not used")

    hub = ObserverHub(storage=storage, read=read, governor=Governor(daily_tokens=1000))
    services.observer = hub
    body = await (await client.get("/api/health", headers=headers())).get_json()
    assert body["status"] == "ok" and body["observer"] is None

    hub.governor.spend(250)
    hub.failing["abcdef12-session"] = (3, "ObserverTimeout: slow")
    body = await (await client.get("/api/health", headers=headers())).get_json()
    assert body["observer"].startswith("AI observer failing: 3 failures in a row")

    response = await client.get("/api/debug/sessions", headers=headers(token))
    debug = await response.get_json()
    assert debug["observer"]["tokens_today"] == 250
    assert debug["observer"]["daily_tokens"] == 1000
    assert debug["observer"]["concurrency"] == 2
    assert "3 failures" in debug["observer"]["health"]


async def test_debug_sessions_has_backend_and_tokens_fields(client, token, sessions):
    await sessions.send(Deliver(session_id="s-1", event_id=None, event_name="SessionStart"))
    body = await (await client.get("/api/debug/sessions", headers=headers(token))).get_json()
    [session] = body["sessions"]
    assert {"backend", "tokens_used", "observer_failures"} <= set(session)
