"""The fast path's requests answered inside Hypercorn's HTTP/1.1 protocol, with no
ASGI app task and no h11 event.

Why: under Hypercorn 0.18 every request, even one the fast path (``memlite.http.fast``)
answers without Quart, goes through Hypercorn's stream machinery: h11 parses it into
events, an ``HTTPStream`` takes them, a new Trio task runs the app (spawned in the
connection's nursery, with a memory channel for its messages), and each response message
goes back through ``app_send``, ``stream_send`` and h11's writer, with the keep-alive
timer stopped and restarted around it. Measured in a worker at 10,000 observations (one
kept connection, 3,000 requests, p50, the same run): ``/api/health`` 0.50 -> 0.29 ms and a
full-text ``/api/search`` 1.02 -> 0.85 ms with a first form of this lane that still went
through h11's events (a bare Trio server answering a fixed response, the floor: 0.11 ms);
h11's events alone then cost ~60 µs a request in process (parsing the request ~28 µs,
writing the response ~31-45 µs), ~155 of the ~725 Python calls that remained for a
health check.

What: ``install()`` wraps ``H11Protocol.handle``. When bytes arrive on a connection that
is idle (no stream; h11 ``IDLE`` on both sides with nothing buffered; the server not
stopping; the connection not at its last allowed request) and they are exactly one
request of this strict form, the request is offered to the fast path's ``answer``:

* ``GET <target> HTTP/1.1``, then header lines ``name: value`` (a token, then visible
  characters, spaces and tabs), each ending in CRLF, then CRLF, and nothing more: not a
  byte before (a blank line), after (a body, a pipelined request) or missing (a request
  still arriving);
* exactly one ``Host``; no ``Content-Length``, ``Transfer-Encoding``, ``Expect`` or
  ``Upgrade``; a ``Connection`` header only if it says ``keep-alive`` or ``close``;
* the head no longer than Hypercorn lets h11 buffer (``h11_max_incomplete_size``);
* a server of the app the lane is attached to (``attach``), with no access log and no
  ``server_names``.

Every request of that form is one h11 accepts as it is. The scope given to ``answer``
holds the values Hypercorn's stream would give it (the path percent-decoded, the headers'
names lower-cased, their values without the spaces around them). When ``answer`` gives a
body, the response is written as h11 writes Hypercorn's: ``HTTP/1.1 200 `` (no reason
phrase), the fast path's headers, then Hypercorn's own ``response_headers("h11")``
(``date``, ``server``), then (a request that said ``close``) h11's ``Connection: close``,
then the body, in one write; the request is counted (``keep_alive_requests``,
``context.mark_request``), and the connection's keep-alive timer is held while it is
answered and restarted after it (``idle_timer.hold`` and ``release``; Hypercorn's
``Updated`` events when its timer is not an ``idle_timer`` one), or, after a ``close``,
stopped and the connection closed as Hypercorn closes it (``Closed``).
h11 never sees the request, so it stays idle for the next one.

Everything else, including a request ``answer`` declines (another route, a refusal, bad
input) or fails on (logged), is handed to Hypercorn's own ``handle`` with the same bytes,
untouched: h11 parses them and the request goes the usual way (the fast path's ASGI side,
then Quart). So does a request that arrives before Hypercorn has finished with the one
before it (a client may send its next request as soon as it has read an answer, before
Hypercorn recycles the connection): the lane takes a connection only when it is idle.
The lane's answer is the ASGI side's, byte for byte, but for the ``date`` header
(tests/http/test_http_lane.py).

Compatibility: only under the Hypercorn minor version ``locks.HYPERCORN`` (0.18) and only
when ``H11Protocol`` has its ``handle``; anything else installs nothing and every request
goes the usual way. Idempotent.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import unquote

import attrs
import h11
from hypercorn.events import Closed, RawData, Updated

from memlite.http import idle_timer
from memlite.http.locks import hypercorn_supported

__all__ = ["Lane", "Request", "attach", "install", "installed", "parse"]

log = logging.getLogger(__name__)

_MARK = "_memlite_lane"
_ATTRIBUTE = "memlite_lane"  # on the ASGI app a server serves: its ``Lane``

# The strict form (the module docstring); each a subset of what h11 accepts: its request
# target (``vchar+``), its field name (``token``) and field value (``field_content``).
_REQUEST_LINE = re.compile(rb"GET ([\x21-\x7e]+) HTTP/1\.1\r\n")
_VCHAR = rb"[\x21-\x7e\x80-\xff]"
_HEADER_LINE = re.compile(rb"([!#$%&'*+\-.^_`|~0-9A-Za-z]+):[ \t]*((?:" + _VCHAR
                          + rb"+(?:[ \t]+" + _VCHAR + rb"+)*)?)[ \t]*\r\n")
_REFUSED = frozenset((b"content-length", b"transfer-encoding", b"expect", b"upgrade"))
_CONNECTION = frozenset((b"keep-alive", b"close"))  # the tokens taken (h11: close wins)


@attrs.frozen
class Lane:
    """What the lane needs of an app's fast path: ``answer(scope)`` (the response body, or
    None: Hypercorn's usual way) and ``head(body)`` (the response's headers, before
    Hypercorn's own); the fast path's ASGI side uses the same two."""

    answer: Callable[[Mapping[str, Any]], Awaitable[bytes | None]]
    head: Callable[[bytes], list[tuple[bytes, bytes]]]


def attach(app: Any, lane: Lane) -> None:
    """Let the servers of ``app`` answer its fast path in the protocol (``install``)."""
    setattr(app, _ATTRIBUTE, lane)


@attrs.frozen
class Request:
    """A request of the lane's strict form: its target, its headers (names lower-cased),
    and whether it asked for the connection to close (``Connection: close``)."""

    target: bytes
    headers: list[tuple[bytes, bytes]]
    close: bool


def parse(data: bytes, limit: int) -> Request | None:
    """The request ``data`` holds when it is exactly one request of the lane's strict
    form (the module docstring); None otherwise."""
    end = len(data) - 2
    if len(data) > limit or data.find(b"\r\n\r\n") != end - 2:
        return None
    line = _REQUEST_LINE.match(data)
    if line is None:
        return None
    headers: list[tuple[bytes, bytes]] = []
    hosts = 0
    close = False
    at = line.end()
    while at < end:
        field = _HEADER_LINE.match(data, at)
        if field is None:
            return None
        name, value = field[1].lower(), field[2]
        if name in _REFUSED:
            return None
        if name == b"connection":
            tokens = {token.strip().lower() for token in value.split(b",")}
            if not tokens <= _CONNECTION:
                return None
            close = close or b"close" in tokens
        hosts += name == b"host"
        headers.append((name, value))
        at = field.end()
    return Request(line[1], headers, close) if hosts == 1 else None


def _protocol_class() -> Any:
    try:
        from hypercorn.protocol.h11 import H11Protocol
    except ImportError:
        return None
    return H11Protocol


def installed() -> bool:
    """Whether Hypercorn's h11 protocol answers the fast path's requests itself."""
    cls = _protocol_class()
    return cls is not None and getattr(vars(cls).get("handle"), _MARK, False)


def _lane_of(protocol: Any) -> Lane | None:
    """The lane of the app this connection serves, when the server allows one."""
    config = protocol.config
    if config.accesslog is not None or config.server_names:
        return None  # an access line to write, or a Host to check: Hypercorn's own way
    lane = getattr(getattr(protocol.app, "app", None), _ATTRIBUTE, None)
    return lane if isinstance(lane, Lane) else None


def _idle(protocol: Any) -> bool:
    """No request under way on this connection, nothing half received, and another
    request allowed on it."""
    connection = protocol.connection
    return (protocol.stream is None and type(connection) is h11.Connection
            and connection.our_state is h11.IDLE and connection.their_state is h11.IDLE
            and not connection.trailing_data[0]
            and not protocol.context.terminated.is_set()
            and protocol.keep_alive_requests + 1 < protocol.config.keep_alive_max_requests)


def _scope(protocol: Any, request: Request) -> dict[str, Any]:
    """The ASGI scope Hypercorn's stream would give this request (``HTTPStream.handle``),
    but for what the fast path does not read (its state, its extensions)."""
    path, _, query_string = request.target.partition(b"?")
    return {"type": "http", "http_version": "1.1", "method": "GET",
            "path": unquote(path.decode("ascii")), "raw_path": path,
            "query_string": query_string, "root_path": protocol.config.root_path,
            "headers": request.headers, "client": protocol.client,
            "server": protocol.server}


async def _answered(protocol: Any, lane: Lane, data: bytes) -> bool:
    """Answer ``data`` in the lane; False (nothing sent, nothing consumed) when it is not
    one of the lane's requests or the fast path declines it."""
    if not _idle(protocol):
        return False
    request = parse(data, protocol.config.h11_max_incomplete_size)
    if request is None:
        return False
    # The connection's keep-alive timer (``TCPServer.idle_task``; ``send`` is that
    # server's ``protocol_send``): held while answering, or stopped Hypercorn's way (a
    # request that closes the connection: its timer ends with it).
    timer = getattr(getattr(protocol.send, "__self__", None), "idle_task", None)
    if request.close or not idle_timer.hold(timer):
        await protocol.send(Updated(idle=False))
    try:
        body = await lane.answer(_scope(protocol, request))
    except Exception:
        log.exception("the fast path failed on a request; Quart answers it")
        body = None
    if body is None:  # h11 reads the same bytes; Hypercorn stops the timer for good
        return False
    protocol.keep_alive_requests += 1
    await protocol.context.mark_request()
    head = [*lane.head(body), *protocol.config.response_headers("h11")]
    if request.close:
        head.append((b"Connection", b"close"))  # as h11 adds it, title-cased, last
    await protocol.send(RawData(data=b"".join(
        [b"HTTP/1.1 200 \r\n", *[b"%s: %s\r\n" % field for field in head], b"\r\n",
         body])))
    if request.close:
        await protocol.send(Closed())  # as ``_maybe_recycle`` ends a connection that must close
    elif not idle_timer.release(timer):
        await protocol.send(Updated(idle=True))
    return True


def install() -> bool:
    """Wrap ``H11Protocol.handle`` (see the module docstring); True when it is."""
    cls = _protocol_class()
    original = vars(cls).get("handle") if cls is not None else None
    if original is None or not hypercorn_supported():
        return False
    if getattr(original, _MARK, False):
        return True

    async def handle(self: Any, event: Any) -> None:
        if type(event) is RawData:
            lane = _lane_of(self)
            if lane is not None and await _answered(self, lane, event.data):
                return
        await original(self, event)

    setattr(handle, _MARK, True)
    handle.__wrapped__ = original  # type: ignore[attr-defined]
    cls.handle = handle
    return True
