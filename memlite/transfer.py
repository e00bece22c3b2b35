"""Export memory to JSONL and import it back: ``memlite export`` / ``memlite import``.

The file: one JSON object per line. The first line is the header
``{"kind": "memlite-export", "version": 1, "exported_at", "project"}``; then every
session, prompt, observation and summary (in that order, each oldest first) as
``{"kind": "session"|"prompt"|"observation"|"summary", ...}`` with the stored columns.
Row ids are not exported (they differ between databases): an observation is named by its
``content_hash``, and ``superseded_by`` holds the content hash of the observation that
replaced it. Raw hook events, vectors and the audit log are not exported (the embedder
indexes imported observations like any others).

Import is idempotent (importing a file twice adds nothing):

* a session is skipped when its id exists;
* a prompt when its (session, prompt number) exists;
* an observation when its content hash exists (the hash is recomputed from the content,
  so a hand-edited line is a new observation, never a corrupt one);
* a summary when one with the same (session, created_at, request) exists.

Supersession: the export's links are kept; the imported observations then get the links
the insert-time rules would have made (``memlite.storage.relink``, replayed in file
order), so an export of an older memlite, or a claude-mem database, does not hand back
decisions its later observations replaced.

Every line is validated on its own; a bad one (not JSON, unknown kind, a missing or
mistyped field, a refused write) is reported with its line number and skipped, and each
good line is written in its own savepoint, so a bad line never leaves half a row. A file
whose first line is not a memlite export header is refused as a whole.

While a worker is running, ``import`` refuses ("stop the worker first"): the storage
actor is the only writer of a running worker's database, and an import is rare enough
that stopping the worker for it is cheaper than an import endpoint. ``export`` reads
beside a running worker (WAL readers never block the writer).

A claude-mem database (``~/.claude-mem/claude-mem.db``) is read too: ``memlite import``
recognises a SQLite file and ``memlite.claudemem`` turns its rows into records of this
format, which then go through the same validated, idempotent import.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

import apsw
import attrs

from memlite.claudemem_projects import ProjectMap
from memlite.errors import InputError
from memlite.storage import relink
from memlite.storage.records import NewObservation
from memlite.storage.writes import observation_content_hash

log = logging.getLogger(__name__)

__all__ = ["FORMAT", "PLURAL", "VERSION", "ImportReport", "export", "import_lines", "import_path"]

FORMAT = "memlite-export"
VERSION = 1
KINDS = ("session", "prompt", "observation", "summary")
PLURAL = {"session": "sessions", "prompt": "prompts", "observation": "observations",
          "summary": "summaries"}
MAX_BAD_SHOWN = 50

# kind -> (required text fields, optional text fields, required int fields,
#          optional int fields, list-of-text fields)
_SESSION = (("id", "started_at", "status"),
            ("project", "project_name", "cwd", "branch", "commit_sha", "source",
             "transcript_path", "completed_at"),
            ("started_at_epoch",), ("completed_at_epoch",), ())
_PROMPT = (("session_id", "prompt_text", "created_at"), (),
           ("prompt_number", "created_at_epoch"), (), ())
_OBSERVATION = (("session_id", "project", "type", "title", "subtitle", "narrative", "backend",
                 "content_hash", "created_at"),
                ("branch", "commit_sha", "superseded_by"), ("created_at_epoch",), (),
                ("facts", "concepts", "files_read", "files_modified"))
_SUMMARY = (("session_id", "project", "request", "investigated", "learned", "completed",
             "next_steps", "created_at"), (), ("created_at_epoch",), (), ())
_FIELDS = {"session": _SESSION, "prompt": _PROMPT, "observation": _OBSERVATION,
           "summary": _SUMMARY}


# --- export -------------------------------------------------------------------------------


def _line(kind: str, row: dict[str, Any]) -> str:
    return json.dumps({"kind": kind, **row}, ensure_ascii=False, sort_keys=False,
                      separators=(",", ":"))


def _rows(conn: apsw.Connection, sql: str, params: Any = ()) -> Iterator[dict[str, Any]]:
    cursor = conn.execute(sql, params)
    names: list[str] | None = None
    for row in cursor:
        if names is None:
            names = [d[0] for d in cursor.getdescription()]
        yield dict(zip(names, row, strict=True))


def export(conn: apsw.Connection, out: TextIO, *, project: str | None = None,
           exported_at: str | None = None) -> dict[str, int]:
    """Write the export of everything (or of ``project``) to ``out``; returns the counts.

    ``exported_at`` defaults to now (ISO 8601 UTC); tests pass a fixed one.
    """
    stamp = exported_at or datetime.now(UTC).isoformat(timespec="milliseconds").replace(
        "+00:00", "Z")
    where_sessions = ""
    params: tuple[Any, ...] = ()
    if project is not None:
        where_sessions = ("WHERE project = ?1 OR id IN (SELECT session_id FROM observations "
                          "WHERE project = ?1) OR id IN (SELECT session_id FROM summaries "
                          "WHERE project = ?1)")
        params = (project,)
    counts = dict.fromkeys(KINDS, 0)
    with conn:  # one read transaction: a consistent snapshot
        out.write(json.dumps({"kind": FORMAT, "version": VERSION, "exported_at": stamp,
                              "project": project}, separators=(",", ":")) + "\n")
        for row in _rows(conn, "SELECT id, project, project_name, cwd, branch, commit_sha, "
                               "source, transcript_path, status, started_at, "
                               "started_at_epoch, completed_at, completed_at_epoch "
                               f"FROM sessions {where_sessions} "
                               "ORDER BY started_at_epoch, id", params):
            out.write(_line("session", row) + "\n")
            counts["session"] += 1
        prompt_where = "" if project is None else (
            "WHERE session_id IN (SELECT id FROM sessions " + where_sessions + ")")
        for row in _rows(conn, "SELECT session_id, prompt_number, prompt_text, created_at, "
                               f"created_at_epoch FROM user_prompts {prompt_where} "
                               "ORDER BY created_at_epoch, session_id, prompt_number", params):
            out.write(_line("prompt", row) + "\n")
            counts["prompt"] += 1
        obs_where = "" if project is None else "WHERE o.project = ?1"
        for row in _rows(conn, "SELECT o.session_id, o.project, o.branch, o.commit_sha, "
                               "o.type, o.title, o.subtitle, o.narrative, o.facts, "
                               "o.concepts, o.files_read, o.files_modified, o.backend, "
                               "o.content_hash, s.content_hash AS superseded_by, "
                               "o.created_at, o.created_at_epoch FROM observations AS o "
                               "LEFT JOIN observations AS s ON s.id = o.superseded_by "
                               f"{obs_where} ORDER BY o.created_at_epoch, o.id", params):
            for name in ("facts", "concepts", "files_read", "files_modified"):
                row[name] = json.loads(row[name])
            out.write(_line("observation", row) + "\n")
            counts["observation"] += 1
        sum_where = "" if project is None else "WHERE project = ?1"
        for row in _rows(conn, "SELECT session_id, project, request, investigated, learned, "
                               "completed, next_steps, created_at, created_at_epoch "
                               f"FROM summaries {sum_where} ORDER BY created_at_epoch, id",
                         params):
            out.write(_line("summary", row) + "\n")
            counts["summary"] += 1
    return counts


# --- import -------------------------------------------------------------------------------


@attrs.define
class ImportReport:
    """What an import did: per kind ``added`` and ``skipped`` (already there), and the
    ``bad`` lines as ``(line number, reason)``."""

    added: dict[str, int] = attrs.field(factory=lambda: dict.fromkeys(KINDS, 0))
    skipped: dict[str, int] = attrs.field(factory=lambda: dict.fromkeys(KINDS, 0))
    bad: list[tuple[int, str]] = attrs.field(factory=list)
    projects: ProjectMap | None = None  # a claude-mem import: how its projects were mapped

    def to_json(self) -> dict[str, Any]:
        body = {"added": self.added, "skipped": self.skipped,
                "bad": [{"line": n, "error": e} for n, e in self.bad]}
        if self.projects is not None:
            body["projects"] = self.projects.to_json()
        return body

    def lines(self) -> list[str]:
        """A person's summary, one line each."""
        shown = self.projects.lines() if self.projects is not None else []
        shown += [f"{PLURAL[kind]}: {self.added[kind]} added, {self.skipped[kind]} already "
                  "there" for kind in KINDS]
        shown += [f"line {n}: {error}" for n, error in self.bad[:MAX_BAD_SHOWN]]
        if len(self.bad) > MAX_BAD_SHOWN:
            shown.append(f"... and {len(self.bad) - MAX_BAD_SHOWN} more bad lines")
        if self.bad:
            shown.append(f"{len(self.bad)} bad lines skipped")
        return shown


