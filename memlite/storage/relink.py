"""Supersession for observations stored before its rules existed: a replay, once per database.

Why: ``memlite.storage.topics`` (same-topic decisions and fixes) and
``memlite.storage.changes`` ("switched X from A to B" replaces what chose A) link a newer
observation to the older one it replaces, but only when the newer one is stored. A
database written by an older memlite never got those links, so its users kept being
handed the decision they had already reversed. Migration 5 schedules this replay and the
storage actor runs it in the background once the worker serves (below); ``memlite
import``, which writes its rows without the insert path's rules, schedules one over the
rows it imported and runs it before it returns.

What it does: the insert-time rule (``topics.record_supersession``, which runs the change
rule too: its own code, called, not copied) is run for every observation stored before
the migration, in insert order (id order), each time against the database *as it was
when that observation was stored*:

* only the observations stored before it exist (the later ones are not there yet);
* an older one counts as live unless it was linked by then: by a link the replay made,
  or by a link already in the database made at or before this insert (its
  ``superseded_by`` names this observation or an older one: the AI observer's
  ``supersedes``, a rule of the memlite that wrote it);
* a link already stored on the observation itself (stored late, linked under a newer
  one) holds from its own insert on, as it did then.

That view is a temporary table named ``observations`` on this connection (SQLite resolves
an unqualified name to the ``temp`` schema first), filled one observation at a time, so
the rule's own SQL runs unchanged against it; the links it makes there are then written
to the real table. The result is the links an insert-time run would have made (tested
against a database written with the rules on), with one exception by design:

* **a link already stored is never changed, and none is ever removed**: only rows whose
  ``superseded_by`` is still NULL are linked. A link made by hand, by the AI observer or
  by the older rules stays as it is, and nothing hidden is shown again. (memlite has no
  manual supersede or unsupersede, in the dashboard or the API; one that clears a link
  would have to record that, or a later replay could hide the row again. Today the
  replay runs once, scheduled by the migration, so nothing can.)

Why not inside the migration's one transaction, nor before the worker serves: it costs
the rule's own work per observation (a look at up to 500 live observations of the project
for each decision, feature, change, refactor or fix), ~2 ms at 100,000 observations in one
project (``BENCHMARKS.md`` "Supersession backfill": minutes in all), and a worker is ready
only after its database is migrated: a starter waits ``spawn.READY_TIMEOUT_SECONDS``
(20 s) and then kills it. So the migration only schedules the replay, and the storage
actor runs it in the background once the worker serves (``replay_in_thread`` on a writer
connection of its own, in a thread): each chunk takes the write lock (``BEGIN
IMMEDIATE``) for at most ``CHUNK_SECONDS`` and commits with its position in ``meta``
(``KEY``), then leaves the lock to the storage actor for ``PAUSE_SECONDS``; a hook's
write waits at most one chunk. A stopped worker keeps what it did and the next start goes
on from there (the temporary table is rebuilt from the stored links up to that position).
Observations stored meanwhile are linked by the insert-time rules as usual; the replay
only links rows still unlinked, so the two never undo each other. ``memlite import`` runs
the replay of what it imported before it returns (``resume``, same chunks).

Search needs nothing more: ``superseded_by`` is read from ``observations`` at query time
(the full-text tables, the vector codes and the in-memory vector index hold no
supersession state; the full-text update trigger does not fire on this column).

A replay that fails (a bug in a rule on some odd row) is rolled back to its last chunk,
logged, and retried at the next start; the database stays usable meanwhile.

No command of its own (no ``memlite relink``, no ``doctor`` line): the replay needs no
one to start it, goes on by itself after an interrupted start, and says in the worker's
log when it starts, every 10 s, and when it is done; run again it would find the same
links and change nothing. A rule change meant for existing databases is a new migration
calling ``schedule``.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

import apsw
import attrs

from memlite.storage.sqlvalue import integer, integer_or_none, text_or_none
from memlite.storage.topics import record_supersession

__all__ = ["CHUNK_SECONDS", "KEY", "PAUSE_SECONDS", "Relinked", "pending", "replay_in_thread",
           "resume", "schedule"]

log = logging.getLogger(__name__)

KEY = "supersession_replay"
"""``meta`` row of a scheduled replay: ``{"done": last id replayed, "upto": last id}``."""
CHUNK_SECONDS = 0.1
"""A replay commits its progress this often (the write lock is held that long at most:
what a hook's write may wait for while a replay runs beside the storage actor)."""
PAUSE_SECONDS = 0.1
"""Between two chunks of a replay beside the storage actor, the write lock is left free
this long (the replay then uses about half a CPU until it is done)."""
_SHADOW = "temp.observations"

Rule = Callable[[apsw.Connection, int], list[int]]


@attrs.frozen
class Relinked:
    """What a replay did: observations replayed, links written, links the replay would
    have made but left alone (the row was already linked otherwise), seconds."""

    observations: int
    linked: int
    kept: int
    seconds: float


def schedule(conn: apsw.Connection, *, after: int = 0) -> None:
    """Schedule a replay over the observations stored after id ``after`` (all of them
    by default; an import passes the highest id it found), in the caller's transaction.
    One already scheduled is extended, not restarted. Nothing to do without any."""
    [(top_value,)] = conn.execute("SELECT max(id) FROM main.observations").fetchall()
    top = integer_or_none(top_value)
    if top is None or top <= after:
        return
    state = pending(conn)
    done = after if state is None else min(state[0], after)
    conn.execute("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) "
                 "DO UPDATE SET value = excluded.value",
                 (KEY, json.dumps({"done": done, "upto": top})))


def pending(conn: apsw.Connection) -> tuple[int, int] | None:
    """(last id replayed, last id to replay) of a scheduled replay, or None."""
    rows = conn.execute("SELECT value FROM meta WHERE key = ?", (KEY,)).fetchall()
    if not rows:
        return None
    state = json.loads(text_or_none(rows[0][0]) or "{}")
    return int(state["done"]), int(state["upto"])


def resume(conn: apsw.Connection, *, rule: Rule | None = None,
           chunk_seconds: float = CHUNK_SECONDS, pause_seconds: float = 0.0,
           stop: Callable[[], bool] = lambda: False) -> Relinked | None:
    """Run (or go on with) a scheduled replay, one ``BEGIN IMMEDIATE`` transaction every
    ``chunk_seconds`` with ``pause_seconds`` between them; None when none is scheduled, it
    failed (logged; retried at the next call) or ``stop()`` said to stop (checked between
    observations; what is done is committed). ``conn`` is a writer with no transaction
    open, used by this call alone. ``rule`` defaults to the insert-time rule."""
    rule = record_supersession if rule is None else rule
    state = pending(conn)
    if state is None:
        return None
    done, upto = state
    started = said = time.monotonic()
    log.info("replaying supersession over observations %d..%d (once, after an upgrade)",
             done + 1, upto)
    linked = kept = count = 0
    committed = done
    try:
        copy = _shadow(conn, done)
        ids = [integer(r[0]) for r in conn.execute(
            "SELECT id FROM main.observations WHERE id > ? AND id <= ? ORDER BY id DESC",
            (done, upto)).fetchall()]  # popped from the end: oldest first
        while ids and not stop():
            chunk_end = time.monotonic() + chunk_seconds
            conn.execute("BEGIN IMMEDIATE")  # this chunk and its position, together
            try:
                in_chunk = 0
                while ids and (time.monotonic() < chunk_end or not in_chunk) and not (
                        in_chunk and stop()):
                    oid = ids.pop()
                    in_chunk += 1
                    made, left = _replay_one(conn, copy, oid, rule)
                    linked, kept, count, done = linked + made, kept + left, count + 1, oid
                if ids:
                    conn.execute("UPDATE meta SET value = ? WHERE key = ?",
                                 (json.dumps({"done": done, "upto": upto}), KEY))
                else:
                    conn.execute("DELETE FROM meta WHERE key = ?", (KEY,))
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            committed = done
            if time.monotonic() >= said + 10:
                said = time.monotonic()
                log.info("supersession replay: %d of %d observations, %d links so far",
                         count, count + len(ids), linked)
            if ids and pause_seconds > 0:
                time.sleep(pause_seconds)
    except Exception:
        log.exception("supersession replay failed; its links up to observation %d are "
                      "stored, the rest is retried at the next start", committed)
        return None
    finally:
        conn.execute(f"DROP TABLE IF EXISTS {_SHADOW}")
    if ids:
        log.info("supersession replay stopped at observation %d (%d links made); it goes "
                 "on at the next start", committed, linked)
        return None
    result = Relinked(count, linked, kept, round(time.monotonic() - started, 3))
    log.info("supersession replayed over %d observations: %d links made, %d existing kept "
             "(%.1f s)", result.observations, result.linked, result.kept, result.seconds)
    return result


def replay_in_thread(location: Path | str, stop: threading.Event, *,
                     rule: Rule | None = None) -> Relinked | None:
    """The storage actor's background replay (run in a thread): a scheduled replay on a
    writer connection of its own (its temporary table must not shadow ``observations``
    on the actor's connection), in short chunks that leave the write lock to the actor,
    until done or ``stop`` is set. Returns at once when none is scheduled."""
    from memlite.storage.db import connect  # db imports this module's neighbours

    conn = connect(location)
    try:
        if pending(conn) is None:
            return None
        return resume(conn, rule=rule, pause_seconds=PAUSE_SECONDS, stop=stop.is_set)
    finally:
        conn.close()


def _shadow(conn: apsw.Connection, done: int) -> str:
    """Make the temporary ``observations`` table as of just after observation ``done``;
    returns the statement that adds one more observation to it (as a live row)."""
    columns = [text_or_none(row[1]) or "" for row in
               conn.execute("PRAGMA main.table_info(observations)").fetchall()]
    if "id" not in columns or "superseded_by" not in columns:
        raise ValueError("observations has no id or superseded_by column")
    others = [c for c in columns if c != "id"]
    listed = ", ".join(others)
    conn.execute(f"DROP TABLE IF EXISTS {_SHADOW}")
    conn.execute(f"CREATE TEMP TABLE observations (id INTEGER PRIMARY KEY, {listed})")
    conn.execute("CREATE INDEX temp.observations_live ON observations "
                 "(project, superseded_by, created_at_epoch)")
    conn.execute("CREATE INDEX temp.observations_by ON observations (superseded_by)")
    # the topic rule looks at one type: 4,000 observations at 100k, 6.5-7.0 -> 4.6-6.4 s
    conn.execute("CREATE INDEX temp.observations_typed ON observations "
                 "(project, type, superseded_by, created_at_epoch)")
    values = ", ".join(
        "CASE WHEN superseded_by <= :done THEN superseded_by END" if c == "superseded_by"
        else c for c in others)
    conn.execute(f"INSERT INTO {_SHADOW} (id, {listed}) SELECT id, {values} "
                 "FROM main.observations WHERE id <= :done", {"done": done})
    return (f"INSERT INTO {_SHADOW} (id, {listed}) SELECT id, "
            + ", ".join("NULL" if c == "superseded_by" else c for c in others)
            + " FROM main.observations WHERE id = ?")


def _replay_one(conn: apsw.Connection, copy: str, oid: int, rule: Rule) -> tuple[int, int]:
    """Store observation ``oid`` in the shadow as its insert did and run ``rule`` on it;
    write the links it makes to rows of the real table not linked yet. Returns (links
    written, links left alone)."""
    conn.execute(copy, (oid,))
    # older rows linked to this one when it was stored (the AI's supersedes)
    conn.execute(f"UPDATE {_SHADOW} SET superseded_by = ? WHERE superseded_by IS NULL "
                 "AND id IN (SELECT id FROM main.observations WHERE superseded_by = ?)",
                 (oid, oid))
    made = left = 0
    for target in rule(conn, oid):
        [(link_value,)] = conn.execute(
            f"SELECT superseded_by FROM {_SHADOW} WHERE id = ?", (target,)).fetchall()
        link = integer_or_none(link_value)
        if link is None:
            continue
        conn.execute("UPDATE main.observations SET superseded_by = ? "
                     "WHERE id = ? AND superseded_by IS NULL", (link, target))
        if conn.changes():
            made += 1
        elif _stored(conn, target) != link:
            left += 1
    stored = _stored(conn, oid)
    if stored is not None and stored < oid:  # linked under an older row at its insert
        conn.execute(f"UPDATE {_SHADOW} SET superseded_by = ? WHERE id = ? "
                     "AND superseded_by IS NULL", (stored, oid))
    return made, left



def _stored(conn: apsw.Connection, oid: int) -> int | None:
    rows = conn.execute("SELECT superseded_by FROM main.observations WHERE id = ?",
                        (oid,)).fetchall()
    return integer_or_none(rows[0][0]) if rows else None
