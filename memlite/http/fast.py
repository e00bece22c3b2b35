"""A fast path for the hot read endpoints, in front of Quart: ``GET /api/search``,
``GET /api/search/index`` and ``GET /api/health`` (the liveness check hooks and the CLI
make, public: no token).

Why: measured at 10,000 observations (kept connection, issue 14), a full-text search's
own work is ~2 ms, and Quart's machinery around it (request object and context, routing,
the ``before_request`` guard, ``jsonify``, ``after_request``, a response object whose
body is sent in two messages, the per-request nursery torn down after the last send) cost
another ~1-2 ms a request; the peer answers its whole full-text search in ~2 ms.

What it does: it answers only the requests it is sure of, and hands every other request
to the Quart app untouched, so that every error, refusal and odd case keeps exactly the
answer Quart gives it. A request is answered here when ALL of these hold:

* ``GET`` (not ``HEAD``), the path exactly ``/api/search``, ``/api/search/index`` or
  ``/api/health``;
* no request body (no ``Transfer-Encoding``, no ``Content-Length`` but 0);
* exactly one ``Host`` header, ``127.0.0.1:<port>`` or ``localhost:<port>`` (the rule of
  ``auth.guard``, same port);
* for the searches, an ``Authorization: Bearer`` token equal to the worker's
  (constant-time, as the guard); a request carrying the dashboard cookie instead goes to
  Quart;
* its query parameters pass the same validation as the Quart route (``read_api.
  search_params``, parsed as Werkzeug parses ``request.args``);
* the search itself raised nothing (a ``StorageError`` or any other failure: Quart runs
  the request again and answers it its own way; reads are idempotent).

On Hypercorn's HTTP/1.1 connections the same ``answer`` is first offered the request
inside Hypercorn's protocol, with no ASGI app task (``lane``); what it declines reaches this
ASGI side, and then Quart, as before.

The answer is the same as Quart's, byte for byte: the app's own JSON encoding
(``jsonbody.encode``: sorted keys, compact, a final newline), status 200,
``Content-Type: application/json``, ``Content-Length`` and the security headers of
``app._SECURITY_HEADERS``, in one body message. The request is counted as the guard
counts it (``services.activity.touch``), once it is answered here (a request handed to
Quart is counted there, so never twice). The search runs exactly as the route runs it
(``read_api.run_search``: on a pooled reader; hybrid with the query embedded meanwhile).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl

import werkzeug.urls  # noqa: F401  (registers the "werkzeug.url_quote" codec error handler)
from quart_trio import QuartTrio

from memlite.errors import InputError
from memlite.http import api, jsonbody, lane, queries, read_api
from memlite.http.credentials import tokens_equal
from memlite.http.state import HttpState

__all__ = ["FAST_ROUTES", "install"]

Body = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]

# path -> (the ``queries`` function that reads, looked up per request; the answer's shape)
FAST_ROUTES: dict[str, tuple[str, Body]] = {
    "/api/search": ("search", read_api.search_body),
    "/api/search/index": ("index", read_api.index_body),
}


HEALTH: str | None = "/api/health"  # answered here too (None: by Quart; for tests)


def _args(query_string: bytes) -> dict[str, str]:
    """The query parameters as Werkzeug's ``request.args`` reads them (first value of each
    name wins; invalid bytes stay percent-encoded)."""
    found: dict[str, str] = {}
    for name, value in parse_qsl(query_string.decode(), keep_blank_values=True,
                                 errors="werkzeug.url_quote"):
        found.setdefault(name, value)
    return found


def _port(scope: Mapping[str, Any], state: HttpState) -> int:
    """The port the request came in on (``state.server_port``'s rule, from the scope)."""
    server = scope.get("server")
    if server and len(server) >= 2 and isinstance(server[1], int):
        return int(server[1])
    return state.port


def _authorised(scope: Mapping[str, Any], state: HttpState, *, token: bool) -> bool:
    """No body, Host allowed and (``token``) a valid bearer token: what ``auth.guard``
    lets through (``/api/health`` is public: no token asked)."""
    hosts: list[str] = []
    authorization: str | None = None
    for name, value in scope["headers"]:
        name = name.lower()
        if name == b"host":
            hosts.append(value.decode("latin1"))
        elif authorization is None and name == b"authorization":
            authorization = value.decode("latin1")
        elif name == b"transfer-encoding" or (name == b"content-length"
                                              and value.strip() != b"0"):
            return False  # a GET with a body: Quart's to read (and to refuse past its limit)
    port = _port(scope, state)
    if len(hosts) != 1 or hosts[0].strip().lower() not in (f"127.0.0.1:{port}",
                                                            f"localhost:{port}"):
        return False
    if not token:
        return True
    scheme, _, given = (authorization or "").strip().partition(" ")
    return (scheme.lower() == "bearer" and bool(given.strip())
            and tokens_equal(given.strip(), state.services.token))


def install(app: QuartTrio, state: HttpState, security_headers: Mapping[str, str]) -> None:
    """Put the fast path in front of ``app.asgi_app`` (see the module docstring)."""
    inner = app.asgi_app
    security = [(name.lower().encode("latin1"), value.encode("latin1"))
                for name, value in security_headers.items()]

    provider = app.json
    if not isinstance(provider, jsonbody.JsonProvider):  # its bodies would differ from Quart's
        raise TypeError("the fast path needs the app's JSON provider to be jsonbody's")

    def encode(body: dict[str, Any]) -> bytes:
        return jsonbody.encode(provider, body)  # what jsonify sends

    async def answer(scope: Mapping[str, Any]) -> bytes | None:
        if scope["method"] != "GET" or scope.get("root_path"):
            return None
        if scope["path"] == HEALTH:
            if not _authorised(scope, state, token=False):
                return None
            state.services.activity.touch()
            return encode(api.health_body(state.services))
        route = FAST_ROUTES.get(scope["path"])
        if route is None or not _authorised(scope, state, token=True):
            return None
        try:
            params = read_api.search_params(_args(scope["query_string"]))
        except (InputError, UnicodeDecodeError):
            return None  # Quart answers it: the same validation, its own error body
        name, shape = route
        try:
            found = await read_api.run_search(state, getattr(queries, name), params)
        except Exception:
            return None  # Quart runs it again and answers the failure its own way
        state.services.activity.touch()
        return encode(shape(found, params))

    def head(body: bytes) -> list[tuple[bytes, bytes]]:
        return [(b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()), *security]

    async def asgi_app(scope: Any, receive: Any, send: Any) -> None:
        body = await answer(scope) if scope["type"] == "http" else None
        if body is None:
            await inner(scope, receive, send)
            return
        await send({"type": "http.response.start", "status": 200, "headers": head(body)})
        await send({"type": "http.response.body", "body": body})

    app.asgi_app = asgi_app  # type: ignore[method-assign]
    lane.attach(app, lane.Lane(answer=answer, head=head))  # the same, inside Hypercorn
