"""Opening the database: checks first, then pragmas, sqlite-vec and migrations.

There is one database file, ``memlite.db`` in the data directory. Opening it goes in an
order chosen so that a file we must refuse is never modified:

1. The data directory is created (0700) and proved writable, else ``DataDirError``.
2. A non-empty file whose first 16 bytes are not ``SQLite format 3\\0`` is refused with
   ``NotADatabaseError`` before SQLite opens it (setting WAL would rewrite its header).
3. The schema version is read; a newer one than this memlite knows is refused with
   ``SchemaTooNewError`` before any pragma writes to the file.
4. Only then: ``journal_mode=WAL``, ``synchronous`` (NORMAL by default), migrations.

``synchronous=NORMAL`` in WAL mode means a commit survives a crash of memlite but the last
commits may be lost if the machine loses power; ``FULL`` fsyncs every commit (one per
group commit, so its cost is shared by the batch: see BENCHMARKS.md).

Every connection gets ``busy_timeout``, ``foreign_keys=ON``, double-quoted string literals
off (a typo'd column name must be an error, not a string) and sqlite-vec loaded.

The async side uses APSW's own Trio controller (``Connection.as_async``): each connection
owns one worker thread and ``await conn.async_run(fn, ...)`` runs a whole sync function in
it, so a batch of statements costs one thread hop. The writer belongs to the storage actor
(``memlite.actors.storage``); readers are separate, query-only connections that WAL lets
run while the writer writes.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import apsw
import apsw.aio
import sqlite_vec
import trio

from memlite.config import ensure_data_dir
from memlite.errors import NotADatabaseError, StorageError
from memlite.storage.migrations import check_not_too_new, latest_version, migrate

__all__ = [
    "BUSY_TIMEOUT_MS",
    "DB_FILENAME",
    "connect",
    "db_path",
    "open_reader",
    "open_writer",
    "prepare_path",
]

log = logging.getLogger(__name__)

DB_FILENAME = "memlite.db"
SQLITE_HEADER = b"SQLite format 3\x00"
# Long enough to ride out a checkpoint or an outside tool's short write; the storage actor
# is the only writer we run, so waiting longer would only hide a real problem.
BUSY_TIMEOUT_MS = 5_000
# Closing must not hang shutdown: a stuck close is logged and abandoned.
CLOSE_TIMEOUT_S = 5.0
SYNCHRONOUS = frozenset({"NORMAL", "FULL"})


def db_path(location: Path | str) -> Path:
    """The database file for ``location``: a ``*.db`` file path, or a data directory."""
    path = Path(location)
    if path.suffix == ".db" and not path.is_dir():
        return path
    return path / DB_FILENAME


def _not_a_database(path: Path) -> NotADatabaseError:
    return NotADatabaseError(
        f"{path} is not a memlite database (not SQLite). Move it aside or set "
        "MEMLITE_DATA_DIR to another directory."
    )


def prepare_path(location: Path | str, *, create: bool = True) -> Path:
    """Check (and create) the data directory and check the file, writing nothing to it.

    Args:
        location: a data directory or a ``*.db`` path.
        create: create the directory and an empty 0600 file when missing (the writer);
            a reader passes False and needs the file to exist.

    Returns:
        The database path.

    Raises:
        DataDirError: the directory cannot be created or written.
        NotADatabaseError: the file exists and is not SQLite.
        StorageError: the file is missing (``create=False``) or cannot be read.
    """
    path = db_path(location)
    if create:
        ensure_data_dir(path.parent)
    try:
        with path.open("rb") as f:
            header = f.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        if not create:
            raise StorageError(
                f"no memlite database at {path}. Start the memlite worker to create it."
            ) from None
        # Create it ourselves so it is private (0600) from the first byte; SQLite gives
        # its -wal and -shm files the same mode.
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        return path
    except IsADirectoryError:
        raise _not_a_database(path) from None
    except OSError as exc:
        raise StorageError(f"cannot read {path} ({exc.strerror}).") from None
    if header and header != SQLITE_HEADER:
        raise _not_a_database(path)
    return path


def _configure(
    conn: apsw.Connection, path: Path, *, writer: bool, synchronous: str = "NORMAL"
) -> int:
    """Set up a fresh connection (runs in the connection's thread). Returns the version."""
    conn.set_busy_timeout(BUSY_TIMEOUT_MS)
    conn.config(apsw.SQLITE_DBCONFIG_DQS_DML, 0)
    conn.config(apsw.SQLITE_DBCONFIG_DQS_DDL, 0)
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    conn.enable_load_extension(False)
    conn.execute("PRAGMA foreign_keys = ON")
    try:
        version = check_not_too_new(conn, path)
    except apsw.NotADBError:
        raise _not_a_database(path) from None
    if writer:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute(f"PRAGMA synchronous = {_check_synchronous(synchronous)}")
        migrate(conn, path)
        return latest_version()
    if version != latest_version():
        raise StorageError(
            f"{path} is at schema version {version}, this memlite needs {latest_version()}. "
            "Start the memlite worker once to migrate it."
        )
    conn.execute("PRAGMA query_only = ON")
    return version


def _check_synchronous(value: str) -> str:
    if value not in SYNCHRONOUS:
        raise ValueError(f"synchronous must be one of {sorted(SYNCHRONOUS)}, not {value!r}")
    return value


def _flags(writer: bool) -> int:
    flags = apsw.SQLITE_OPEN_READWRITE
    return flags | apsw.SQLITE_OPEN_CREATE if writer else flags


def connect(
    location: Path | str, *, writer: bool = True, synchronous: str = "NORMAL"
) -> apsw.Connection:
    """Open a synchronous connection (CLI tools, tests, benchmarks).

    Args:
        location: a data directory or a ``*.db`` path.
        writer: migrate and allow writes; False gives a query-only reader.
        synchronous: the writer's durability, ``"NORMAL"`` or ``"FULL"``.

    Raises:
        DataDirError, NotADatabaseError, SchemaTooNewError, MigrationError, StorageError.
    """
    _check_synchronous(synchronous)
    path = prepare_path(location, create=writer)
    try:
        conn = apsw.Connection(str(path), flags=_flags(writer))
    except apsw.Error as exc:
        raise StorageError(f"cannot open {path}: {exc}") from exc
    try:
        _configure(conn, path, writer=writer, synchronous=synchronous)
    except BaseException:
        conn.close()
        raise
    return conn


async def _aclose(conn: apsw.Connection, *, optimize: bool) -> None:
    # Shielded so a cancelled caller still stops the worker thread (it is not a daemon
    # thread: a leaked one would keep the process alive at exit).
    with trio.move_on_after(CLOSE_TIMEOUT_S, shield=True) as scope:
        if optimize:
            try:
                await conn.async_run(conn.execute, "PRAGMA optimize")
            except apsw.Error:
                log.warning("PRAGMA optimize failed on close", exc_info=True)
        await conn.aclose()
    if scope.cancelled_caught:
        log.error("database connection did not close within %.0f s", CLOSE_TIMEOUT_S)


async def _open_async(
    location: Path | str, *, writer: bool, synchronous: str = "NORMAL"
) -> apsw.Connection:
    _check_synchronous(synchronous)
    path = await trio.to_thread.run_sync(functools.partial(prepare_path, location, create=writer))
    role = "writer" if writer else "reader"
    controller = functools.partial(apsw.aio.Trio, thread_name=f"memlite-db-{role}")
    with apsw.aio.contextvar_set(apsw.async_controller, controller):
        try:
            conn = await apsw.Connection.as_async(str(path), _flags(writer))
        except apsw.Error as exc:
            raise StorageError(f"cannot open {path}: {exc}") from exc
    try:
        await conn.async_run(_configure, conn, path, writer=writer, synchronous=synchronous)
    except BaseException:
        await _aclose(conn, optimize=False)
        raise
    return conn


@asynccontextmanager
async def open_writer(
    location: Path | str, *, synchronous: str = "NORMAL"
) -> AsyncIterator[apsw.Connection]:
    """The one writer connection, migrated, in async mode; closed on exit.

    Only the storage actor should hold it. Use ``await conn.async_run(fn, conn, ...)``
    with a sync ``fn`` that does a whole unit of work. ``synchronous`` is ``"NORMAL"``
    (survives a crash of memlite) or ``"FULL"`` (also survives power loss).

    Raises:
        DataDirError, NotADatabaseError, SchemaTooNewError, MigrationError, StorageError.
    """
    conn = await _open_async(location, writer=True, synchronous=synchronous)
    try:
        yield conn
    finally:
        await _aclose(conn, optimize=True)


@asynccontextmanager
async def open_reader(location: Path | str) -> AsyncIterator[apsw.Connection]:
    """A query-only connection for search, context and the dashboard; closed on exit.

    The database must exist and be at the current schema (the worker migrates it). WAL
    lets it read a consistent snapshot while the storage actor writes.

    Raises:
        NotADatabaseError, SchemaTooNewError, StorageError.
    """
    conn = await _open_async(location, writer=False)
    try:
        yield conn
    finally:
        await _aclose(conn, optimize=False)
