"""Opening memlite.db: what is refused, and that a refused file is never modified."""

from __future__ import annotations

import stat

import apsw
import pytest

from memlite import storage
from memlite.errors import DataDirError, NotADatabaseError, SchemaTooNewError, StorageError
from memlite.storage.migrations import latest_version


def make_too_new(data_dir):
    conn = storage.connect(data_dir)
    conn.execute(f"PRAGMA user_version = {latest_version() + 1}")
    conn.close()
    return data_dir / "memlite.db"


def test_db_path_accepts_a_directory_or_a_db_file(tmp_path):
    assert storage.db_path(tmp_path) == tmp_path / "memlite.db"
    assert storage.db_path(tmp_path / "other.db") == tmp_path / "other.db"
    assert storage.db_path(str(tmp_path / "data")) == tmp_path / "data" / "memlite.db"


def test_new_database_is_private_wal_and_current(data_dir, db):
    path = data_dir / "memlite.db"
    assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert db.execute("PRAGMA journal_mode").fetchall() == [("wal",)]
    assert db.execute("PRAGMA synchronous").fetchall() == [(1,)]  # NORMAL
    assert db.execute("PRAGMA foreign_keys").fetchall() == [(1,)]
    assert db.execute("SELECT vec_version()").fetchall() == [("v0.1.9",)]
    assert storage.schema_version(db) == latest_version()


def test_double_quoted_strings_are_errors_not_literals(db):
    with pytest.raises(apsw.SQLError):
        db.execute('SELECT "no_such_column" FROM sessions')


def test_not_sqlite_is_refused_and_untouched(data_dir, file_hash):
    data_dir.mkdir()
    path = data_dir / "memlite.db"
    path.write_bytes(b"my shopping list, not a database\n" * 100)
    before = file_hash(path)
    with pytest.raises(NotADatabaseError) as caught:
        storage.connect(data_dir)
    assert str(caught.value) == (
        f"{path} is not a memlite database (not SQLite). Move it aside or set "
        "MEMLITE_DATA_DIR to another directory."
    )
    assert file_hash(path) == before
    assert sorted(p.name for p in data_dir.iterdir()) == ["memlite.db"]  # no -wal, no -shm


def test_sqlite_header_with_garbage_after_it_is_refused_and_untouched(data_dir, file_hash):
    data_dir.mkdir()
    path = data_dir / "memlite.db"
    path.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)
    before = file_hash(path)
    with pytest.raises(NotADatabaseError, match="not a memlite database"):
        storage.connect(data_dir)
    assert file_hash(path) == before


def test_a_directory_where_the_file_should_be_is_refused(data_dir):
    (data_dir / "memlite.db").mkdir(parents=True)
    with pytest.raises(NotADatabaseError):
        storage.connect(data_dir)


def test_empty_file_becomes_a_database(data_dir, file_hash):
    data_dir.mkdir()
    (data_dir / "memlite.db").touch()
    conn = storage.connect(data_dir)
    assert storage.schema_version(conn) == latest_version()
    conn.close()


def test_newer_schema_is_refused_and_untouched(data_dir, file_hash):
    path = make_too_new(data_dir)
    before = file_hash(path)
    for writer in (True, False):
        with pytest.raises(SchemaTooNewError) as caught:
            storage.connect(data_dir, writer=writer)
        assert str(path) in str(caught.value)
        assert "Upgrade memlite" in str(caught.value)
    assert file_hash(path) == before


async def test_newer_schema_is_refused_by_the_async_openers(data_dir, file_hash):
    path = make_too_new(data_dir)
    before = file_hash(path)
    with pytest.raises(SchemaTooNewError):
        async with storage.open_writer(data_dir):
            pass  # pragma: no cover
    with pytest.raises(SchemaTooNewError):
        async with storage.open_reader(data_dir):
            pass  # pragma: no cover
    assert file_hash(path) == before


def test_data_dir_under_a_regular_file_is_refused(tmp_path):
    # Tests run as root, which ignores permission bits; a file in the path is an honest
    # way to make the directory impossible to create.
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(DataDirError) as caught:
        storage.connect(blocker / "data")
    assert str(blocker / "data") in str(caught.value)
    assert blocker.read_text() == "not a directory"


def test_data_dir_that_is_a_file_is_refused(tmp_path):
    blocker = tmp_path / "data"
    blocker.write_text("x")
    with pytest.raises(DataDirError, match=str(blocker)):
        storage.connect(blocker)


