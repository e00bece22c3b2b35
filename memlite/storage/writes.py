"""Write functions: plain sync calls on an APSW connection, one logical change each.

They open no transaction of their own: the storage actor runs a whole batch of them in
one ``BEGIN IMMEDIATE`` transaction, so that a failed call undoes only its own statements
(the batch is rerun with a savepoint around each call once one fails). Called on a
connection in autocommit mode, each statement commits by itself; wrap several calls in
``with conn:`` to make them atomic.

A prompt, event, observation or summary whose session is not known yet creates a stub
session (a trigger in the schema): capture never fails for lack of a SessionStart.

Inserts that a retry may repeat are idempotent and say so with ``InsertResult.created``:
an event (same session and tool_use_id, or same content), a prompt (same session and
prompt number), an observation (same content hash).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

import apsw

from memlite.storage.reads import get_session
from memlite.storage.records import (
    EVENT_STATUSES,
    InsertResult,
    NewObservation,
    NewSummary,
    Session,
)
from memlite.storage.sqlvalue import integer
from memlite.storage.timestamps import now_ms, to_iso
from memlite.storage.topics import record_supersession

__all__ = [
    "complete_session",
    "delete_observation",
    "delete_session",
    "delete_summary",
    "insert_event",
    "insert_observation",
    "insert_prompt",
    "insert_summary",
    "record_audit",
    "requeue_processing_events",
    "set_event_status",
    "set_sdk_session_id",
    "start_session",
]


# What json.dumps(sort_keys=True, separators=(",", ":"), ensure_ascii=False) builds on
# every call; one shared encoder (it keeps no state between calls) saves that per event.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def canonical_json(value: Mapping[str, Any] | str) -> str:
    """Compact JSON with sorted keys: equal payloads give equal text (and hashes).

    A string is parsed first, so invalid JSON fails here rather than in SQL.
    """
    if isinstance(value, str):
        value = json.loads(value)
    return _CANONICAL.encode(value)


def _sha256(*parts: str) -> str:
    """SHA-256 of the parts, each followed by a NUL byte."""
    data = "\x00".join(parts).encode("utf-8", "surrogatepass") + b"\x00"
    return hashlib.sha256(data).hexdigest()


def _json_list(values: Iterable[Any]) -> str:
    return json.dumps(list(values), ensure_ascii=False)


def _inserted_id(conn: apsw.Connection, sql: str, params: Any) -> int | None:
    """Run an ``INSERT ... ON CONFLICT DO NOTHING``: the new row's id, or None if skipped.

    ``changes()`` and ``last_insert_rowid()`` ignore rows written by triggers, and they
    are cheaper than ``RETURNING`` on the hot path (one event per hook).
    """
    conn.execute(sql, params)
    return conn.last_insert_rowid() if conn.changes() else None


def _one(conn: apsw.Connection, sql: str, params: Any = ()) -> Any:
    rows = conn.execute(sql, params).fetchall()
    return rows[0][0] if rows else None


# --- sessions ---------------------------------------------------------------------------


def start_session(
    conn: apsw.Connection,
    *,
    session_id: str,
    project: str | None = None,
    project_name: str | None = None,
    cwd: str | None = None,
    branch: str | None = None,
    commit_sha: str | None = None,
    source: str | None = None,
    transcript_path: str | None = None,
    at_ms: int | None = None,
) -> Session:
    """Create the session, or resume it (status back to active, new details filled in).

    Fields passed as None keep their stored value. Returns the session as stored.
    """
    ms = now_ms() if at_ms is None else at_ms
    conn.execute(
        """
        INSERT INTO sessions (id, project, project_name, cwd, branch, commit_sha, source,
                              transcript_path, started_at, started_at_epoch)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (id) DO UPDATE SET
            project = coalesce(excluded.project, project),
            project_name = coalesce(excluded.project_name, project_name),
            cwd = coalesce(excluded.cwd, cwd),
            branch = coalesce(excluded.branch, branch),
            commit_sha = coalesce(excluded.commit_sha, commit_sha),
            source = coalesce(excluded.source, source),
            transcript_path = coalesce(excluded.transcript_path, transcript_path),
            status = 'active', completed_at = NULL, completed_at_epoch = NULL
        """,
        (session_id, project, project_name, cwd, branch, commit_sha, source,
         transcript_path, to_iso(ms), ms),
    )
    session = get_session(conn, session_id)
    assert session is not None  # just written, in this transaction
    return session


def complete_session(conn: apsw.Connection, session_id: str, *, at_ms: int | None = None) -> bool:
    """Mark the session completed. Returns False if there is no such session."""
    ms = now_ms() if at_ms is None else at_ms
    conn.execute(
        "UPDATE sessions SET status = 'completed', completed_at = ?, completed_at_epoch = ? "
        "WHERE id = ?",
        (to_iso(ms), ms, session_id),
    )
    return conn.changes() > 0


def set_sdk_session_id(conn: apsw.Connection, session_id: str, sdk_session_id: str | None) -> bool:
    """Record (or clear) the observer conversation's id. False if no such session."""
    conn.execute(
        "UPDATE sessions SET sdk_session_id = ? WHERE id = ?", (sdk_session_id, session_id)
    )
    return conn.changes() > 0


