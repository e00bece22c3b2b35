"""Opening the database: checks first, then pragmas, sqlite-vec and migrations.

There is one database file, ``memlite.db`` in the data directory. Opening it goes in an
order chosen so that a file we must refuse is never modified:

1. The data directory is created (0700) and proved writable, else ``DataDirError``.
2. A non-empty file whose first 16 bytes are not ``SQLite format 3\\0`` is refused with
   ``NotADatabaseError`` before SQLite opens it (setting WAL would rewrite its header).
   Only once per file and process (``_HEADER_CHECKED``): closing ANY descriptor of a
   file drops every POSIX lock the process holds on it, so re-reading the header while
   this process's connections are open would leave them unlocked, and an outside
   ``sqlite3`` that closed then would delete the -wal and -shm they still use (user
   trial, round 4: new reader connections failed with "disk I/O error").
3. The schema version is read; a newer one than this memlite knows is refused with
   ``SchemaTooNewError`` before any pragma writes to the file.
4. Only then: ``journal_mode=WAL``, ``synchronous`` (NORMAL by default), migrations.

``synchronous=NORMAL`` in WAL mode means a commit survives a crash of memlite but the last
commits may be lost if the machine loses power; ``FULL`` fsyncs every commit (one per
group commit, so its cost is shared by the batch: see BENCHMARKS.md).

Every connection gets ``busy_timeout``, ``foreign_keys=ON``, double-quoted string literals
off (a typo'd column name must be an error, not a string) and sqlite-vec loaded.

The storage actor's writer does not checkpoint in its commits: a ``WalCheckpointer`` copies
the WAL into the database file from a thread of its own, and the writer checkpoints itself
only when the WAL outgrows ``WAL_HARD_LIMIT_PAGES`` (see the class).

The async side uses APSW's own Trio controller (``Connection.as_async``): each connection
owns one worker thread and ``await conn.async_run(fn, ...)`` runs a whole sync function in
it, so a batch of statements costs one thread hop. The writer belongs to the storage actor
(``memlite.actors.storage``); readers are separate, query-only connections that WAL lets
run while the writer writes. Closing one returns once its thread has ended (``_Controller``:
APSW's close only queues the thread's stop).
"""

from __future__ import annotations

import functools
import logging
import os
import threading
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
from memlite.storage.sqlvalue import integer

