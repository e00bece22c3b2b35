"""The fast path's requests answered inside Hypercorn's HTTP/1.1 protocol, with no
ASGI app task.

Why: under Hypercorn 0.18 every request, even one the fast path (``memlite.http.fast``)
answers without Quart, goes through Hypercorn's stream machinery: an ``HTTPStream``, a
new Trio task for the app (spawned in the connection's nursery, with a memory channel for
its messages), the ASGI scope, and each response message through ``app_send``,
``stream_send`` and the h11 event writer, with the keep-alive timer stopped and restarted
around it. Measured in a worker at 10,000 observations (one kept connection, 3,000
requests, p50, the same run): ``/api/health`` 0.50 -> 0.29 ms and a full-text
``/api/search`` 1.02 -> 0.85 ms with this lane; a bare Trio server answering a fixed
response, the floor, 0.11 ms. cProfile counted ~1,400 Python calls for one health check
through the stream machinery.

What: ``install()`` wraps ``H11Protocol._handle_events`` (the loop that reads h11's events
off a connection's received bytes). When the connection is idle (no stream; h11 ``IDLE``
on both sides) and its next request is a bodyless ``GET`` (no ``Content-Length``,
``Transfer-Encoding``, ``Expect`` or ``Upgrade``) on a server of the app the lane is
attached to (``attach``), with no access log and no ``server_names``, the request is
offered to the fast path's ``answer``, with a scope of the values Hypercorn's stream
would give it (the method upper-cased, the path percent-decoded, the headers as h11
gives them). When it answers:

* the response goes out through h11 as Hypercorn writes it: the fast path's head, then
  Hypercorn's own ``response_headers("h11")`` (``date``, ``server``), and
  ``connection: close`` once the connection has served ``keep_alive_max_requests``;
  ``oneshot`` sends the head with the body in one write, as for every response;
* the keep-alive timer is stopped while the request is answered and restarted after it,
  the request is counted (``keep_alive_requests``, ``context.mark_request``), and the
  connection is recycled, or closed, by ``_maybe_recycle``'s rule;
* the loop goes on to the next request already received (pipelining).

Everything else goes, untouched, to Hypercorn's own handling of the same request (its
stream, its app task, then the ASGI app: the fast path's own ASGI side, then Quart):
another route or method, a body, a refusal or bad input (``answer`` gives None), an
error while answering (logged; the request is then answered by Quart, as a failed search
already is), a WebSocket, or a connection in any other state. Hypercorn's own handling
then meets the request exactly as it would have: its ``Request`` event, then (when the
lane had already read it) its end. A request the lane answers is answered byte for byte
as the ASGI side answers it, but for the ``date`` header (tests/http/test_http_lane.py).

Compatibility: only under the Hypercorn minor version ``locks.HYPERCORN`` (0.18) and only
when ``H11Protocol`` has every private method the lane calls; anything else installs
nothing and every request goes the usual way. Idempotent.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import unquote

import attrs
import h11

from memlite.http import idle_timer
from memlite.http.locks import hypercorn_supported

__all__ = ["Lane", "attach", "install", "installed"]

log = logging.getLogger(__name__)

_MARK = "_memlite_lane"
_ATTRIBUTE = "memlite_lane"  # on the ASGI app a server serves: its ``Lane``
_NEEDED = ("_handle_events", "_check_protocol", "_create_stream", "_send_h11_event",
           "_send_error_response")
_NOT_BODYLESS = frozenset((b"content-length", b"transfer-encoding", b"expect", b"upgrade"))


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


def _protocol_class() -> Any:
    try:
        from hypercorn.protocol.h11 import H11Protocol
    except ImportError:
        return None
    return H11Protocol


def installed() -> bool:
    """Whether Hypercorn's h11 protocol answers the fast path's requests itself."""
    cls = _protocol_class()
    return cls is not None and getattr(vars(cls).get("_handle_events"), _MARK, False)


def _lane_of(protocol: Any) -> Lane | None:
    """The lane of the app this connection serves, when the server allows one."""
    config = protocol.config
    if config.accesslog is not None or config.server_names:
        return None  # an access line to write, or a Host to check: Hypercorn's own way
    lane = getattr(getattr(protocol.app, "app", None), _ATTRIBUTE, None)
    return lane if isinstance(lane, Lane) else None


def _states(connection: Any) -> tuple[Any, Any]:
    """h11's (our, their) states of a connection."""
    return connection.our_state, connection.their_state