class _Bad(Exception):
    pass


def _validate(record: dict[str, Any]) -> str:
    kind = record.get("kind")
    if kind not in _FIELDS:
        raise _Bad(f"unknown kind {str(kind)[:40]!r}")
    required_text, optional_text, required_int, optional_int, lists = _FIELDS[kind]
    for name in required_text:
        if not isinstance(record.get(name), str):
            raise _Bad(f"{kind}: field {name} must be text")
    for name in optional_text:
        if record.get(name) is not None and not isinstance(record[name], str):
            raise _Bad(f"{kind}: field {name} must be text or null")
    for name in required_int:
        value = record.get(name)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**63:
            raise _Bad(f"{kind}: field {name} must be a whole number")
    for name in optional_int:
        value = record.get(name)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise _Bad(f"{kind}: field {name} must be a whole number or null")
    for name in lists:
        value = record.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _Bad(f"{kind}: field {name} must be a list of text")
    if kind == "session" and record["status"] not in ("active", "completed", "failed"):
        raise _Bad("session: field status must be active, completed or failed")
    if not record.get("id" if kind == "session" else "session_id"):
        raise _Bad(f"{kind}: the session id is empty")
    return kind


def _write(conn: apsw.Connection, kind: str, r: dict[str, Any],
           hashes: dict[str, str]) -> bool:
    """Write one validated record; False when it was already there."""
    if kind == "session":
        conn.execute(
            "INSERT INTO sessions (id, project, project_name, cwd, branch, commit_sha, source,"
            " transcript_path, status, started_at, started_at_epoch, completed_at, "
            "completed_at_epoch) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT (id) DO NOTHING",
            (r["id"], r.get("project"), r.get("project_name"), r.get("cwd"), r.get("branch"),
             r.get("commit_sha"), r.get("source"), r.get("transcript_path"), r["status"],
             r["started_at"], r["started_at_epoch"], r.get("completed_at"),
             r.get("completed_at_epoch")))
        return conn.changes() > 0
    if kind == "prompt":
        conn.execute(
            "INSERT INTO user_prompts (session_id, prompt_number, prompt_text, created_at, "
            "created_at_epoch) VALUES (?,?,?,?,?) ON CONFLICT (session_id, prompt_number) "
            "DO NOTHING",
            (r["session_id"], r["prompt_number"], r["prompt_text"], r["created_at"],
             r["created_at_epoch"]))
        if not conn.changes():
            return False
        conn.execute("UPDATE sessions SET prompt_count = max(prompt_count, ?) WHERE id = ?",
                     (r["prompt_number"], r["session_id"]))
        return True
    if kind == "observation":
        obs = NewObservation(
            session_id=r["session_id"], project=r["project"], type=r["type"],
            title=r["title"], subtitle=r["subtitle"], narrative=r["narrative"],
            facts=r.get("facts", []), concepts=r.get("concepts", []),
            files_read=r.get("files_read", []), files_modified=r.get("files_modified", []))
        content_hash = observation_content_hash(obs)
        hashes[r["content_hash"]] = content_hash
        conn.execute(
            "INSERT INTO observations (session_id, project, branch, commit_sha, type, title, "
            "subtitle, narrative, facts, concepts, files_read, files_modified, backend, "
            "content_hash, created_at, created_at_epoch) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
            " ON CONFLICT (content_hash) DO NOTHING",
            (obs.session_id, obs.project, r.get("branch"), r.get("commit_sha"), obs.type,
             obs.title, obs.subtitle, obs.narrative,
             *(json.dumps(list(v), ensure_ascii=False) for v in
               (obs.facts, obs.concepts, obs.files_read, obs.files_modified)),
             r["backend"], content_hash, r["created_at"], r["created_at_epoch"]))
        return conn.changes() > 0
    exists = conn.execute(
        "SELECT 1 FROM summaries WHERE session_id = ? AND created_at = ? AND request = ?",
        (r["session_id"], r["created_at"], r["request"])).fetchall()
    if exists:
        return False
    conn.execute(
        "INSERT INTO summaries (session_id, project, request, investigated, learned, "
        "completed, next_steps, created_at, created_at_epoch) VALUES (?,?,?,?,?,?,?,?,?)",
        (r["session_id"], r["project"], r["request"], r["investigated"], r["learned"],
         r["completed"], r["next_steps"], r["created_at"], r["created_at_epoch"]))
    return True


