"""``GET /api/stream``: bus events as SSE, keep-alives, and how a stream ends."""

from __future__ import annotations

import json

import trio
import trio.testing
from http_helpers import headers

from memlite.actors.bus import GetStatistics, Publish
from memlite.http.stream import format_event


def _messages(chunk: bytes) -> list[tuple[str, dict]]:
    found = []
    for block in chunk.decode().split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line
                     and not line.startswith(":"))
        if "event" in lines:
            found.append((lines["event"], json.loads(lines["data"])))
    return found


async def _subscribers(bus) -> int:
    stats = await bus.ask(lambda reply: GetStatistics(reply=reply), timeout=2)
    return stats.subscribers


async def test_a_published_event_reaches_the_stream_and_shutdown_ends_it(client, token, bus,
                                                                          services):
    with trio.fail_after(10):
        async with client.request("/api/stream", headers=headers(token)) as connection:
            await connection.send_complete()
            first = await connection.receive()
            assert connection.status_code == 200
            assert connection.headers["Content-Type"].startswith("text/event-stream")
            assert b": connected" in first and b"retry: 3000" in first
            assert await _subscribers(bus) == 1

            event = {"type": "event", "sessionId": "s-1", "eventId": 7, "eventName": "Stop"}
            bus.send_nowait(Publish(event=event))
            assert _messages(await connection.receive()) == [("event", event)]

            services.shutdown.set()
            assert _messages(await connection.receive())[0][0] == "shutdown"
    assert connection.status_code == 200
    await trio.testing.wait_all_tasks_blocked()
    bus.send_nowait(Publish(event={"type": "event"}))  # the bus forgets the closed channel
    assert await _subscribers(bus) == 0


async def test_keep_alive_comments_flow_while_idle(app, token, services):
    app.config["MEMLITE_SSE_KEEPALIVE"] = 0.02
    with trio.fail_after(10):
        async with app.test_client().request("/api/stream",
                                              headers=headers(token)) as connection:
            await connection.send_complete()
            await connection.receive()
            assert await connection.receive() == b": keep-alive\n\n"
            services.shutdown.set()


async def test_a_slow_subscriber_is_dropped_and_told(client, token, bus):
    received = b""
    with trio.fail_after(10):
        async with client.request("/api/stream", headers=headers(token)) as connection:
            await connection.send_complete()
            await connection.receive()
            for i in range(60):  # far more than the bus (8) and client (10) buffers hold
                bus.send_nowait(Publish(event={"type": "event", "n": i}))
            try:
                while True:
                    received += await connection.receive()
            except trio.EndOfChannel:
                pass
    names = [name for name, _ in _messages(received)]
    assert names[-1] == "closed" and names.count("closed") == 1
    assert 0 < names.count("event") < 60
    stats = await bus.ask(lambda reply: GetStatistics(reply=reply), timeout=2)
    assert stats.dropped == 1


def test_event_names_cannot_inject_lines():
    assert format_event("observation", {"a": "x\ny"}) == (
        b'event: observation\ndata: {"a":"x\\ny"}\n\n')
    assert format_event("evil\ndata: x", {}).startswith(b"event: message\n")


async def test_a_posted_hook_event_is_streamed(client, token, services):
    """End to end: POST /api/events -> ingestion -> bus -> SSE."""
    with trio.fail_after(10):
        async with client.request("/api/stream", headers=headers(token)) as connection:
            await connection.send_complete()
            await connection.receive()
            response = await client.post("/api/events", headers=headers(token), json={
                "session_id": "live-1", "hook_event_name": "PostToolUse", "tool_name": "Bash",
                "tool_use_id": "toolu_9", "tool_input": {"command": "ls"}})
            stored = await response.get_json()
            [(name, event)] = _messages(await connection.receive())
            assert name == "event"
            assert event["eventId"] == stored["event_id"] and event["sessionId"] == "live-1"
            assert event["toolName"] == "Bash"
            services.shutdown.set()


async def test_head_does_not_subscribe(client, token, bus):
    response = await client.head("/api/stream", headers=headers(token))
    assert response.status_code == 200
    assert await _subscribers(bus) == 0
