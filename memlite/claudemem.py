"""Reading a claude-mem database, so people can switch: ``memlite import claude-mem.db``.

claude-mem keeps its memory in SQLite (``~/.claude-mem/claude-mem.db``) with the tables
``sdk_sessions``, ``observations``, ``session_summaries`` and ``user_prompts``. Their
columns changed across claude-mem's own migrations (the session id has been
``claude_session_id``, ``content_session_id``, ``sdk_session_id`` and
``memory_session_id``; early observations had only ``text``, later ones ``title``,
``narrative``, ``facts``...). So nothing here assumes a column: each table's columns are
read with ``PRAGMA table_info`` and every field is taken from the first column present
that holds a value. What cannot be mapped is skipped and counted, never guessed.

The rows become records of memlite's own export format (``memlite.transfer``) and go
through the same import: validated one by one, idempotent (a second import adds nothing),
bad rows reported. Every text is redacted with ``memlite.privacy.clean`` on the way in:
claude-mem stores what it captured as it was, secrets included.

The file is opened read-only (``mode=ro`` URI): memlite never writes to it.

Projects. claude-mem names a project by its folder name (``shop``: the basename of the git
top level, ``parent/child`` for a worktree); memlite names it by the git top-level path,
which is what SessionStart and project-filtered search look for. Each name is mapped to
a path (``memlite.claudemem_projects``), in this order: ``--project NAME=PATH`` given by
the user; a name that is already an absolute path (older claude-mem versions); the paths
the rows carry (any ``cwd`` column, absolute paths in ``files_read``/``files_modified``/
``files_edited``: ``/Users/a/code/shop/src/x.py`` gives ``/Users/a/code/shop``); the git
repositories the user has worked in (projects in memlite's own database, and the working
directories recorded in Claude Code's ``~/.claude/projects/*/*.jsonl`` transcripts) whose
folder has that name, when exactly one does. The rows of a name that cannot be mapped
(or is ambiguous) are NOT imported: they are counted and reported with the command that
maps them, and a later ``memlite import --project NAME=PATH`` imports just them (the rest
is already there, and the import is idempotent).

Types and statuses keep their meaning: claude-mem's ``security_alert``,
``security_note`` and ``sensitive`` observations stay so (an unknown type becomes
``change``), and a session keeps ``active``, ``completed`` or ``failed`` (a database
without a status says nothing, and its sessions are taken as ``completed``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import apsw
import attrs

from memlite.claudemem_projects import ProjectMap, map_projects
from memlite.errors import InputError
from memlite.privacy import clean
from memlite.transfer import FORMAT, VERSION

__all__ = ["CLAUDE_MEM_TYPES", "SQLITE_MAGIC", "Conversion", "convert", "is_sqlite", "records"]

SQLITE_MAGIC = b"SQLite format 3\x00"
#: The observation types claude-mem writes; each is kept as it is.
CLAUDE_MEM_TYPES = ("bugfix", "feature", "refactor", "discovery", "decision", "change",
                    "security_alert", "security_note", "sensitive")
_STATUSES = ("active", "completed", "failed")
_TABLES = ("sdk_sessions", "user_prompts", "observations", "session_summaries")
_SESSION_COLUMNS = ("claude_session_id", "content_session_id", "session_id",
                    "sdk_session_id", "memory_session_id")


def is_sqlite(path: Path) -> bool:
    """True when ``path`` starts with SQLite's file header."""
    try:
        with open(path, "rb") as f:
            return f.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except OSError:
        return False


def _columns(conn: apsw.Connection, table: str) -> set[str]:
    return {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}


def _rows(conn: apsw.Connection, table: str) -> Iterator[dict[str, Any]]:
    # The names come from the table's schema, not from the cursor: a statement over an
    # empty table is complete once executed, and APSW then has no description to give
    # (a claude-mem with no summaries or prompts yet failed to import).
    names = [str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})")]
    if not names:
        return
    order = "id" if "id" in names else "rowid"
    listed = ", ".join('"' + name.replace('"', '""') + '"' for name in names)
    for row in conn.execute(f"SELECT {listed} FROM {table} ORDER BY {order}"):
        yield dict(zip(names, row, strict=True))