# --- prompts and events -----------------------------------------------------------------


def insert_prompt(
    conn: apsw.Connection,
    *,
    session_id: str,
    prompt_text: str,
    prompt_number: int | None = None,
    at_ms: int | None = None,
) -> InsertResult:
    """Store a user prompt (``''`` means private). Numbered after the last when not given."""
    ms = now_ms() if at_ms is None else at_ms
    if prompt_number is None:
        count = _one(conn, "SELECT prompt_count FROM sessions WHERE id = ?", (session_id,))
        prompt_number = 1 + (count or 0)
    new_id = _inserted_id(
        conn,
        "INSERT INTO user_prompts (session_id, prompt_number, prompt_text, created_at, "
        "created_at_epoch) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (session_id, prompt_number) DO NOTHING",
        (session_id, prompt_number, prompt_text, to_iso(ms), ms),
    )
    if new_id is None:
        existing = _one(
            conn,
            "SELECT id FROM user_prompts WHERE session_id = ? AND prompt_number = ?",
            (session_id, prompt_number),
        )
        return InsertResult(existing, created=False)
    conn.execute(
        "UPDATE sessions SET prompt_count = max(prompt_count, ?) WHERE id = ?",
        (prompt_number, session_id),
    )
    return InsertResult(new_id, created=True)


def event_content_hash(event_name: str, tool_name: str | None, payload_json: str) -> str:
    """The hash that identifies an event without a tool_use_id (payload is canonical)."""
    return _sha256(event_name, tool_name or "", payload_json)


def insert_event(
    conn: apsw.Connection,
    *,
    session_id: str,
    event_name: str,
    payload: Mapping[str, Any] | str,
    tool_name: str | None = None,
    tool_use_id: str | None = None,
    at_ms: int | None = None,
) -> InsertResult:
    """Append a redacted hook event to the durable queue, idempotently.

    A second insert with the same (session, tool_use_id), or with no tool_use_id and the
    same content, returns the first row's id with ``created=False`` and writes nothing.
    """
    ms = now_ms() if at_ms is None else at_ms
    text = canonical_json(payload)
    content_hash = event_content_hash(event_name, tool_name, text)
    new_id = _inserted_id(
        conn,
        "INSERT INTO events (session_id, event_name, tool_name, tool_use_id, payload, "
        "content_hash, created_at, created_at_epoch, updated_at_epoch) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_id, dedup_key) DO NOTHING",
        (session_id, event_name, tool_name, tool_use_id, text, content_hash, to_iso(ms), ms, ms),
    )
    if new_id is not None:
        return InsertResult(new_id, created=True)
    key = f"t:{tool_use_id}" if tool_use_id is not None else f"h:{content_hash}"
    existing = _one(
        conn, "SELECT id FROM events WHERE session_id = ? AND dedup_key = ?", (session_id, key)
    )
    return InsertResult(existing, created=False)