def _scope(protocol: Any, request: h11.Request) -> dict[str, Any] | None:
    """What the fast path reads of Hypercorn's ASGI scope for this request, with the same
    values (``HTTPStream.handle``); None when the request is not one the lane takes."""
    if any(name in _NOT_BODYLESS for name, _ in request.headers):
        return None
    try:
        method = request.method.decode("ascii").upper()
        path, _, query_string = request.target.partition(b"?")
        decoded = unquote(path.decode("ascii"))
    except UnicodeDecodeError:
        return None
    if method != "GET":
        return None
    headers = (request.headers.raw_items() if protocol.config.h11_pass_raw_headers
               else list(request.headers))
    return {"type": "http", "http_version": request.http_version.decode(),
            "method": method, "path": decoded, "raw_path": path,
            "query_string": query_string, "root_path": protocol.config.root_path,
            "headers": headers, "client": protocol.client, "server": protocol.server}


def _response_maker() -> Callable[[list[tuple[bytes, bytes]]], h11.Response]:
    """h11's 200 response with these headers. The lane's headers are the fast path's
    constants, the body's length and Hypercorn's ``date`` and ``server``: bytes h11 need
    not check again, so they go with ``_parsed``, h11's flag for the headers its own
    parser made (in process, ~45 -> ~31 µs to write a response and its end). An h11
    without the flag gets them checked."""
    try:
        h11.Response(status_code=200, headers=[(b"x", b"y")], _parsed=True)
    except TypeError:
        return lambda headers: h11.Response(status_code=200, headers=headers)
    return lambda headers: h11.Response(status_code=200, headers=headers, _parsed=True)


def install() -> bool:
    """Wrap ``H11Protocol._handle_events`` (see the module docstring); True when it is."""
    cls = _protocol_class()
    if cls is None or not hypercorn_supported() or any(
            not callable(getattr(cls, name, None)) for name in _NEEDED):
        return False
    original = vars(cls)["_handle_events"]
    if getattr(original, _MARK, False):
        return True
    from hypercorn.events import Closed, Updated
    from hypercorn.protocol.events import Body, EndBody
    from hypercorn.protocol.h11 import STREAM_ID

    response = _response_maker()

    async def usual_way(self: Any, request: h11.Request, read: Any) -> None:
        """Hypercorn's loop for ``request`` (and ``read``, the event after it, when the
        lane has already taken it from h11), then for whatever follows. Its keep-alive
        timer is stopped the usual way (a held one would outlive a request that ends the
        connection)."""
        await self.send(Updated(idle=False))
        await self._check_protocol(request)
        await self._create_stream(request)
        if type(read) is h11.EndOfMessage:
            await self.stream.handle(EndBody(stream_id=STREAM_ID))
        elif type(read) is h11.Data:
            await self.stream.handle(Body(stream_id=STREAM_ID, data=read.data))
        await original(self)

    async def handle_events(self: Any) -> None:
        lane = _lane_of(self)
        # The connection's keep-alive timer (``TCPServer.idle_task``; ``send`` is that
        # server's ``protocol_send``), held and released without ending its task.
        timer = getattr(getattr(self.send, "__self__", None), "idle_task", None)
        while True:
            connection = self.connection
            if (lane is None or self.stream is not None or type(connection) is not h11.Connection
                    or _states(connection) != (h11.IDLE, h11.IDLE)):
                await original(self)
                return
            try:
                request = connection.next_event()
            except h11.RemoteProtocolError as error:  # as Hypercorn's loop answers it (our
                await self._send_error_response(error.error_status_hint)  # side is idle)
                await self.send(Closed())
                return
            if type(request) is not h11.Request:
                return  # NEED_DATA, or the client closed: Hypercorn's loop stops here too
            if not idle_timer.hold(timer):
                await self.send(Updated(idle=False))
            scope = _scope(self, request)
            if scope is None:
                await usual_way(self, request, None)
                return
            end = connection.next_event()  # a bodyless request: its end, at once
            body = None
            if type(end) is h11.EndOfMessage:
                try:
                    body = await lane.answer(scope)
                except Exception:
                    log.exception("the fast path failed on %s; Quart answers it",
                                  scope["path"])
            if body is None:
                await usual_way(self, request, end)
                return
            self.keep_alive_requests += 1
            await self.context.mark_request()
            headers = [*lane.head(body), *self.config.response_headers("h11")]
            if self.keep_alive_requests >= self.config.keep_alive_max_requests:
                headers.append((b"connection", b"close"))
            await self._send_h11_event(response(headers))
            await self._send_h11_event(h11.Data(data=body))
            await self._send_h11_event(h11.EndOfMessage())
            if (self.context.terminated.is_set()
                    or _states(connection) != (h11.DONE, h11.DONE)):
                await self.send(Updated(idle=False))
                await self.send(Closed())
                return
            connection.start_next_cycle()
            if not idle_timer.release(timer):
                await self.send(Updated(idle=True))

    setattr(handle_events, _MARK, True)
    handle_events.__wrapped__ = original  # type: ignore[attr-defined]
    cls._handle_events = handle_events
    return True
