"""A small pool of reader connections for the HTTP front (search, timeline, dashboard).

Readers never go through the storage actor: WAL lets a query-only connection read a
consistent snapshot while the actor writes. Each connection owns one worker thread (APSW's
Trio controller), so a request should do all of its reading in ONE call::

    async with pool.borrow() as conn:
        result = await conn.async_run(answer_search, conn, query)

Connections are opened lazily, on the first borrow that finds none idle, up to ``size``;
a borrower beyond that waits for one to be returned (that wait is the backpressure). A
connection whose use raised an ``apsw.Error`` is closed rather than returned, and the next
borrow opens a fresh one. ``close()`` closes the idle connections at once and each
borrowed one as it comes back; the owner (the worker's root, or the app when it made the
pool itself) calls it at shutdown, because APSW's threads are not daemon threads and a
leaked one keeps the process alive at exit.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import apsw
import trio

from memlite.errors import StorageError
from memlite.storage.db import open_reader

__all__ = ["ReaderPool"]

log = logging.getLogger(__name__)

DEFAULT_SIZE = 2


class ReaderPool:
    """Up to ``size`` query-only connections to one database, borrowed one at a time.

    Args:
        location: a data directory or a ``*.db`` path (as ``open_reader`` takes).
        size: how many connections may be open at once (default 2: SQLite readers are
            fast and the HTTP front is one core; more would only add threads).
    """

    def __init__(self, location: Path | str, *, size: int = DEFAULT_SIZE) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"reader pool size must be a positive int, not {size!r}")
        self.location = location
        self.size = size
        self._limiter = trio.Semaphore(size)
        self._idle: list[apsw.Connection] = []
        self._managers: dict[int, AbstractAsyncContextManager[apsw.Connection]] = {}
        self._closed = False

    @property
    def open_count(self) -> int:
        """How many connections are open now (idle or borrowed)."""
        return len(self._managers)

    @contextlib.asynccontextmanager
    async def borrow(self) -> AsyncIterator[apsw.Connection]:
        """Lend a connection for the duration of the block.

        Raises:
            StorageError: the pool is closed, or the database cannot be opened.
        """
        if self._closed:
            raise StorageError("the reader pool is closed (the worker is shutting down)")
        async with self._limiter:
            conn = self._idle.pop() if self._idle else await self._open()
            keep = True
            try:
                yield conn
            except apsw.Error:
                keep = False  # a fresh connection is cheap; a suspect one is not worth it
                raise
            finally:
                if keep and not self._closed:
                    self._idle.append(conn)
                else:
                    await self._close_one(conn)

    async def close(self) -> None:
        """Close every idle connection now and each borrowed one when returned. Idempotent."""
        self._closed = True
        idle, self._idle = self._idle, []
        for conn in idle:
            await self._close_one(conn)

    async def _open(self) -> apsw.Connection:
        manager = open_reader(self.location)
        conn = await manager.__aenter__()
        self._managers[id(conn)] = manager
        return conn

    async def _close_one(self, conn: apsw.Connection) -> None:
        manager = self._managers.pop(id(conn), None)
        if manager is None:
            return
        # Shielded: a cancelled borrower must still stop the connection's thread.
        with trio.CancelScope(shield=True):
            try:
                await manager.__aexit__(None, None, None)
            except apsw.Error:
                log.warning("closing a reader connection failed", exc_info=True)
