"""Who may talk to the worker: one ``before_request`` guard that refuses by default.

The rules, checked in this order on EVERY request (matched route or not):

1. ``Host`` must be exactly ``127.0.0.1:<port>`` or ``localhost:<port>``, where ``<port>``
   is the port the connection came in on; else **403**. This defeats DNS rebinding: a
   page served from ``evil.example`` that re-resolves to 127.0.0.1 still sends
   ``Host: evil.example``. It applies to ``/api/health`` and ``/login`` too.
2. A write (POST, PUT, PATCH, DELETE) is refused **403** when it carries an ``Origin``
   header other than ``http://127.0.0.1:<port>`` / ``http://localhost:<port>`` (``null``
   included), or a ``Sec-Fetch-Site`` other than ``same-origin`` / ``none``: browsers
   send these on every cross-origin write, so a web page cannot post to the worker even
   through the dashboard cookie. Hooks, the CLI and the MCP server send neither.
3. Unless the endpoint is in ``PUBLIC_ENDPOINTS`` (health, the login page, the
   dashboard's sign-in page and its static files, which hold no data), the request needs
   ``Authorization: Bearer <token>`` or the dashboard cookie; else **401** with
   ``WWW-Authenticate: Bearer``. Unknown paths are not public: they answer 401 before
   404, so nobody learns the route table without the token.
   ``POST /api/auth/login-link`` takes the bearer token only (a cookie gets 403).

A new route is therefore protected without anyone remembering to protect it; making a
route public means adding it to ``PUBLIC_ENDPOINTS``, which a test pins.

The login flow: ``POST /api/auth/login-link`` returns a one-time URL; ``GET /login?code=``
redeems the code (single use, 5 minutes), sets the HttpOnly, SameSite=Strict, Path=/
cookie and redirects to ``/``; a used, expired or missing code gets a 403 page.
"""

from __future__ import annotations

from quart import Blueprint, Response, g, jsonify, redirect, request

from memlite.http.credentials import (
    cookie_name,
    cookie_value,
    load_or_create_token,
    tokens_equal,
)
from memlite.http.errors import json_error
from memlite.http.state import current_state, server_port

__all__ = ["PUBLIC_ENDPOINTS", "WRITE_METHODS", "blueprint", "guard", "load_or_create_token"]

blueprint = Blueprint("auth", __name__)

PUBLIC_ENDPOINTS = frozenset({"api.health", "auth.login", "dashboard.index",
                              "dashboard.static"})
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_SAFE_FETCH_SITES = frozenset({"same-origin", "none"})


def _allowed_hosts(port: int) -> frozenset[str]:
    return frozenset({f"127.0.0.1:{port}", f"localhost:{port}"})


def _host_ok(port: int) -> bool:
    hosts = request.headers.getlist("Host")
    return len(hosts) == 1 and hosts[0].strip().lower() in _allowed_hosts(port)


def _cross_origin_write(port: int) -> str | None:
    """Why this write looks cross-origin, or None."""
    if request.method not in WRITE_METHODS:
        return None
    origin = request.headers.get("Origin")
    if origin is not None:
        allowed = {f"http://{host}" for host in _allowed_hosts(port)}
        if origin.strip().lower() not in allowed:
            return f"cross-origin write refused (Origin {origin[:100]!r})"
    site = request.headers.get("Sec-Fetch-Site")
    if site is not None and site.strip().lower() not in _SAFE_FETCH_SITES:
        return f"cross-origin write refused (Sec-Fetch-Site {site[:40]!r})"
    return None


def _authenticated_by(port: int) -> str | None:
    """``"token"``, ``"cookie"`` or None: which credential this request proves."""
    token = current_state().services.token
    header = request.headers.get("Authorization", "")
    scheme, _, given = header.strip().partition(" ")
    if scheme.lower() == "bearer" and given.strip() and tokens_equal(given.strip(), token):
        return "token"
    cookie = request.cookies.get(cookie_name(port))
    if cookie and tokens_equal(cookie, cookie_value(token)):
        return "cookie"
    return None


async def guard() -> Response | None:
    """The app's first ``before_request``: refuse unless every rule above passes."""
    port = server_port()
    if not _host_ok(port):
        return json_error(403, "Host header not allowed: use "
                               f"http://127.0.0.1:{port}/ or http://localhost:{port}/")
    services = current_state().services
    services.activity.touch()
    reason = _cross_origin_write(port)
    if reason is not None:
        return json_error(403, reason)
    g.memlite_auth = _authenticated_by(port)
    if request.endpoint in PUBLIC_ENDPOINTS:
        return None
    if g.memlite_auth is None:
        response = json_error(401, "missing or wrong credentials: send 'Authorization: "
                                   "Bearer <token>' (the token file is in the data directory)")
        response.headers["WWW-Authenticate"] = 'Bearer realm="memlite"'
        return response
    return None


def audit_actor() -> str:
    """Who to name in the audit log for this request (``http:token`` / ``http:cookie``)."""
    return f"http:{getattr(g, 'memlite_auth', None) or 'anonymous'}"


@blueprint.post("/api/auth/login-link")
async def login_link() -> Response:
    """A one-time dashboard URL. Request: no body. Answer: ``{"url", "expires_in"}``."""
    if g.memlite_auth != "token":
        return json_error(403, "a login link needs the bearer token, not the dashboard cookie")
    state = current_state()
    code = state.logins.issue()
    url = f"http://127.0.0.1:{server_port()}/login?code={code}"
    return jsonify({"url": url, "expires_in": int(state.logins.ttl)})


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>memlite</title>
<meta name="referrer" content="no-referrer"></head>
<body><h1>memlite</h1><p>{body}</p></body></html>
"""


def _page(status: int, body: str) -> Response:
    return Response(_PAGE.format(body=body), status=status,
                    content_type="text/html; charset=utf-8")


@blueprint.get("/login")
async def login() -> Response:
    """Redeem a one-time code: set the dashboard cookie and go to ``/``; else a 403 page."""
    code = request.args.get("code", "")
    state = current_state()
    if not code or not state.logins.redeem(code):
        return _page(403, "This login link is invalid, expired or already used. Run "
                          "<code>memlite dashboard</code> for a new one.")
    response = redirect("/", 303)
    response.set_cookie(cookie_name(server_port()), cookie_value(state.services.token),
                        httponly=True, samesite="Strict", path="/")
    return response