def set_event_status(conn: apsw.Connection, event_ids: Iterable[int], status: str) -> int:
    """Move events to ``status``; moving to ``processing`` counts an attempt.

    Returns the number of events changed.
    """
    if status not in EVENT_STATUSES:
        raise ValueError(f"unknown event status {status!r}")
    conn.execute(
        "UPDATE events SET status = ?, updated_at_epoch = ?, "
        "attempts = attempts + (? = 'processing') "
        "WHERE id IN (SELECT value FROM json_each(?))",
        (status, now_ms(), status, _json_list(int(i) for i in event_ids)),
    )
    return conn.changes()


def requeue_processing_events(conn: apsw.Connection) -> int:
    """Put events left ``processing`` by a dead worker back to ``pending``.

    They go to a fresh observer conversation, never back into the one that was feeding
    them. Returns how many were requeued.
    """
    conn.execute(
        "UPDATE events SET status = 'pending', updated_at_epoch = ? WHERE status = 'processing'",
        (now_ms(),),
    )
    return conn.changes()


# --- observations and summaries ---------------------------------------------------------


def observation_content_hash(obs: NewObservation) -> str:
    """Same session and same content give the same hash: a retried store is a no-op."""
    return _sha256(
        obs.session_id, obs.type, obs.title, obs.subtitle, obs.narrative,
        _json_list(obs.facts), _json_list(obs.concepts),
        _json_list(obs.files_read), _json_list(obs.files_modified),
    )


def insert_observation(
    conn: apsw.Connection, obs: NewObservation, *, batch: str | None = None,
    mark_done: bool = True,
) -> InsertResult:
    """Store an observation, mark its source events done and link what it supersedes
    (the ids it names, and same-topic decisions and fixes: ``storage.topics``).

    The three happen together (the caller's transaction or savepoint), so an event is
    never ``done`` without its observation. A duplicate (same content hash) still marks
    the events and links: the first attempt may have stored the row and lost the reply.

    Each source event is linked in ``observation_sources`` under ``batch`` (default: one
    of its own, ``o:<id>``); the database refuses a second batch for an event already
    observed by the same kind of backend (schema version 2), so this raises
    ``apsw.ConstraintError`` rather than store a second observation of the same events.
    ``mark_done=False`` stores a provisional (rules) observation and leaves its events
    pending for the AI.
    """
    ms = now_ms() if obs.at_ms is None else obs.at_ms
    content_hash = observation_content_hash(obs)
    new_id = _inserted_id(
        conn,
        """
        INSERT INTO observations (session_id, project, branch, commit_sha, type, title,
            subtitle, narrative, facts, concepts, files_read, files_modified,
            source_event_ids, backend, content_hash, created_at, created_at_epoch)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (content_hash) DO NOTHING
        """,
        (obs.session_id, obs.project, obs.branch, obs.commit_sha, obs.type, obs.title,
         obs.subtitle, obs.narrative, _json_list(obs.facts), _json_list(obs.concepts),
         _json_list(obs.files_read), _json_list(obs.files_modified),
         _json_list(obs.source_event_ids), obs.backend, content_hash, to_iso(ms), ms),
    )
    if new_id is not None:
        result = InsertResult(new_id, created=True)
    else:
        existing = _one(
            conn, "SELECT id FROM observations WHERE content_hash = ?", (content_hash,)
        )
        result = InsertResult(existing, created=False)
    if obs.source_event_ids:
        conn.execute(
            "INSERT OR IGNORE INTO observation_sources (event_id, kind, observation_id, batch)"
            " SELECT value, ?, ?, ? FROM json_each(?) WHERE value IN (SELECT id FROM events)",
            ("rules" if obs.backend == "rules" else "ai", result.id,
             batch or f"o:{result.id}", _json_list(obs.source_event_ids)),
        )
        if mark_done:
            set_event_status(conn, obs.source_event_ids, "done")
    if obs.supersedes:
        conn.execute(
            "UPDATE observations SET superseded_by = ? "
            "WHERE id IN (SELECT value FROM json_each(?)) AND id != ?",
            (result.id, _json_list(obs.supersedes), result.id),
        )
    if result.created:  # a newer decision or fix on the same topic (storage.topics)
        record_supersession(conn, result.id)
    return result


