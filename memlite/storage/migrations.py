"""Schema migrations: numbered functions, each applied in one transaction with its record.

A migration is a plain function ``mNNN_name(conn)`` registered with ``@migration``. The
runner applies the missing ones in order; each runs inside its own ``BEGIN IMMEDIATE``
transaction together with its row in ``schema_migrations`` and the new
``PRAGMA user_version``, so after a crash or an error a database is always exactly at one
version, never between two. ``user_version`` is the source of truth (it lives in the file
header and is cheap to read before touching anything); ``schema_migrations`` is the
human-readable history.

Rules for writing one:

* Never edit a migration that has been released; add a new one.
* Do not commit, roll back or change ``journal_mode`` inside it (the runner owns the
  transaction); DDL is transactional in SQLite, so a failure undoes everything.
* Test it from a blank database and from every released schema (``tests/storage``).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from pathlib import Path

import apsw
import attrs

from memlite.errors import MigrationError, SchemaTooNewError
from memlite.storage import schema
from memlite.storage.sqlvalue import integer, text_or_none
from memlite.storage.timestamps import now_ms, to_iso

__all__ = [
    "MIGRATIONS",
    "Migration",
    "check_not_too_new",
    "latest_version",
    "migrate",
    "migration",
    "schema_version",
]

log = logging.getLogger(__name__)

_NAME = re.compile(r"^m(\d{3})_(\w+)$")


@attrs.frozen
class Migration:
    version: int
    name: str
    apply: Callable[[apsw.Connection], None]


MIGRATIONS: list[Migration] = []


def migration(fn: Callable[[apsw.Connection], None]) -> Callable[[apsw.Connection], None]:
    """Register ``fn`` (named ``mNNN_name``) as the migration to version NNN."""
    match = _NAME.match(fn.__name__)
    if match is None:
        raise ValueError(f"migration {fn.__name__!r} must be named mNNN_name")
    version = int(match.group(1))
    expected = len(MIGRATIONS) + 1
    if version != expected:
        raise ValueError(f"migration {fn.__name__} is version {version}, expected {expected}")
    MIGRATIONS.append(Migration(version=version, name=match.group(2), apply=fn))
    return fn


def latest_version(migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """The version a database has after every migration in ``migrations``."""
    return migrations[-1].version if migrations else 0


def schema_version(conn: apsw.Connection) -> int:
    """The database's ``PRAGMA user_version`` (0 for a blank database)."""
    return integer(conn.execute("PRAGMA user_version").fetchall()[0][0])


def check_not_too_new(
    conn: apsw.Connection, path: Path | str, migrations: Sequence[Migration] = MIGRATIONS
) -> int:
    """Return the schema version, or raise if a newer memlite wrote this database.

    Raises:
        SchemaTooNewError: the version is above the latest this memlite knows.
    """
    version = schema_version(conn)
    latest = latest_version(migrations)
    if version > latest:
        raise SchemaTooNewError(
            f"{path} was written by a newer memlite (schema version {version}; this memlite "
            f"knows up to {latest}). Upgrade memlite to use it; the file was not changed."
        )
    return version


def migrate(
    conn: apsw.Connection,
    path: Path | str = "<database>",
    migrations: Sequence[Migration] = MIGRATIONS,
) -> list[int]:
    """Apply every migration the database lacks, each in its own transaction.

    Args:
        conn: a connection with no transaction open.
        path: the file, for error messages.
        migrations: the registry (tests pass their own to inject failures).

    Returns:
        The versions applied, in order (empty when already current).

    Raises:
        SchemaTooNewError: the database is newer than ``migrations``; nothing is touched.
        MigrationError: a migration failed; it was rolled back, the earlier ones stay.
    """
    applied: list[int] = []
    current = check_not_too_new(conn, path, migrations)
    for step in migrations:
        if step.version <= current:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL"
                ") STRICT"
            )
            step.apply(conn)
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (step.version, step.name, to_iso(now_ms())),
            )
            # PRAGMA takes no bound parameters; the version is an int we control.
            conn.execute(f"PRAGMA user_version = {int(step.version)}")
            conn.execute("COMMIT")
        except BaseException as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            if not isinstance(exc, Exception):
                raise
            raise MigrationError(
                f"migration {step.version:03d}_{step.name} failed on {path} and was rolled "
                f"back (the database stays at version {current}): {exc}"
            ) from exc
        log.info("applied migration %03d_%s to %s", step.version, step.name, path)
        applied.append(step.version)
        current = step.version
    return applied


@migration
def m001_init(conn: apsw.Connection) -> None:
    """Sessions, prompts, the event queue, observations, summaries, audit, FTS5."""
    conn.execute(schema.M001_INIT)


@migration
def m002_observer(conn: apsw.Connection) -> None:
    """Observation sources (one store per event and backend kind), pruning, health."""
    conn.execute(schema.M002_OBSERVER)


@migration
def m003_search(conn: apsw.Connection) -> None:
    """An index for searches within one project (``memlite.storage.search``)."""
    conn.execute(schema.M003_SEARCH)


@migration
def m004_session_failed(conn: apsw.Connection) -> None:
    """``sessions.status`` may be ``failed`` (imported from claude-mem).

    SQLite cannot alter a CHECK constraint, and rebuilding ``sessions`` inside this
    transaction would cascade-delete its children (foreign keys cannot be turned off in
    a transaction). A constraint that only widens may instead be edited in
    ``sqlite_schema`` (SQLite's documented procedure in "Making Other Kinds Of Table
    Schema Changes"): bump ``schema_version`` so every connection re-reads the schema,
    then check the result.
    """
    [(stored,)] = conn.execute(
        "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'sessions'").fetchall()
    sql = text_or_none(stored) or ""
    if schema.M004_OLD_STATUS not in sql:
        raise MigrationError("sessions.status has an unexpected CHECK constraint")
    version = integer(conn.execute("PRAGMA schema_version").fetchall()[0][0])
    conn.execute("PRAGMA writable_schema = ON")
    try:
        conn.execute("UPDATE sqlite_schema SET sql = ? WHERE type = 'table' AND name = 'sessions'",
                     (sql.replace(schema.M004_OLD_STATUS, schema.M004_STATUS),))
        conn.execute(f"PRAGMA schema_version = {version + 1}")
    finally:
        conn.execute("PRAGMA writable_schema = OFF")
    problems = conn.execute("PRAGMA quick_check").fetchall()
    if problems != [("ok",)]:
        raise MigrationError(f"sessions after widening its status: {problems[:3]}")


@migration
def m005_relink_supersession(conn: apsw.Connection) -> None:
    """Supersession links for observations stored before their rules existed (the topic
    rule of round 5, the stated-change rule of round 6): schedules the insert-time rule's
    replay in insert order, never changing a link already there, which the storage actor
    then runs in the background in short committed chunks (``memlite.storage.relink``:
    minutes at 100,000 observations, longer than a starter waits for a worker). A blank database has
    nothing to replay. A later change of the rules that should reach existing databases
    adds another migration calling ``relink.schedule``."""
    from memlite.storage.relink import schedule

    schedule(conn)


@migration
def m006_superseded_ids(conn: apsw.Connection) -> None:
    """An index of the superseded observations' ids (``schema.M006_SUPERSEDED_IDS``)."""
    conn.execute(schema.M006_SUPERSEDED_IDS)
