"""Migrations: applied from blank, each one atomic with its record, never partly."""

from __future__ import annotations

import apsw
import pytest

from memlite import storage
from memlite.errors import MigrationError, SchemaTooNewError
from memlite.storage.migrations import MIGRATIONS, Migration, latest_version, migrate, migration

EXPECTED_TABLES = {
    "audit_log", "events", "meta", "observations", "observations_fts", "prompts_fts",
    "schema_migrations", "sessions", "summaries", "summaries_fts", "user_prompts",
}


def names(conn, kind: str) -> set[str]:
    rows = conn.execute("SELECT name FROM sqlite_schema WHERE type = ?", (kind,)).fetchall()
    return {name for (name,) in rows}


@pytest.fixture
def blank(data_dir):
    """A raw connection on an empty file: nothing migrated yet."""
    data_dir.mkdir()
    conn = apsw.Connection(str(data_dir / "memlite.db"))
    yield conn
    conn.close()


def boom(conn: apsw.Connection) -> None:
    conn.execute("CREATE TABLE half_done (x)")
    conn.execute("INSERT INTO half_done VALUES (1)")
    raise RuntimeError("disk on fire")


def test_from_blank_applies_every_migration_with_its_record(blank):
    assert migrate(blank) == [m.version for m in MIGRATIONS]
    assert storage.schema_version(blank) == latest_version() == len(MIGRATIONS)
    rows = blank.execute("SELECT version, name FROM schema_migrations ORDER BY version")
    assert [tuple(r) for r in rows] == [(m.version, m.name) for m in MIGRATIONS]
    assert EXPECTED_TABLES <= names(blank, "table")
    assert "observations_fts_source" in names(blank, "view")


def test_migrating_a_current_database_does_nothing(blank):
    migrate(blank)
    assert migrate(blank) == []
    assert blank.execute("SELECT count(*) FROM schema_migrations").fetchall() == [
        (len(MIGRATIONS),)]


def test_a_failing_first_migration_leaves_a_blank_database(blank):
    with pytest.raises(MigrationError, match="001_boom failed") as caught:
        migrate(blank, "test.db", [Migration(1, "boom", boom)])
    assert isinstance(caught.value.__cause__, RuntimeError)
    assert "rolled back" in str(caught.value)
    assert storage.schema_version(blank) == 0
    assert names(blank, "table") == set()  # not even schema_migrations
    assert not blank.in_transaction


def test_a_failing_later_migration_keeps_the_earlier_ones(blank):
    last, nxt = latest_version(), latest_version() + 1
    with pytest.raises(MigrationError, match=f"{nxt:03d}_boom"):
        migrate(blank, "test.db", [*MIGRATIONS, Migration(nxt, "boom", boom)])
    assert storage.schema_version(blank) == last
    assert "half_done" not in names(blank, "table")
    assert blank.execute("SELECT max(version) FROM schema_migrations").fetchall() == [(last,)]
    # Once fixed, the next start applies it.
    fixed = Migration(nxt, "fixed", lambda c: None)
    assert migrate(blank, "test.db", [*MIGRATIONS, fixed]) == [nxt]


def test_migrate_refuses_a_newer_database(blank):
    blank.execute("PRAGMA user_version = 999")
    with pytest.raises(SchemaTooNewError, match="schema version 999"):
        migrate(blank, "test.db")
    assert names(blank, "table") == set()


@pytest.fixture
def failing_registry():
    """The real registry with a failing next version appended for the test's duration."""
    MIGRATIONS.append(Migration(latest_version() + 1, "boom", boom))
    yield
    MIGRATIONS.pop()


def test_opening_runs_a_failing_migration_atomically(data_dir, failing_registry):
    with pytest.raises(MigrationError, match=f"{latest_version():03d}_boom"):
        storage.connect(data_dir)
    conn = apsw.Connection(str(data_dir / "memlite.db"))
    try:
        assert storage.schema_version(conn) == latest_version() - 1
        assert "half_done" not in names(conn, "table")
    finally:
        conn.close()


def test_registry_names_are_checked():
    def wrong_name(conn):  # pragma: no cover - never applied
        pass

    def m009_out_of_order(conn):  # pragma: no cover - never applied
        pass

    before = list(MIGRATIONS)
    with pytest.raises(ValueError, match="mNNN_name"):
        migration(wrong_name)
    with pytest.raises(ValueError, match="expected"):
        migration(m009_out_of_order)
    assert MIGRATIONS == before


def test_m004_lets_a_session_be_failed_keeping_every_row_of_version_3(blank):
    blank.execute("PRAGMA foreign_keys = ON")
    assert migrate(blank, "v3.db", MIGRATIONS[:3]) == [1, 2, 3]
    blank.execute("INSERT INTO sessions (id, status, started_at, started_at_epoch) "
                  "VALUES ('s1', 'completed', 't', 1)")
    blank.execute("INSERT INTO observations (session_id, project, type, title, backend, "
                  "content_hash, created_at, created_at_epoch) "
                  "VALUES ('s1', '/p', 'change', 'kept', 'ai', 'h1', 't', 1)")
    with pytest.raises(apsw.ConstraintError):  # version 3 refuses it
        blank.execute("INSERT INTO sessions (id, status, started_at, started_at_epoch) "
                      "VALUES ('f0', 'failed', 't', 1)")
    assert migrate(blank, "v3.db", MIGRATIONS[:4]) == [4]
    blank.execute("INSERT INTO sessions (id, status, started_at, started_at_epoch) "
                  "VALUES ('f1', 'failed', 't', 1)")
    with pytest.raises(apsw.ConstraintError):
        blank.execute("UPDATE sessions SET status = 'bogus' WHERE id = 'f1'")
    # nothing cascaded away, the full-text index still answers, the file is sound
    assert blank.execute("SELECT title FROM observations").fetchall() == [("kept",)]
    assert blank.execute("SELECT rowid FROM observations_fts WHERE observations_fts "
                         "MATCH 'kept'").fetchall() == [(1,)]
    assert blank.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    other = apsw.Connection(blank.filename)  # a new connection reads the widened schema
    other.execute("INSERT INTO sessions (id, status, started_at, started_at_epoch) "
                  "VALUES ('f2', 'failed', 't', 1)")
    other.close()