def test_reader_needs_an_existing_current_database(data_dir):
    with pytest.raises(StorageError, match="Start the memlite worker"):
        storage.connect(data_dir, writer=False)
    assert not (data_dir / "memlite.db").exists()
    data_dir.mkdir()
    (data_dir / "memlite.db").touch()  # version 0: not migrated yet
    with pytest.raises(StorageError, match="schema version 0"):
        storage.connect(data_dir, writer=False)


def test_reader_cannot_write(data_dir, db):
    reader = storage.connect(data_dir, writer=False)
    try:
        with pytest.raises(apsw.ReadOnlyError):
            reader.execute("INSERT INTO meta (key, value) VALUES ('k', 'v')")
    finally:
        reader.close()


async def test_async_reader_sees_what_the_writer_committed(data_dir):
    async with storage.open_writer(data_dir) as writer, storage.open_reader(data_dir) as reader:
        await writer.async_run(
            storage.insert_event, writer, session_id="s", event_name="Stop", payload={}
        )
        assert await reader.async_run(storage.count_events, reader) == 1


async def test_a_closed_connection_has_no_thread_left(data_dir):
    """Closing returns once the connection's worker thread has ended: APSW's own close
    only queues its stop, and the thread was still alive right after most closes (the
    leak checks of the tests failed now and then on a loaded machine)."""
    import threading

    def db_threads() -> list[str]:
        return [t.name for t in threading.enumerate() if t.name.startswith("memlite-db-")]

    async with storage.open_writer(data_dir):
        pass
    for _ in range(20):
        async with storage.open_writer(data_dir), storage.open_reader(data_dir):
            assert sorted(db_threads()) == ["memlite-db-reader", "memlite-db-writer"]
        assert db_threads() == []


def test_durability_can_be_full(data_dir):
    conn = storage.connect(data_dir, synchronous="FULL")
    try:
        assert conn.execute("PRAGMA synchronous").fetchall() == [(2,)]
    finally:
        conn.close()
    with pytest.raises(ValueError, match="synchronous"):
        storage.connect(data_dir, synchronous="OFF")


def test_a_damaged_database_is_refused_naming_the_file(data_dir):
    conn = storage.connect(data_dir)
    with conn:
        for i in range(200):
            storage.insert_observation(conn, storage.NewObservation(
                session_id="s", project="/p", type="change", title=f"row {i}",
                narrative="x" * 500))
    conn.close()
    path = data_dir / "memlite.db"
    raw = path.read_bytes()
    path.write_bytes(raw[:4096] + b"\xff" * (len(raw) - 4096))  # header kept, pages smashed
    with pytest.raises(NotADatabaseError, match="is damaged") as caught:
        storage.connect(data_dir).close()
    assert str(path) in str(caught.value) and ".recover" in str(caught.value)


def test_another_connection_keeps_the_process_locks_so_an_outside_reader_keeps_the_wal(
        data_dir):
    """User trial, round 4: the worker's reader pool opened a connection while its writer
    was open; ``prepare_path`` read the file header with ``open()``/``close()``, and closing
    ANY descriptor of a file drops every POSIX lock the process holds on it (SQLite's "How
    To Corrupt" §2.2). Then an outside reader (``sqlite3``, a script) that closed found no
    other user, took the exclusive lock, checkpointed and DELETED the -wal and -shm the
    worker still used: every new reader connection failed with "disk I/O error" (the
    SessionStart context answered 500) and later writes went to an unlinked WAL."""
    import subprocess
    import sys

    writer = storage.connect(data_dir)
    writer.execute("CREATE TABLE trial(x INTEGER)")
    writer.execute("INSERT INTO trial VALUES (1)")
    reader = storage.connect(data_dir, writer=False)  # a second connection of this process
    assert reader.execute("SELECT count(*) FROM trial").fetchall() == [(1,)]
    wal = data_dir / "memlite.db-wal"
    assert wal.exists()
    # The standard library's sqlite3 stands for the `sqlite3` shell a user opens: SQLite
    # 3.40 (Debian's, as the trial's) deletes the files on close when it finds no lock.
    outside = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
               "c.execute('SELECT count(*) FROM sqlite_master').fetchall(); c.close()")
    subprocess.run([sys.executable, "-c", outside, str(data_dir / "memlite.db")],
                   check=True, timeout=60)
    assert wal.exists() and (data_dir / "memlite.db-shm").exists()
    writer.execute("INSERT INTO trial VALUES (2)")
    third = storage.connect(data_dir, writer=False)
    assert third.execute("SELECT count(*) FROM trial").fetchall() == [(2,)]
    for conn in (third, reader, writer):
        conn.close()
