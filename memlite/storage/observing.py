"""The observer's writes and reads: observation batches, pruning, health.

Plain functions on a connection, like ``writes`` and ``reads``: the storage actor runs the
writes (each message in its transaction), readers run the reads.

The replay guarantee lives here and in the schema (version 2): every observation is
linked to its source events in ``observation_sources`` under the batch that stored it,
and a trigger refuses a second batch for an event already observed by the same kind of
backend. ``store_observations`` checks first and turns a replay into a no-op (the events
are marked done, nothing new is stored); the trigger is what makes that true even for a
caller that does not check.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

import apsw

from memlite.storage import reads, writes
from memlite.storage.records import Event, InsertResult, NewObservation
from memlite.storage.sqlvalue import integer
from memlite.storage.timestamps import now_ms

__all__ = [
    "DAY_MS",
    "FAILURE_THRESHOLD",
    "health_line",
    "observed_by",
    "observer_health",
    "pending_events_after",
    "processing_event_ids",
    "prompt_without_stop",
    "prune_events",
    "session_events",
    "set_observer_health",
    "store_observations",
    "vacuum_step",
]

DAY_MS = 24 * 3600 * 1000
_KEPT = ("id, session_id, event_name, tool_name, tool_use_id, content_hash, status, "
         "attempts, created_at, created_at_epoch, updated_at_epoch")
FAILURE_THRESHOLD = 3
"""Observation failures in a row after which SessionStart context and /api/health say so."""


def _kind(backend: str) -> str:
    return "rules" if backend == "rules" else "ai"


def observed_by(conn: apsw.Connection, event_ids: Sequence[int], kind: str) -> list[int]:
    """Ids of the observations of ``kind`` ('ai' or 'rules') linked to any of the events."""
    rows = conn.execute(
        "SELECT DISTINCT observation_id FROM observation_sources "
        "WHERE kind = ? AND event_id IN (SELECT value FROM json_each(?)) "
        "ORDER BY observation_id",
        (kind, json.dumps([int(i) for i in event_ids])),
    ).fetchall()
    return [integer(r[0]) for r in rows]


def store_observations(
    conn: apsw.Connection, observations: Sequence[NewObservation], *, mark_done: bool = True,
) -> list[InsertResult]:
    """Store the observations of one reply as one batch; their events are marked done.

    Args:
        observations: one backend's observations of the same events (one turn's answer).
        mark_done: False stores provisional (rules) observations and leaves the events
            pending, for the AI to observe (and supersede them) when it is back.

    Returns:
        One ``InsertResult`` per stored observation; for a replay (an event of the batch
        already observed by this kind of backend) the existing observations, with
        ``created=False``, and nothing new is written.
    """
    if not observations:
        return []
    kind = _kind(observations[0].backend)
    sources = sorted({i for o in observations for i in o.source_event_ids})
    existing = observed_by(conn, sources, kind) if sources else []
    if existing:
        if mark_done:
            writes.set_event_status(conn, sources, "done")
        return [InsertResult(i, created=False) for i in existing]
    batch = f"b:{os.urandom(8).hex()}"
    return [writes.insert_observation(conn, obs, batch=batch, mark_done=mark_done)
            for obs in observations]


def prune_events(
    conn: apsw.Connection, *, older_than_ms: int, limit: int = 5000, vacuum_pages: int = 2000,
) -> int:
    """Replace the payload of old finished events by '{}' and give the pages back.

    Finished means ``done`` or ``skipped`` and last changed before ``older_than_ms``
    (epoch ms). The row stays (its dedup key keeps capture idempotent) with
    ``pruned_at_epoch`` set; observations and their links are untouched. Pending and
    processing events are never pruned. Returns how many events were pruned.
    """
    # An UPDATE that shrinks rows leaves their b-tree pages nearly empty (SQLite does not
    # merge them: measured 93% unused), so the rows are deleted and inserted again with
    # the same ids and an empty payload; their links are saved and put back (the delete
    # cascades to them). All of it in the caller's transaction.
    conn.execute("DROP TABLE IF EXISTS temp.prune_ids")
    conn.execute(
        "CREATE TEMP TABLE prune_ids AS SELECT id FROM events WHERE status IN "
        "('done', 'skipped') AND pruned_at_epoch IS NULL AND updated_at_epoch < ? LIMIT ?",
        (older_than_ms, limit))
    pruned = integer(conn.execute("SELECT count(*) FROM temp.prune_ids").fetchall()[0][0])
    if pruned:
        conn.execute(f"CREATE TEMP TABLE prune_rows AS SELECT {_KEPT} FROM events "
                     "WHERE id IN (SELECT id FROM temp.prune_ids)")
        conn.execute("CREATE TEMP TABLE prune_links AS SELECT * FROM observation_sources "
                     "WHERE event_id IN (SELECT id FROM temp.prune_ids)")
        conn.execute("DELETE FROM events WHERE id IN (SELECT id FROM temp.prune_ids)")
        conn.execute(f"INSERT INTO events ({_KEPT}, payload, pruned_at_epoch) "
                     f"SELECT {_KEPT}, '{{}}', ? FROM temp.prune_rows ORDER BY id", (now_ms(),))
        conn.execute("INSERT INTO observation_sources SELECT * FROM temp.prune_links")
        conn.execute("DROP TABLE temp.prune_rows")
        conn.execute("DROP TABLE temp.prune_links")
    conn.execute("DROP TABLE temp.prune_ids")
    if pruned:
        vacuum_step(conn, vacuum_pages)
    return pruned


def vacuum_step(conn: apsw.Connection, pages: int = 2000) -> int:
    """``PRAGMA incremental_vacuum(pages)``; returns the free pages left.

    A no-op on a database made before schema 2 (``auto_vacuum=NONE``): there the free
    pages are reused by new rows, and a manual ``VACUUM`` returns them to the disk.
    """
    conn.execute(f"PRAGMA incremental_vacuum({int(pages)})").fetchall()
    return integer(conn.execute("PRAGMA freelist_count").fetchall()[0][0])


def set_observer_health(
    conn: apsw.Connection, session_id: str, failures: int, error: str | None,
) -> bool:
    """Record ``failures`` in a row (0 = healthy) and the last error of a session."""
    conn.execute(
        "UPDATE sessions SET observer_failures = ?, observer_error = ? WHERE id = ?",
        (int(failures), error, session_id),
    )
    return conn.changes() > 0


def observer_health(
    conn: apsw.Connection, *, threshold: int, project: str | None = None,
) -> tuple[str, int, str] | None:
    """The latest session (of ``project``) with ``threshold``+ failures in a row, or None.

    Returns ``(session_id, failures, last error)``.
    """
    where = "observer_failures >= ?" + (" AND project = ?" if project else "")
    params: tuple[object, ...] = (threshold, project) if project else (threshold,)
    row = conn.execute(
        f"SELECT id, observer_failures, coalesce(observer_error, '') FROM sessions "
        f"WHERE {where} ORDER BY started_at_epoch DESC LIMIT 1", params,
    ).fetchall()
    return (str(row[0][0]), integer(row[0][1]), str(row[0][2])) if row else None


def session_events(conn: apsw.Connection, session_id: str, *, limit: int = 2000) -> list[Event]:
    """A session's newest ``limit`` events, oldest first (the Stop summary reads them).

    The newest, not the first: a summary is about how the session ended (Claude's last
    answer, the latest test run, the last files changed); its request comes from the
    prompts, which are read apart. A session of 2,000 tool events otherwise lost its end.
    """
    return reads._all(conn, Event, "WHERE id IN (SELECT id FROM events WHERE session_id = ? "
                      "ORDER BY id DESC LIMIT ?) ORDER BY id", (session_id, limit))


def pending_events_after(conn: apsw.Connection, session_id: str, after: int,
                         limit: int = 50) -> list[Event]:
    """The session's pending events after id ``after``, oldest first (what its observer
    takes next)."""
    return reads._all(conn, Event, "WHERE session_id = ? AND status = 'pending' AND id > ? "
                      "ORDER BY id LIMIT ?", (session_id, after, limit))


def processing_event_ids(conn: apsw.Connection, session_id: str) -> list[int]:
    """The session's events marked ``processing``: an observer stopped while it had them
    (its new run puts them back in the queue)."""
    rows = conn.execute("SELECT id FROM events WHERE session_id = ? AND status = 'processing'",
                        (session_id,)).fetchall()
    return [integer(r[0]) for r in rows]


def prompt_without_stop(conn: apsw.Connection, session_id: str) -> bool:
    """Whether the session has a prompt with no Stop after it: a turn interrupted (Esc,
    then /exit) or cut short, whose summary its SessionEnd must make instead."""
    return bool(conn.execute(
        "SELECT EXISTS (SELECT 1 FROM events AS p WHERE p.session_id = ? "
        "AND p.event_name = 'UserPromptSubmit' AND NOT EXISTS (SELECT 1 FROM events AS s "
        "WHERE s.session_id = p.session_id AND s.event_name = 'Stop' AND s.id > p.id))",
        (session_id,)).fetchall()[0][0])


def health_line(conn: apsw.Connection, project: str | None = None, *,
                threshold: int = FAILURE_THRESHOLD) -> str | None:
    """The one-line warning for SessionStart context, or None when the observer is fine."""
    found = observer_health(conn, threshold=threshold, project=project)
    if found is None:
        return None
    session_id, failures, error = found
    return (f"memlite: the AI observer failed {failures} times in a row in session "
            f"{session_id[:8]} ({error[:160] or 'unknown error'}); its events are kept and "
            "observed by rules meanwhile. Run `memlite doctor`.")