def _header(first: str) -> None:
    try:
        header = json.loads(first)
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("kind") != FORMAT:
        raise InputError("not a memlite export: the first line must be the header "
                         f'{{"kind": "{FORMAT}", "version": {VERSION}, ...}}')
    if header.get("version") != VERSION:
        raise InputError(f"memlite export version {header.get('version')!r} is not "
                         f"supported (this memlite reads version {VERSION})")


def import_lines(conn: apsw.Connection, lines: Iterable[str]) -> ImportReport:
    """Import an export's lines into ``conn`` (a writer); see the module docstring."""
    report = ImportReport()
    supersede: list[tuple[str, str]] = []  # (exported hash, exported hash of the newer)
    hashes: dict[str, str] = {}  # exported content hash -> stored content hash
    numbered = enumerate(lines, start=1)
    first = next(numbered, None)
    if first is None:
        raise InputError("not a memlite export: the file is empty")
    _header(first[1])
    [(top,)] = conn.execute("SELECT coalesce(max(id), 0) FROM observations").fetchall()
    with conn:
        for number, text in numbered:
            if not text.strip():
                continue
            try:
                record = json.loads(text)
                if not isinstance(record, dict):
                    raise _Bad("not a JSON object")
                kind = _validate(record)
                with conn:  # a savepoint: a refused write undoes only this line
                    added = _write(conn, kind, record, hashes)
            except (ValueError, RecursionError) as exc:
                report.bad.append((number, f"not valid JSON: {str(exc)[:120]}"))
                continue
            except _Bad as exc:
                report.bad.append((number, str(exc)))
                continue
            except (apsw.Error, UnicodeEncodeError) as exc:
                report.bad.append((number, f"refused by the database: {str(exc)[:120]}"))
                continue
            (report.added if added else report.skipped)[kind] += 1
            if kind == "observation" and record.get("superseded_by"):
                supersede.append((record["content_hash"], record["superseded_by"]))
        for old, new in supersede:
            if old in hashes and new in hashes:
                conn.execute(
                    "UPDATE observations SET superseded_by = (SELECT id FROM observations "
                    "WHERE content_hash = ?) WHERE content_hash = ? AND superseded_by IS NULL",
                    (hashes[new], hashes[old]))
        # The rows were written without the insert path's supersession rules (an export
        # of an older memlite, a claude-mem database has no links for them): replayed in
        # file order, after the export's own links, which they never change.
        relink.schedule(conn, after=int(top))
    relink.resume(conn)
    return report


