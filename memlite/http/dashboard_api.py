"""The dashboard's JSON: stats bar, projects, the feed, sessions and one session's timeline.

Every handler validates its query parameters (a 400 that names the parameter), then does
all of its reading in ONE ``async_run`` on a pooled reader (the ``_read_*`` functions
below are plain sync code over one connection).

Paging is by cursor, never by offset. The feed merges observations (not superseded) and
summaries into one total order, newest first: ``(created_at_epoch, kind, id)``
descending, where ``kind`` ranks an observation above a summary of the same millisecond
(their ids come from different tables, so the id alone cannot break that tie). ``next``
names the last item of a page; the next page is every row strictly after it in that
order. So a page boundary between rows with equal timestamps neither repeats nor skips a
row, and rows stored meanwhile (newer, at the top) do not shift later pages. Sessions
page the same way by ``(started_at_epoch, id)``. A cursor is opaque to callers
(URL-safe base64 of its fields); one that does not decode is a 400.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import apsw
import attrs
import trio
from quart import Blueprint, Response, jsonify

from memlite.errors import InputError, NotFound
from memlite.http.params import MAX_ID, int_arg, str_arg
from memlite.http.queries import observation_json
from memlite.http.state import current_state
from memlite.storage.reads import columns, get_prompts, get_session, to_record
from memlite.storage.records import Observation, Session, Summary
from memlite.storage.timestamps import now_ms, to_iso

__all__ = ["ACTIVITY_DAYS", "FEED_PAGE", "SESSIONS_PAGE", "blueprint", "decode_cursor",
           "encode_cursor"]

blueprint = Blueprint("dashboard_api", __name__)

FEED_PAGE = 30
SESSIONS_PAGE = 50
MAX_PAGE = 200
ACTIVITY_DAYS = 7
MAX_EPOCH = 2**53  # milliseconds: far beyond any real timestamp, still exact in JS
_RANK = {"observation": 1, "summary": 0}  # ties on the same millisecond: observations first
_CURSOR = re.compile(r"^(\d{1,16})\.([01])\.(\d{1,19})$")
_SESSION_CURSOR = re.compile(r"^(\d{1,16})\.([^\x00]{1,500})$", re.DOTALL)


# --- cursors ----------------------------------------------------------------------------


def encode_cursor(*parts: object) -> str:
    text = ".".join(str(part) for part in parts)
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def decode_cursor(raw: str | None, pattern: re.Pattern[str]) -> tuple[str, ...] | None:
    """The fields of a cursor made by ``encode_cursor``; None when absent; 400 when bad."""
    if raw is None:
        return None
    bad = InputError("query parameter before is not a cursor this server made (use the "
                     "next value of the previous page)")
    try:
        text = base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)).decode()
    except (binascii.Error, ValueError):
        raise bad from None
    match = pattern.fullmatch(text)
    if match is None or int(match.group(1)) > MAX_EPOCH:
        raise bad
    return match.groups()


def _feed_cursor() -> tuple[int, int, int] | None:
    fields = decode_cursor(str_arg("before", max_len=200), _CURSOR)
    if fields is None:
        return None
    epoch, rank, row_id = (int(f) for f in fields)
    if row_id > MAX_ID:
        raise InputError("query parameter before is not a cursor this server made")
    return epoch, rank, row_id


def _session_cursor() -> tuple[int, str] | None:
    fields = decode_cursor(str_arg("before", max_len=1000), _SESSION_CURSOR)
    return None if fields is None else (int(fields[0]), fields[1])


# --- reads (sync, one connection) ---------------------------------------------------------


def _rows(conn: apsw.Connection, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
    return conn.execute(sql, params).fetchall()


def _read_stats(conn: apsw.Connection, today: str) -> dict[str, Any]:
    one = lambda sql: _rows(conn, sql)[0][0]  # noqa: E731
    types = dict(_rows(conn, "SELECT type, count(*) FROM observations GROUP BY type "
                             "ORDER BY count(*) DESC, type"))
    first = datetime.fromisoformat(today).replace(tzinfo=UTC) - timedelta(
        days=ACTIVITY_DAYS - 1)
    start_ms = int(first.timestamp() * 1000)
    per_day = dict(_rows(
        conn,
        "SELECT (created_at_epoch - ?) / 86400000, count(*) FROM observations "
        "WHERE created_at_epoch >= ? GROUP BY 1", (start_ms, start_ms)))
    activity = [{"day": (first + timedelta(days=i)).date().isoformat(),
                 "observations": per_day.get(i, 0)} for i in range(ACTIVITY_DAYS)]
    return {
        "sessions": one("SELECT count(*) FROM sessions"),
        "observations": one("SELECT count(*) FROM observations"),
        "summaries": one("SELECT count(*) FROM summaries"),
        "projects": one("SELECT count(*) FROM (SELECT project FROM observations UNION "
                        "SELECT project FROM sessions WHERE project IS NOT NULL)"),
        "types": types,
        "activity": activity,
    }


def _read_projects(conn: apsw.Connection) -> list[dict[str, Any]]:
    rows = _rows(conn, """
        SELECT project, sum(observations), sum(sessions), max(last_ms) FROM (
            SELECT project, count(*) AS observations, 0 AS sessions,
                   max(created_at_epoch) AS last_ms
            FROM observations GROUP BY project
            UNION ALL
            SELECT project, 0, count(*), max(coalesce(completed_at_epoch, started_at_epoch))
            FROM sessions WHERE project IS NOT NULL GROUP BY project)
        GROUP BY project ORDER BY max(last_ms) DESC, project""")
    return [{"project": project, "name": os.path.basename(project.rstrip("/")) or project,
             "observations": observations, "sessions": sessions, "last_at": to_iso(last_ms),
             "last_at_epoch": last_ms}
            for project, observations, sessions, last_ms in rows]


def _page_of(conn: apsw.Connection, cls: type[Any], where: list[str], params: list[Any],
             cursor: tuple[int, int, int] | None, rank: int, limit: int) -> list[Any]:
    clauses, values = list(where), list(params)
    if cursor is not None:
        clauses.append("(created_at_epoch, ?, id) < (?, ?, ?)")
        values.extend((rank, *cursor))
    table = "observations" if cls is Observation else "summaries"
    sql = (f"SELECT {columns(cls)} FROM {table} "
           f"{'WHERE ' + ' AND '.join(clauses) if clauses else ''} "
           f"ORDER BY created_at_epoch DESC, id DESC LIMIT ?")
    return [to_record(cls, row) for row in conn.execute(sql, (*values, limit))]


def _read_feed(conn: apsw.Connection, project: str | None,
               cursor: tuple[int, int, int] | None, limit: int) -> dict[str, Any]:
    where, params = (["project = ?"], [project]) if project is not None else ([], [])
    observations = _page_of(conn, Observation, [*where, "superseded_by IS NULL"], params,
                            cursor, _RANK["observation"], limit + 1)
    summaries = _page_of(conn, Summary, where, params, cursor, _RANK["summary"], limit + 1)
    merged = sorted(
        [("observation", o) for o in observations] + [("summary", s) for s in summaries],
        key=lambda pair: (pair[1].created_at_epoch, _RANK[pair[0]], pair[1].id),
        reverse=True)
    page = merged[:limit]
    items = [{"kind": kind, **(observation_json(row) if kind == "observation"
                               else attrs.asdict(row))} for kind, row in page]
    last = page[-1] if page else None
    more = len(merged) > limit and last is not None
    return {"items": items,
            "next": encode_cursor(last[1].created_at_epoch, _RANK[last[0]], last[1].id)
            if more and last else None}


def _session_json(conn: apsw.Connection, session: Session) -> dict[str, Any]:
    counts = _rows(conn, "SELECT (SELECT count(*) FROM observations WHERE session_id = ?), "
                         "(SELECT count(*) FROM summaries WHERE session_id = ?)",
                   (session.id, session.id))[0]
    latest = _rows(conn, f"SELECT {columns(Summary)} FROM summaries WHERE session_id = ? "
                         "ORDER BY created_at_epoch DESC, id DESC LIMIT 1", (session.id,))
    body = {**attrs.asdict(session), "observations": counts[0], "summaries": counts[1],
            "summary": attrs.asdict(to_record(Summary, latest[0])) if latest else None}
    if session.project is None:  # a stub session (no SessionStart yet): what it recorded
        found = _rows(conn, "SELECT project FROM observations WHERE session_id = ? UNION ALL "
                            "SELECT project FROM summaries WHERE session_id = ? LIMIT 1",
                      (session.id, session.id))
        if found:
            body["project"] = found[0][0]
            body["project_name"] = os.path.basename(found[0][0].rstrip("/")) or found[0][0]
    return body


def _read_sessions(conn: apsw.Connection, project: str | None,
                   cursor: tuple[int, str] | None, limit: int) -> dict[str, Any]:
    clauses, values = [], []
    if project is not None:
        clauses.append("(project = ? OR (project IS NULL AND EXISTS (SELECT 1 FROM "
                       "observations AS o WHERE o.session_id = sessions.id AND o.project = ?)))")
        values.extend((project, project))
    if cursor is not None:
        # newest first, ties by id ascending (the order recent_sessions uses)
        clauses.append("(started_at_epoch < ? OR (started_at_epoch = ? AND id > ?))")
        values.extend((cursor[0], cursor[0], cursor[1]))
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    rows = _rows(conn, f"SELECT {columns(Session)} FROM sessions {where} "
                       "ORDER BY started_at_epoch DESC, id ASC LIMIT ?", (*values, limit + 1))
    found = [to_record(Session, row) for row in rows]
    page = found[:limit]
    return {"sessions": [_session_json(conn, s) for s in page],
            "next": encode_cursor(page[-1].started_at_epoch, page[-1].id)
            if len(found) > limit else None}


def _read_session(conn: apsw.Connection, session_id: str) -> dict[str, Any] | None:
    session = get_session(conn, session_id)
    if session is None:
        return None
    observations = [to_record(Observation, row) for row in conn.execute(
        f"SELECT {columns(Observation)} FROM observations WHERE session_id = ? "
        "ORDER BY created_at_epoch, id", (session_id,))]
    summaries = [to_record(Summary, row) for row in conn.execute(
        f"SELECT {columns(Summary)} FROM summaries WHERE session_id = ? "
        "ORDER BY created_at_epoch, id", (session_id,))]
    return {
        "session": _session_json(conn, session),
        "observations": [{**observation_json(o), "superseded": o.superseded_by is not None}
                         for o in observations],
        "summaries": [attrs.asdict(s) for s in summaries],
        "prompts": [attrs.asdict(p) for p in get_prompts(conn, session_id)],
    }


# --- routes ------------------------------------------------------------------------------


def _project() -> str | None:
    return str_arg("project", max_len=4096)


@blueprint.get("/api/stats")
async def stats() -> Response:
    """The stats bar: ``{"sessions", "observations", "summaries", "projects", "types",
    "activity", "uptime_seconds", "observer": {"ok", "line"}, "spool": {"waiting",
    "quarantined", "latest", "files"}}``.

    ``observations`` counts every stored row (superseded ones too); ``activity`` is
    observations per UTC day for the last 7 days, oldest first, zero-filled. ``spool``
    says whether hook events wait to be drained, how many lines are quarantined (kept
    with their reason, see ``memlite.hooks.spool``), the newest one's ``reason``,
    ``event``, ``source``, ``line`` and ``rejectedAt``, and the quarantine files.
    """
    services = current_state().services
    today = datetime.fromtimestamp(now_ms() / 1000, tz=UTC).date().isoformat()
    async with current_state().readers.borrow() as conn:
        found = await conn.async_run(_read_stats, conn, today)
    if services.observer is None:
        observer = {"ok": False, "line": "this server runs no observer"}
    else:
        line = services.observer.health_line()
        observer = {"ok": line is None, "line": line}
    uptime = max(0.0, trio.current_time() - services.started_at)
    return jsonify({**found, "uptime_seconds": round(uptime, 1), "observer": observer,
                    "spool": await trio.to_thread.run_sync(_spool_state, services.data_dir)})


def _spool_state(data_dir: Any) -> dict[str, Any]:
    from memlite.actors.spooler import spool_waiting
    from memlite.hooks import spool

    found = spool.quarantined(data_dir, latest=1)
    return {"waiting": spool_waiting(data_dir), "quarantined": found.count,
            "latest": found.latest[0] if found.latest else None, "files": list(found.files)}


@blueprint.get("/api/projects")
async def projects() -> Response:
    """``{"projects": [{"project", "name", "observations", "sessions", "last_at",
    "last_at_epoch"}]}``, the project with the newest activity first."""
    async with current_state().readers.borrow() as conn:
        found = await conn.async_run(_read_projects, conn)
    return jsonify({"projects": found})


@blueprint.get("/api/feed")
async def feed() -> Response:
    """``?project=&before=<cursor>&limit=30``: observations (not superseded) and summaries,
    newest first: ``{"items": [{"kind": "observation"|"summary", ...record}], "next"}``;
    ``next`` is the cursor of the following page, null on the last one."""
    project = _project()
    cursor = _feed_cursor()
    limit = int_arg("limit", FEED_PAGE, low=1, high=MAX_PAGE)
    async with current_state().readers.borrow() as conn:
        found = await conn.async_run(_read_feed, conn, project, cursor, limit)
    return jsonify(found)


@blueprint.get("/api/sessions")
async def sessions() -> Response:
    """``?project=&before=<cursor>&limit=50``: sessions newest first, each with its
    ``observations`` and ``summaries`` counts and latest ``summary`` (or null):
    ``{"sessions": [...], "next"}``. A stub session (its SessionStart never came) shows,
    and is filtered by, the project of what it recorded."""
    project = _project()
    cursor = _session_cursor()
    limit = int_arg("limit", SESSIONS_PAGE, low=1, high=MAX_PAGE)
    async with current_state().readers.borrow() as conn:
        found = await conn.async_run(_read_sessions, conn, project, cursor, limit)
    return jsonify(found)


@blueprint.get("/api/sessions/<session_id>")
async def session(session_id: str) -> Response:
    """One session's timeline: ``{"session", "observations", "summaries", "prompts"}``,
    each list in time order; observations include superseded ones (``superseded``)."""
    if not session_id.strip() or len(session_id) > 500:
        raise InputError("session id must be 1 to 500 characters")
    async with current_state().readers.borrow() as conn:
        found = await conn.async_run(_read_session, conn, session_id)
    if found is None:
        raise NotFound(f"no session {session_id[:100]!r}")
    return jsonify(found)
