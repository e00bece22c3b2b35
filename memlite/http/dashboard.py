"""The dashboard's pages: server-rendered shells (Jinja2) that a little script fills in.

Every page extends ``templates/base.html`` (navigation, stats bar, theme switch) and loads
``/static/app.js`` (shared helpers: ``api()``, ``el()``, ``card()``, SSE, the stats bar)
plus its own ``/static/<page>.js``. The script builds the DOM with ``textContent`` and
``setAttribute`` only, never ``innerHTML`` with data, so a title holding ``<script>`` is
shown as text. No inline script or style: the pages' CSP is ``script-src 'self'``.

Pages need the dashboard cookie (the auth guard); ``/`` is public and shows a sign-in hint
to a browser without it. Static files: only names in ``static/`` that match
``STATIC_NAME`` are served (no path ever comes from the URL as a path).
"""

from __future__ import annotations

import re
from pathlib import Path

import trio
from quart import Blueprint, Response, g, redirect, render_template

from memlite.errors import NotFound
from memlite.http.state import current_state

__all__ = ["PAGES", "PAGE_CSP", "STATIC_NAME", "blueprint"]

blueprint = Blueprint("dashboard", __name__, template_folder="templates")

STATIC_DIR = Path(__file__).resolve().parent / "static"
STATIC_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,60}\.(css|js|svg|png)$")
_TYPES = {"css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8",
          "svg": "image/svg+xml", "png": "image/png"}
PAGE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")

# (path, endpoint name, title): the navigation, in order.
PAGES = (
    ("/feed", "feed", "Feed"),
    ("/sessions", "sessions", "Sessions"),
    ("/search", "search", "Search"),
    ("/context", "context", "Context"),
    ("/settings", "settings", "Settings"),
    ("/cleanup", "cleanup", "Cleanup"),
)


async def _page(name: str, **values: object) -> Response:
    body = await render_template(f"{name}.html", page=name, pages=PAGES,
                                 version=current_state().services.version, **values)
    response = Response(body, content_type="text/html; charset=utf-8")
    response.headers["Content-Security-Policy"] = PAGE_CSP
    return response


@blueprint.get("/")
async def index() -> Response:
    """Signed in: the feed. Else a page that says how to sign in (it holds no data)."""
    if g.get("memlite_auth"):
        return redirect("/feed", 303)
    return await _page("signin")


@blueprint.get("/feed")
async def feed() -> Response:
    return await _page("feed")


@blueprint.get("/sessions")
async def sessions() -> Response:
    return await _page("sessions")


@blueprint.get("/sessions/<session_id>")
async def session(session_id: str) -> Response:
    return await _page("session", session_id=session_id)


@blueprint.get("/search")
async def search() -> Response:
    return await _page("search")


@blueprint.get("/context")
async def context() -> Response:
    return await _page("context")


@blueprint.get("/settings")
async def settings() -> Response:
    return await _page("settings")


@blueprint.get("/cleanup")
async def cleanup() -> Response:
    return await _page("cleanup")


@blueprint.get("/static/<name>")
async def static(name: str) -> Response:
    """One file of ``static/`` by exact name; anything else is 404."""
    match = STATIC_NAME.match(name)
    path = STATIC_DIR / name
    if match is None or not path.is_file() or path.resolve().parent != STATIC_DIR:
        raise NotFound("no such file")
    # On a thread: a disk that is slow (or asleep) must not stall the worker's loop.
    body = await trio.to_thread.run_sync(path.read_bytes)
    response = Response(body, content_type=_TYPES[match.group(1)])
    response.headers["Cache-Control"] = "no-cache"
    return response
