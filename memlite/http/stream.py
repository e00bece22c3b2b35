"""``GET /api/stream``: server-sent events of what the worker stores, from the event bus.

The handler subscribes to the bus (``Subscribe`` answers a bounded trio receive channel of
dict events) and streams each as::

    event: <the dict's "type", e.g. observation>
    data: <the dict as one line of JSON>

After a ``retry: 3000`` and a ``: connected`` comment, a ``: keep-alive`` comment goes out
every ``KEEPALIVE_SECONDS`` without events, so proxies and the browser keep the
connection. The stream ends by itself:

* when the worker shuts down (``services.shutdown``): ``event: shutdown``, then the end,
  so Hypercorn's graceful shutdown is not held for its ``graceful_timeout``;
* when the bus closes the subscription (a subscriber too slow to keep up is dropped, never
  the worker): ``event: closed``, then the end; ``EventSource`` reconnects by itself;
* when the client goes away: Quart cancels the generator and the channel is closed.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import trio
from quart import Blueprint, Response, current_app, request

from memlite.actors.bus import Subscribe
from memlite.http.state import current_state

__all__ = ["KEEPALIVE_SECONDS", "blueprint", "format_event"]

blueprint = Blueprint("stream", __name__)

KEEPALIVE_SECONDS = 15.0
SUBSCRIBE_TIMEOUT = 2.0
_EVENT_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")


def format_event(name: str, data: Any) -> bytes:
    """One SSE message; ``name`` falls back to ``message`` if it is not a plain word."""
    if not _EVENT_NAME.fullmatch(name):
        name = "message"
    payload = json.dumps(data, separators=(",", ":"), default=str)
    return f"event: {name}\ndata: {payload}\n\n".encode()


async def _next(channel: trio.MemoryReceiveChannel[Any], shutdown: trio.Event,
                timeout: float) -> tuple[str, Any]:  # noqa: ASYNC109 - it is a poll interval
    """Wait for an event, the end of the channel, shutdown or ``timeout``, whichever first.

    Returns ``("event", item)``, ``("closed", None)``, ``("shutdown", None)`` or
    ``("idle", None)``. An event received is never dropped: it wins over a simultaneous
    shutdown (the next call reports the shutdown).
    """
    if shutdown.is_set():
        return ("shutdown", None)
    result: tuple[str, Any] = ("idle", None)

    async def receive() -> None:
        nonlocal result
        try:
            result = ("event", await channel.receive())
        except (trio.EndOfChannel, trio.ClosedResourceError, trio.BrokenResourceError):
            result = ("closed", None)
        nursery.cancel_scope.cancel()

    async def watch() -> None:
        nonlocal result
        await shutdown.wait()
        if result[0] == "idle":
            result = ("shutdown", None)
        nursery.cancel_scope.cancel()

    async with trio.open_nursery() as nursery:
        nursery.cancel_scope.deadline = trio.current_time() + timeout
        nursery.start_soon(receive)
        nursery.start_soon(watch)
    return result


async def events(channel: trio.MemoryReceiveChannel[Any], shutdown: trio.Event, *,
                 keepalive: float = KEEPALIVE_SECONDS) -> AsyncIterator[bytes]:
    """The SSE body: see the module docstring. Closes ``channel`` however it ends."""
    with channel:
        yield b"retry: 3000\n: connected\n\n"
        while True:
            kind, item = await _next(channel, shutdown, keepalive)
            if kind == "event":
                if isinstance(item, dict):
                    yield format_event(str(item.get("type") or "message"), item)
                else:
                    yield format_event("message", {"value": item})
            elif kind == "idle":
                yield b": keep-alive\n\n"
            elif kind == "closed":
                yield format_event("closed", {"reason": "the event bus closed this stream "
                                                        "(too slow, or the bus restarted)"})
                return
            else:
                yield format_event("shutdown", {"reason": "the worker is shutting down"})
                return


@blueprint.get("/api/stream")
async def stream() -> Response:
    """Subscribe to the bus and stream its events until shutdown, drop or disconnect."""
    if request.method == "HEAD":  # headers only: no subscription to hold open for nothing
        return Response(b"", content_type="text/event-stream")
    services = current_state().services
    channel = await services.bus.ask(lambda reply: Subscribe(reply=reply),
                                     timeout=SUBSCRIBE_TIMEOUT)
    keepalive = current_app.config.get("MEMLITE_SSE_KEEPALIVE", KEEPALIVE_SECONDS)
    response = Response(events(channel, services.shutdown, keepalive=keepalive),
                        content_type="text/event-stream")
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Accel-Buffering"] = "no"
    response.timeout = None  # a stream lasts as long as it lasts; shutdown ends it
    return response