def insert_summary(conn: apsw.Connection, summary: NewSummary, *,
                   done_event_ids: Iterable[int] = ()) -> int:
    """Store a session summary and mark the Stop events it answers done. Returns its id.

    Both happen together (the caller's transaction or savepoint): a Stop event is never
    ``done`` without its summary, so a summary cut off by a crash is made again from the
    Stop still pending (or ``processing``, requeued at the next start).
    """
    ms = now_ms() if summary.at_ms is None else summary.at_ms
    done = [int(i) for i in done_event_ids]
    if done:
        set_event_status(conn, done, "done")
    return integer(_one(
        conn,
        "INSERT INTO summaries (session_id, project, request, investigated, learned, "
        "completed, next_steps, created_at, created_at_epoch) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        (summary.session_id, summary.project, summary.request, summary.investigated,
         summary.learned, summary.completed, summary.next_steps, to_iso(ms), ms),
    ))


# --- audit and deletion -----------------------------------------------------------------


def record_audit(
    conn: apsw.Connection,
    *,
    actor: str,
    action: str,
    target: str,
    detail: Mapping[str, Any] | None = None,
    at_ms: int | None = None,
) -> int:
    """Append to the audit log (who did what to which row). Returns the entry's id."""
    ms = now_ms() if at_ms is None else at_ms
    return integer(_one(
        conn,
        "INSERT INTO audit_log (at, at_epoch, actor, action, target, detail) "
        "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        (to_iso(ms), ms, actor, action, target, canonical_json(dict(detail or {}))),
    ))


def delete_observation(conn: apsw.Connection, observation_id: int, *, actor: str) -> bool:
    """Delete one observation (its FTS entry and vector go with it), audited."""
    title = _one(conn, "SELECT title FROM observations WHERE id = ?", (observation_id,))
    if title is None:
        return False
    conn.execute("DELETE FROM observations WHERE id = ?", (observation_id,))
    record_audit(conn, actor=actor, action="delete_observation",
                 target=f"observation:{observation_id}", detail={"title": title})
    return True


def delete_summary(conn: apsw.Connection, summary_id: int, *, actor: str) -> bool:
    """Delete one summary, audited."""
    session_id = _one(conn, "SELECT session_id FROM summaries WHERE id = ?", (summary_id,))
    if session_id is None:
        return False
    conn.execute("DELETE FROM summaries WHERE id = ?", (summary_id,))
    record_audit(conn, actor=actor, action="delete_summary", target=f"summary:{summary_id}",
                 detail={"session_id": session_id})
    return True


def delete_session(conn: apsw.Connection, session_id: str, *, actor: str) -> bool:
    """Delete a session and everything recorded in it (cascade), audited with counts."""
    if _one(conn, "SELECT 1 FROM sessions WHERE id = ?", (session_id,)) is None:
        return False
    counts = {
        table: _one(conn, f"SELECT count(*) FROM {table} WHERE session_id = ?", (session_id,))
        for table in ("events", "user_prompts", "observations", "summaries")
    }
    conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
    record_audit(conn, actor=actor, action="delete_session", target=f"session:{session_id}",
                 detail=counts)
    return True