def _first(row: dict[str, Any], *names: str) -> Any:
    for name in names:
        value = row.get(name)
        if value not in (None, ""):
            return value
    return None


def _epoch_ms(row: dict[str, Any]) -> int:
    """claude-mem stores ``created_at_epoch`` in ms (older rows: seconds) and an ISO text."""
    value = _first(row, "created_at_epoch", "started_at_epoch")
    if isinstance(value, int | float) and value > 0:
        return int(value * 1000) if value < 100_000_000_000 else int(value)
    text = _first(row, "created_at", "started_at")
    if isinstance(text, str):
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return 0
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return int(moment.timestamp() * 1000)
    return 0


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds") \
        .replace("+00:00", "Z")


def _text(value: Any) -> str:
    return "" if value is None else str(clean(str(value)))


def _list(value: Any) -> list[str]:
    """A JSON array (claude-mem's facts, concepts, files) or plain text, as strings."""
    if value in (None, ""):
        return []
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            parsed = [line for line in value.splitlines() if line.strip()]
        value = parsed
    if isinstance(value, list):
        return [_text(v) for v in value if v not in (None, "")]
    return [_text(value)]


@attrs.define
class Conversion:
    """A claude-mem database read: the export-format ``lines`` (header first) and how its
    project names were mapped (``projects``; the rows of unmapped names are left out)."""

    lines: list[str]
    projects: ProjectMap


def records(path: Path, *, projects: dict[str, str] | None = None,
            known: Iterator[str] | list[str] = ()) -> Iterator[str]:
    """The claude-mem database at ``path`` as lines of memlite's export format."""
    yield from convert(path, projects=projects, known=known).lines


def convert(path: Path, *, projects: dict[str, str] | None = None,
            known: Iterator[str] | list[str] = ()) -> Conversion:
    """Read the claude-mem database at ``path``; ``projects`` maps names to paths (the
    user's ``--project``), ``known`` lists paths of repositories the user worked in.

    Raises:
        InputError: not a SQLite file, or no claude-mem table in it.
    """
    if not is_sqlite(path):
        raise InputError(f"{path} is not a SQLite database")
    try:
        conn = apsw.Connection(f"file:{path.resolve()}?mode=ro", flags=apsw.SQLITE_OPEN_URI
                               | apsw.SQLITE_OPEN_READONLY)
    except apsw.Error as exc:
        raise InputError(f"cannot open {path}: {exc}") from None
    try:
        tables = {r[0] for r in conn.execute(
            "SELECT name FROM sqlite_schema WHERE type = 'table'")}
        if not tables & {"observations", "session_summaries"}:
            raise InputError(f"{path} is not a claude-mem database (it has no observations "
                             "or session_summaries table)")
        data = {table: list(_rows(conn, table)) if table in tables else []
                for table in _TABLES}
    except apsw.Error as exc:
        raise InputError(f"cannot read {path}: {exc}") from None
    finally:
        conn.close()
    mapping = map_projects(data, given=projects or {}, known=known)
    mapping.source = str(path)
    header = json.dumps({"kind": FORMAT, "version": VERSION, "source": "claude-mem",
                         "exported_at": _iso(int(datetime.now(UTC).timestamp() * 1000))})
    return Conversion(lines=[header, *_convert(data, mapping)], projects=mapping)


