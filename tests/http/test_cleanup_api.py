"""The cleanup routes through the in-process test client: the review stream's events in
order, apply's audited deletes, bad bodies, and the AI reviewer over the fake CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio
from http_helpers import ORIGIN, headers, seed_observation, seed_session

from memlite.actors.observer import ObserverHub
from memlite.http.cleanup_api import CONFIG_KEY
from memlite.observer.governor import Governor
from memlite.storage import connect

FAKE = Path(__file__).resolve().parents[1] / "observer" / "fake_claude_cleanup.py"
AT = 1_780_000_000_000


def parse_stream(raw: bytes) -> list[tuple[str, dict]]:
    events = []
    for block in raw.decode().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "event" in fields:
            events.append((fields["event"], json.loads(fields["data"])))
    return events


async def seed(storage):
    await seed_session(storage, "s1")
    keep = await seed_observation(storage, "s1", title="Chose Redis for the cache", at_ms=AT)
    dup_old = await seed_observation(storage, "s1", title="Webhook fix", at_ms=AT + 1,
                                     narrative="same")
    dup_new = await seed_observation(storage, "s1", title="webhook  FIX", at_ms=AT + 2,
                                     narrative="Same")
    return keep, dup_old, dup_new


async def review(client, token, body):
    """POST and read the body as it streams (the test client's ``post`` would buffer at
    most 10 chunks before anyone reads them, and wait forever)."""
    chunks = []
    with trio.fail_after(30):
        async with client.request("/api/cleanup/review", method="POST",
                                  headers={**headers(token),
                                           "Content-Type": "application/json"}) as connection:
            await connection.send(json.dumps(body).encode())
            await connection.send_complete()
            try:
                while True:
                    chunks.append(await connection.receive())
            except (trio.EndOfChannel, trio.ClosedResourceError):
                pass
    return connection, b"".join(chunks)


async def test_rules_review_streams_start_pending_verdict_done(client, token, storage):
    keep, dup_old, dup_new = await seed(storage)
    response, raw = await review(client, token, {"project": "/p/alpha", "mode": "rules"})
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/event-stream")
    events = parse_stream(raw)
    assert [name for name, _ in events] == ["start"] + ["pending"] * 3 + ["verdict"] * 3 + [
        "done"]
    assert events[0][1] == {"project": "/p/alpha", "by": "rules", "candidates": 3}
    assert [d["id"] for _, d in events[1:4]] == [dup_new, dup_old, keep]
    assert events[1][1] == {"id": dup_new, "type": "discovery", "title": "webhook  FIX"}
    verdicts = {d["id"]: (d["verdict"], d["by"]) for name, d in events if name == "verdict"}
    assert verdicts == {dup_new: ("KEEP", "rules"), dup_old: ("DELETE", "rules"),
                        keep: ("KEEP", "rules")}
    assert events[-1][1] == {"reviewed": 3, "delete": 1, "keep": 2, "by": "rules"}
    # Review deleted nothing.
    found = await client.post("/api/observations/batch", json={"ids": [dup_old]},
                              headers=headers(token))
    assert (await found.get_json())["missing"] == []


async def test_auto_without_an_ai_observer_is_rules_and_limit_bounds_candidates(
        client, token, storage):
    await seed(storage)
    _, raw = await review(client, token, {"project": "/p/alpha", "limit": 2})
    events = parse_stream(raw)
    assert events[0][1]["by"] == "rules" and events[0][1]["candidates"] == 2
    _, raw = await review(client, token, {"project": "/p/nowhere"})
    assert parse_stream(raw) == [
        ("start", {"project": "/p/nowhere", "by": "rules", "candidates": 0}),
        ("done", {"reviewed": 0, "delete": 0, "keep": 0, "by": "rules"})]


async def test_ai_mode_without_an_observer_is_409(client, token, storage):
    response, raw = await review(client, token, {"project": "/p/alpha", "mode": "ai"})
    assert response.status_code == 409
    assert "not available" in json.loads(raw)["error"]


@pytest.mark.parametrize("body, field", [
    ({}, "project"), ({"project": ""}, "project"), ({"project": 3}, "project"),
    ({"project": "/p", "mode": "magic"}, "mode"), ({"project": "/p", "limit": 0}, "limit"),
    ({"project": "/p", "limit": 501}, "limit"), ({"project": "/p", "limit": "5"}, "limit"),
    ({"project": "/p", "limit": True}, "limit"),
])
async def test_bad_review_bodies_are_400(client, token, body, field):
    response, raw = await review(client, token, body)
    assert response.status_code == 400
    assert f"field {field}" in json.loads(raw)["error"]


async def test_apply_deletes_audits_and_lists_missing(client, token, storage, data_dir):
    keep, dup_old, dup_new = await seed(storage)
    response = await client.post("/api/cleanup/apply", json={"ids": [dup_old, 987654, dup_old]},
                                 headers=headers(token))
    assert response.status_code == 200
    assert await response.get_json() == {"deleted": [dup_old], "missing": [987654]}
    found = await client.post("/api/observations/batch", json={"ids": [keep, dup_old, dup_new]},
                              headers=headers(token))
    assert (await found.get_json())["missing"] == [dup_old]
    conn = connect(data_dir, writer=False)
    try:
        rows = conn.execute("SELECT actor, action, target FROM audit_log").fetchall()
    finally:
        conn.close()
    assert rows == [("http:token", "delete_observation", f"observation:{dup_old}")]


@pytest.mark.parametrize("body", [{}, {"ids": "1"}, {"ids": [0]}, {"ids": ["x"]},
                                  {"ids": [True]}, {"ids": list(range(1, 1002))}])
async def test_bad_apply_bodies_are_400(client, token, body):
    response = await client.post("/api/cleanup/apply", json=body, headers=headers(token))
    assert response.status_code == 400


async def test_apply_from_another_origin_is_refused(client, token, storage):
    _, dup_old, _ = await seed(storage)
    response = await client.post("/api/cleanup/apply", json={"ids": [dup_old]},
                                 headers=headers(token, Origin="http://evil.example"))
    assert response.status_code == 403
    ok = await client.post("/api/cleanup/apply", json={"ids": [dup_old]},
                           headers=headers(token, Origin=ORIGIN))
    assert (await ok.get_json())["deleted"] == [dup_old]


async def test_ai_mode_over_the_fake_cli(app, client, token, storage, services):
    ids = await seed(storage)
    noisy = await seed_observation(storage, "s1", title="Edit noise", at_ms=AT + 3)

    async def read(fn, *args, **kwargs):
        raise AssertionError("not used")

    services.observer = ObserverHub(storage=storage, read=read, governor=Governor(),
                                    make_ai=lambda session_id: None)
    app.config[CONFIG_KEY] = {"cli_path": FAKE, "env": {"FAKE_CLAUDE_MODE": "ok"},
                              "turn_timeout": 10.0, "connect_timeout": 10.0}
    _, raw = await review(client, token, {"project": "/p/alpha", "mode": "auto"})
    events = parse_stream(raw)
    assert events[0][1]["by"] == "ai"
    verdicts = {d["id"]: (d["verdict"], d["by"]) for name, d in events if name == "verdict"}
    assert verdicts == {noisy: ("DELETE", "ai"), **{i: ("KEEP", "ai") for i in ids}}
    assert events[-1] == ("done", {"reviewed": 4, "delete": 1, "keep": 3, "by": "ai"})


async def test_a_failure_mid_stream_ends_it_with_an_error_event(client, token, storage,
                                                                monkeypatch):
    from memlite import cleanup

    await seed(storage)

    def broken(obs, newest):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(cleanup, "rule_verdict", broken)
    response, raw = await review(client, token, {"project": "/p/alpha", "mode": "rules"})
    assert response.status_code == 200
    events = parse_stream(raw)
    assert [name for name, _ in events] == ["start", "pending", "pending", "pending", "error"]
    assert "disk on fire" in events[-1][1]["message"]