def import_path(data_dir: Path, path: Path, *,
                projects: dict[str, str] | None = None) -> ImportReport:
    """Import the file at ``path`` into the database of ``data_dir`` (no worker running).

    ``projects`` maps claude-mem project names to paths (``--project NAME=PATH``); it is
    only read for a claude-mem database (see ``memlite.claudemem_projects``).
    """
    from memlite.actors.snapshots import high_marks
    from memlite.lifecycle import find_worker
    from memlite.storage import connect

    info = find_worker(data_dir)
    if info is not None:
        raise InputError(f"a worker is running on this data directory (pid {info.pid}): "
                         "stop the worker first (`memlite worker stop`), then import")
    from memlite import claudemem

    if claudemem.is_sqlite(path):  # a claude-mem database: converted row by row
        from memlite.claudemem_projects import known_repositories

        conn = connect(data_dir)
        try:
            before = high_marks(conn)
            conversion = claudemem.convert(path, projects=projects,
                                           known=known_repositories(conn))
            report = import_lines(conn, conversion.lines)
            _refresh_snapshots(conn, data_dir, before)
        finally:
            conn.close()
        report.projects = conversion.projects
        return report
    try:
        handle = open(path, encoding="utf-8")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None
    conn = connect(data_dir)
    try:
        before = high_marks(conn)
        with handle:
            try:
                report = import_lines(conn, handle)
            except UnicodeDecodeError as exc:
                raise InputError(f"{path} is not UTF-8 text ({exc.reason})") from None
        _refresh_snapshots(conn, data_dir, before)
        return report
    finally:
        conn.close()


def _refresh_snapshots(conn: apsw.Connection, data_dir: Path,
                       before: tuple[int, int, int]) -> None:
    """The imported projects' context snapshots, so that a SessionStart with the worker
    still down (an import needs it stopped) already prints the imported memory."""
    from memlite.actors.snapshots import refresh_after
    from memlite.config import load_settings

    try:
        refresh_after(conn, data_dir, load_settings(Path(data_dir)), before)
    except Exception:  # noqa: BLE001 - the import stands; the next worker rewrites them
        log.warning("import: context snapshots not refreshed", exc_info=True)