def _convert(data: dict[str, list[dict[str, Any]]], mapping: ProjectMap) -> Iterator[str]:
    sessions: dict[str, dict[str, Any]] = {}
    status_of: dict[str, str] = {}
    # A claude-mem session has several ids (the Claude Code one, the SDK's, the memory
    # one) and its tables refer to it by different ones: every id of an sdk_sessions row
    # maps to one (the Claude Code session id when there is one).
    alias: dict[str, str] = {}
    for row in data["sdk_sessions"]:
        canonical = _first(row, *_SESSION_COLUMNS)
        for name in _SESSION_COLUMNS:
            if row.get(name) not in (None, "") and canonical is not None:
                alias.setdefault(str(row[name]), str(canonical))
        status = str(row.get("status") or "").lower()
        if canonical is not None and status in _STATUSES:
            status_of.setdefault(str(canonical), status)

    def session_of(row: dict[str, Any]) -> str | None:
        ids = [str(row[name]) for name in _SESSION_COLUMNS if row.get(name) not in (None, "")]
        return next((alias[i] for i in ids if i in alias), ids[0]) if ids else None

    session_project: dict[str, str] = {}

    def project_of(row: dict[str, Any], sid: str | None) -> str | None:
        """The mapped path of the row's project (its own, else its session's)."""
        name = mapping.name_of(row)
        if name is None and sid is not None:
            return session_project.get(sid)
        return mapping.path_of(name) if name is not None else None

    def open_session(sid: str, row: dict[str, Any], project: str) -> None:
        if sid not in sessions:
            ms = _epoch_ms(row)
            sessions[sid] = {"kind": "session", "id": sid,
                             "status": status_of.get(sid, "completed"), "project": project,
                             "source": "claude-mem", "started_at": _iso(ms),
                             "started_at_epoch": ms}
            done = row.get("completed_at_epoch")
            if isinstance(done, int) and done > 0 and "started_at_epoch" in row:
                done = done if done >= 100_000_000_000 else done * 1000  # ms, or seconds
                sessions[sid].update(completed_at=_iso(done), completed_at_epoch=done)
        session_project.setdefault(sid, project)

    pending: list[dict[str, Any]] = []
    for row in data["sdk_sessions"]:
        sid = session_of(row)
        project = project_of(row, None)
        if sid is not None and project is not None:
            open_session(sid, row, project)
    for row in data["observations"]:
        sid = session_of(row)
        project = project_of(row, sid)
        narrative = _first(row, "narrative", "text")
        title = _first(row, "title") or (str(narrative).split("\n", 1)[0][:120]
                                         if narrative else None)
        if sid is None or title is None or project is None:
            continue
        open_session(sid, row, project)
        kind = str(_first(row, "type") or "change").lower()
        ms = _epoch_ms(row)
        pending.append({
            "kind": "observation", "session_id": sid, "project": project,
            "type": kind if kind in CLAUDE_MEM_TYPES else "change", "title": _text(title),
            "subtitle": _text(row.get("subtitle")), "narrative": _text(narrative),
            "facts": _list(row.get("facts")), "concepts": _list(row.get("concepts")),
            "files_read": _list(row.get("files_read")),
            "files_modified": _list(_first(row, "files_modified", "files_touched")),
            "backend": "ai", "content_hash": f"claude-mem:{row.get('id')}",
            "created_at": _iso(ms), "created_at_epoch": ms})
    for row in data["session_summaries"]:
        sid = session_of(row)
        project = project_of(row, sid)
        if sid is None or project is None:
            continue
        open_session(sid, row, project)
        ms = _epoch_ms(row)
        notes = _text(row.get("notes"))
        learned = _text(row.get("learned"))
        pending.append({
            "kind": "summary", "session_id": sid, "project": project,
            "request": _text(row.get("request")),
            "investigated": _text(row.get("investigated")),
            "learned": f"{learned}\n\nNotes: {notes}" if notes else learned,
            "completed": _text(row.get("completed")),
            "next_steps": _text(row.get("next_steps")),
            "created_at": _iso(ms), "created_at_epoch": ms})
    prompts: list[dict[str, Any]] = []
    for row in data["user_prompts"]:
        sid, text = session_of(row), _first(row, "prompt_text", "text")
        if sid is None or text is None or project_of(row, sid) is None:
            continue
        ms = _epoch_ms(row)
        prompts.append({"kind": "prompt", "session_id": sid,
                        "prompt_number": int(_first(row, "prompt_number") or 1),
                        "prompt_text": _text(text), "created_at": _iso(ms),
                        "created_at_epoch": ms})
    for record in sessions.values():  # sessions first: the other rows belong to them
        yield json.dumps(record, ensure_ascii=False)
    for record in (*prompts, *pending):
        yield json.dumps(record, ensure_ascii=False)
