"""The worker's HTTP front: a Quart-Trio app served by Hypercorn inside the root nursery.

``create_app(services)`` wires it together:

* ``auth.guard`` is the first ``before_request`` of every request: Host check (DNS
  rebinding), cross-origin write check, then bearer token or dashboard cookie unless the
  endpoint is explicitly public. See ``auth.py`` for the rules.
* Blueprints: ``auth`` (login link, login, index page), ``api`` (health, readiness, debug,
  ingestion, settings, deletes), ``read_api`` (context, search, index, timeline, batch),
  ``stream`` (SSE), ``cleanup_api`` (cleanup review stream and apply).
  ``errors.register`` makes every error a JSON body.
* Limits: a request body over ``MAX_BODY_BYTES`` (8 MiB) is refused 413 before it is
  parsed; hook payloads are a few KB, and the biggest legitimate one (a tool result
  the hook already cut) stays far below. A body must arrive within ``BODY_TIMEOUT``.
* ``dashboard``: the dashboard's pages and its static files (by exact name from a fixed
  folder; no route reads a caller-chosen path or runs a program). ``dashboard_api``: the
  JSON its views read (stats, projects, feed, sessions; cursor-paged).
* Every response gets ``nosniff``, ``no-referrer``, ``DENY`` framing, a ``default-src
  'none'`` CSP and ``no-store`` unless the route set its own.
* ``fast``: ``GET /api/search`` and ``/api/search/index`` with a valid bearer token are
  answered in front of Quart (same checks, same bytes; anything else goes to Quart).
  ``lane``: on Hypercorn's HTTP/1.1 connections the same answers are given inside its
  protocol, with no ASGI app task; whatever the fast path declines goes Hypercorn's way.
* ``oneshot``: under Hypercorn, a response's head and first body chunk leave in one
  socket write instead of two (and an empty end of message in none).
* ``locks``: Hypercorn's per-connection locks are taken without a scheduler pass when
  they are free (two passes fewer before a response's bytes leave); ``idle_timer``: the
  keep-alive timer is one task per connection whose deadline a restart moves.
* The last ``send`` of each response runs shielded (``_shield_response_end``): measured,
  quart-trio cancels the request's task group as soon as Hypercorn reports the response
  done, and that cancels Hypercorn's own follow-up (closing or recycling the connection)
  which runs inside that ``send``. The connection then stays open until Hypercorn's
  ``graceful_timeout``: an SSE stream that ended at shutdown still held ``serve()`` 3.0 s;
  with the shield, 1.4 ms.

The reader pool: pass ``readers`` to share one the caller owns (the root closes it at
shutdown); without it the app makes its own and closes it in ``after_serving``.
"""

from __future__ import annotations

from typing import Any

import trio
from quart import Response
from quart_trio import QuartTrio

from memlite.http import (
    api,
    auth,
    cleanup_api,
    dashboard,
    dashboard_api,
    errors,
    fast,
    idle_timer,
    lane,
    locks,
    oneshot,
    openapi,
    read_api,
    stream,
)
from memlite.http.jsonbody import JsonProvider
from memlite.http.state import EXTENSION, HttpState
from memlite.services import Services
from memlite.storage.pool import ReaderPool

__all__ = ["BODY_TIMEOUT_SECONDS", "MAX_BODY_BYTES", "create_app"]

MAX_BODY_BYTES = 8 * 1024 * 1024
BODY_TIMEOUT_SECONDS = 30
RESPONSE_END_SECONDS = 5.0  # bounds the shielded last send (Hypercorn shields its writes too)

_SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
    "Cache-Control": "no-store",
}


async def _security_headers(response: Response) -> Response:
    for name, value in _SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def _shield_response_end(app: QuartTrio) -> None:
    """Run the final ``http.response.body`` send of every response shielded (see above)."""
    inner = app.asgi_app

    async def asgi_app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await inner(scope, receive, send)
            return

        async def send_last_shielded(message: Any) -> None:
            if message["type"] == "http.response.body" and not message.get("more_body"):
                with trio.move_on_after(RESPONSE_END_SECONDS, shield=True):
                    await send(message)
            else:
                await send(message)

        await inner(scope, receive, send_last_shielded)

    app.asgi_app = asgi_app  # type: ignore[method-assign]


def create_app(services: Services, *, readers: ReaderPool | None = None,
               port: int | None = None) -> QuartTrio:
    """Build the app for one worker.

    Args:
        services: the worker's refs and facts (token, settings, actors, events).
        readers: a reader pool the caller owns and closes; None makes one the app owns.
        port: the port to expect in ``Host``/``Origin`` when the ASGI scope does not say
            (the test client); defaults to ``services.settings.worker_port``. A served
            app always uses the port the connection actually came in on.
    """
    app = QuartTrio(__name__, static_folder=None)
    app.json = JsonProvider(app)  # orjson (``jsonbody``), for jsonify and the fast path
    app.config.update(
        MAX_CONTENT_LENGTH=MAX_BODY_BYTES,
        BODY_TIMEOUT=BODY_TIMEOUT_SECONDS,
        PROPAGATE_EXCEPTIONS=False,
    )
    state = HttpState(
        services=services,
        readers=readers if readers is not None else ReaderPool(services.db_path),
        owns_readers=readers is None,
        port=port if port is not None else services.settings.worker_port,
    )
    app.extensions[EXTENSION] = state
    app.before_request(auth.guard)
    app.after_request(_security_headers)
    errors.register(app)
    for blueprint in (auth.blueprint, api.blueprint, read_api.blueprint, stream.blueprint,
                      dashboard.blueprint, dashboard_api.blueprint, cleanup_api.blueprint,
                      openapi.blueprint):
        app.register_blueprint(blueprint)
    if state.owns_readers:
        app.after_serving(state.readers.close)
    fast.install(app, state, _SECURITY_HEADERS)
    oneshot.install()
    locks.install()
    idle_timer.install()
    lane.install()
    _shield_response_end(app)
    return app