__all__ = [
    "BUSY_TIMEOUT_MS",
    "DB_FILENAME",
    "WAL_CHECKPOINT_PAGES",
    "WAL_HARD_LIMIT_PAGES",
    "WAL_IDLE_CHECKPOINT_S",
    "WalCheckpointer",
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
# WAL pages written since the last request that make the writer ask for a background
# checkpoint (SQLite's own autocheckpoint default), the WAL size at which the writer
# checkpoints in its own thread after a commit (40 MB of 4 KiB pages), and the quiet
# time after which the rest of the WAL is checkpointed (``WalCheckpointer``).
READER_MMAP_FROM_BYTES = 64 * 1024 * 1024  # a reader of a file this large maps it (mmap)
READER_MMAP_BYTES = 1024 * 1024 * 1024  # address space; only touched pages become resident
WAL_CHECKPOINT_PAGES = 1_000
WAL_HARD_LIMIT_PAGES = 10_000
WAL_IDLE_CHECKPOINT_S = 1.0
# (st_dev, st_ino) of database files whose header this process has read and accepted
# (see the module docstring, step 2: the header is read once per file and process).
_HEADER_CHECKED: set[tuple[int, int]] = set()
_HEADER_LOCK = threading.Lock()


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
    if _header_checked(path):
        return path  # re-opening it to read the header would drop our connections' locks
    try:
        with path.open("rb") as f:
            header = f.read(len(SQLITE_HEADER))
            if not header or header == SQLITE_HEADER:
                _remember_header(os.fstat(f.fileno()))
    except FileNotFoundError:
        if not create:
            raise StorageError(
                f"no memlite database at {path}. Start the memlite worker to create it."
            ) from None
        # Create it ourselves so it is private (0600) from the first byte; SQLite gives
        # its -wal and -shm files the same mode.
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        try:
            _remember_header(os.fstat(fd))
        finally:
            os.close(fd)
        return path
    except IsADirectoryError:
        raise _not_a_database(path) from None
    except OSError as exc:
        raise StorageError(f"cannot read {path} ({exc.strerror}).") from None
    if header and header != SQLITE_HEADER:
        raise _not_a_database(path)
    return path


def _header_checked(path: Path) -> bool:
    """Whether this process already accepted the header of the file ``path`` names now
    (a file replaced since has another inode and is checked again)."""
    try:
        found = path.stat()
    except OSError:
        return False
    with _HEADER_LOCK:
        return (found.st_dev, found.st_ino) in _HEADER_CHECKED


def _remember_header(found: os.stat_result) -> None:
    with _HEADER_LOCK:
        _HEADER_CHECKED.add((found.st_dev, found.st_ino))


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
        return _check_and_prepare(conn, path, writer=writer, synchronous=synchronous)
    except apsw.NotADBError:
        raise _not_a_database(path) from None
    except apsw.CorruptError as exc:
        raise NotADatabaseError(
            f"{path} is damaged (SQLite: {exc}); memlite will not write to it. Move it "
            f"aside (e.g. mv {path} {path}.damaged) and start again: a new database is "
            "created; `sqlite3 <file> .recover` may save rows from the old one.") from None


def _check_and_prepare(conn: apsw.Connection, path: Path, *, writer: bool,
                       synchronous: str) -> int:
    version = check_not_too_new(conn, path)
    if writer:
        if version == 0 and _page_count(conn) == 0:
            # Only a brand-new file can take auto_vacuum without a full VACUUM; it must
            # come before the first page is written (journal_mode=WAL writes one). Older
            # databases keep auto_vacuum=NONE, where incremental_vacuum does nothing:
            # `VACUUM` once (worker stopped) after `PRAGMA auto_vacuum = INCREMENTAL`.
            conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
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
    _map_if_large(conn, path)
    return version


def _map_if_large(conn: apsw.Connection, path: Path) -> None:
    """Memory-map a large database for this reader. Why: a search at 100,000
    observations reads thousands of pages (FTS doclists, the rows it scores and shows),
    each a ``read()`` into SQLite's 2 MB cache when not mapped: ~1 ms of CPU per hybrid
    search (BENCHMARKS.md "Search index"). Small files gain nothing measurable, and
    mapped pages count in the resident size (as file pages the OS can drop)."""
    try:
        size = path.stat().st_size
    except OSError:
        return
    if size >= READER_MMAP_FROM_BYTES:
        conn.execute(f"PRAGMA mmap_size = {READER_MMAP_BYTES}")


def _page_count(conn: apsw.Connection) -> int:
    return integer(conn.execute("PRAGMA page_count").fetchall()[0][0])


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


class _Controller(apsw.aio.Trio):
    """APSW's Trio controller, which also tells when its worker thread has ended.

    APSW's ``aclose`` only queues the thread's stop and returns: the thread was often still
    alive right after (33 of 50 closes on a quiet machine), so "closed" did not mean "no
    thread left", and the leak checks of the tests (a ``memlite-db-*`` thread alive after
    a test) failed now and then on a loaded machine. ``_aclose`` waits on ``ended``.
    """

    def __init__(self, *, thread_name: str) -> None:
        self.ended = threading.Event()  # before the thread starts (in the base __init__)
        super().__init__(thread_name=thread_name)

    def worker_thread_run(self) -> None:
        try:
            super().worker_thread_run()  # type: ignore[no-untyped-call]
        finally:
            self.ended.set()


async def _aclose(conn: apsw.AsyncConnection, *, optimize: bool) -> None:
    # Shielded so a cancelled caller still stops the worker thread (it is not a daemon
    # thread: a leaked one would keep the process alive at exit).
    controller = conn.async_controller
    with trio.move_on_after(CLOSE_TIMEOUT_S, shield=True) as scope:
        if optimize:
            try:
                await conn.async_run(conn.execute, "PRAGMA optimize")
            except apsw.Error:
                log.warning("PRAGMA optimize failed on close", exc_info=True)
        await conn.aclose()
        if isinstance(controller, _Controller):
            # Bounded in real time (a thread wait: a mock clock must not skip it).
            ended = await trio.to_thread.run_sync(controller.ended.wait, CLOSE_TIMEOUT_S)
            if not ended:
                log.error("database thread still running %.0f s after its close",
                          CLOSE_TIMEOUT_S)
    if scope.cancelled_caught:
        log.error("database connection did not close within %.0f s", CLOSE_TIMEOUT_S)


async def _open_async(
    location: Path | str, *, writer: bool, synchronous: str = "NORMAL"
) -> apsw.AsyncConnection:
    _check_synchronous(synchronous)
    path = await trio.to_thread.run_sync(functools.partial(prepare_path, location, create=writer))
    role = "writer" if writer else "reader"
    controller = functools.partial(_Controller, thread_name=f"memlite-db-{role}")
    # apsw's stub types contextvar_set as returning a Token (true on Python 3.14+ only;
    # before, it returns a context manager) and the controller var too narrowly.
    with apsw.aio.contextvar_set(apsw.async_controller, controller):  # type: ignore[misc, attr-defined]
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
        # The async-mode Connection: apsw's stubs give it a class of its own
        # (AsyncConnection), but it is the Connection its callers pass to sync
        # functions in ``async_run``; they use ``async_run`` as a Connection attribute.
        yield conn  # type: ignore[misc]
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
        # The async-mode Connection: apsw's stubs give it a class of its own
        # (AsyncConnection), but it is the Connection its callers pass to sync
        # functions in ``async_run``; they use ``async_run`` as a Connection attribute.
        yield conn  # type: ignore[misc]
    finally:
        await _aclose(conn, optimize=False)


class WalCheckpointer:
    """Checkpoints the writer's WAL from a thread and connection of its own.

    SQLite's autocheckpoint runs inside the commit that takes the WAL past 1,000 pages:
    it copies the pages into the database file and fsyncs both files while every sender
    of that group commit waits (a few milliseconds; most of the writer's time under
    load, see BENCHMARKS.md). Instead, :meth:`install` replaces it on the writer
    connection with a WAL hook, and :meth:`after_commit` (the writer's thread, after each
    commit) wakes this object's thread every ``WAL_CHECKPOINT_PAGES`` new pages to run a
    ``PASSIVE`` checkpoint, which never blocks the writer or readers.

    A WAL starts over from its beginning (at the writer's next transaction) only once it
    has been copied entirely. The thread copies the rest after ``idle_seconds`` without a
    request, so after a burst the WAL is reused; under sustained writes a concurrent
    checkpoint never quite catches up, so once the WAL holds ``WAL_HARD_LIMIT_PAGES``
    the writer runs a ``PASSIVE`` checkpoint itself after its commit (little is left to
    copy by then). A checkpoint that fails is logged; the next one retries. Durability
    does not change: a checkpoint syncs the WAL before copying it, whichever connection
    runs it.

    Args:
        location: the data directory (or ``*.db`` path) of the writer.
        hard_limit_pages: WAL size at which the writer checkpoints itself.
        checkpoint_pages: new WAL pages between two background checkpoints.
        idle_seconds: quiet time after which the rest of the WAL is checkpointed.
    """

    def __init__(
        self,
        location: Path | str,
        *,
        hard_limit_pages: int = WAL_HARD_LIMIT_PAGES,
        checkpoint_pages: int = WAL_CHECKPOINT_PAGES,
        idle_seconds: float = WAL_IDLE_CHECKPOINT_S,
    ) -> None:
        self.path = db_path(location)
        self.hard_limit_pages = hard_limit_pages
        self.checkpoint_pages = checkpoint_pages
        self.idle_seconds = idle_seconds
        self.background_checkpoints = 0
        self.writer_checkpoints = 0
        self._pages = 0  # WAL pages after the writer's last commit (from the WAL hook)
        self._commits = 0  # commits seen by the WAL hook
        self._requested_at = 0
        self._wanted = threading.Event()
        self._stopping = False
        self._thread = threading.Thread(
            target=self._run, name="memlite-db-checkpointer", daemon=True
        )
        self._thread.start()

    def install(self, conn: apsw.Connection) -> None:
        """Take over checkpointing from ``conn``'s autocheckpoint (call in its thread)."""
        conn.set_wal_hook(self._wal_hook)

    def _wal_hook(self, conn: apsw.Connection, name: str, pages: int) -> int:
        self._pages = pages
        self._commits += 1
        return apsw.SQLITE_OK

    def after_commit(self, conn: apsw.Connection) -> None:
        """Request or run a checkpoint as the WAL grows (the writer's thread; never raises)."""
        pages = self._pages
        if pages < self._requested_at:
            self._requested_at = 0  # the WAL started over
        if pages >= self.hard_limit_pages:
            try:
                conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)
                self.writer_checkpoints += 1
            except apsw.BusyError:
                pass  # the background checkpoint is running: try after the next commit
            except apsw.Error:
                log.warning("WAL checkpoint after commit failed", exc_info=True)
        elif pages - self._requested_at >= self.checkpoint_pages:
            self._requested_at = pages
            self._wanted.set()

    def _run(self) -> None:
        conn: apsw.Connection | None = None
        copied_at = 0  # the commit count when the WAL was last found copied entirely
        try:
            while True:
                requested = self._wanted.wait(self.idle_seconds)
                self._wanted.clear()
                if self._stopping:
                    return
                commits = self._commits
                if not requested and commits == copied_at:
                    continue  # quiet, and nothing written since the WAL was all copied
                try:
                    if conn is None:
                        conn = apsw.Connection(str(self.path), flags=apsw.SQLITE_OPEN_READWRITE)
                        conn.set_busy_timeout(BUSY_TIMEOUT_MS)
                        conn.execute("PRAGMA query_only = ON")  # it only ever checkpoints
                        conn.execute("PRAGMA user_version").fetchall()  # opens the WAL
                    wal_pages, copied = conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)
                    self.background_checkpoints += 1
                    if wal_pages == copied:
                        copied_at = commits
                except apsw.BusyError:
                    pass  # the writer is checkpointing: nothing to do
                except apsw.Error:
                    log.warning("background WAL checkpoint of %s failed", self.path,
                                exc_info=True)
        finally:
            if conn is not None:
                conn.close()

    async def aclose(self) -> None:
        """Stop the thread (after the checkpoint in progress) and close its connection."""
        self._stopping = True
        self._wanted.set()
        with trio.move_on_after(CLOSE_TIMEOUT_S, shield=True) as scope:
            await trio.to_thread.run_sync(self._thread.join, abandon_on_cancel=True)
        if scope.cancelled_caught:
            log.error("WAL checkpointer did not stop within %.0f s", CLOSE_TIMEOUT_S)
