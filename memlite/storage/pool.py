"""A small pool of reader connections for the HTTP front (search, timeline, dashboard).

Readers never go through the storage actor: WAL lets a query-only connection read a
consistent snapshot while the actor writes. Each connection owns one worker thread (APSW's
Trio controller), so a request should do all of its reading in ONE call::

    async with pool.borrow() as conn:
        result = await conn.async_run(answer_search, conn, query)

A short read (``run_short``: the HTTP API's full-text search, ~1-3 ms at 10,000
observations) runs instead on the calling (Trio) thread, on one more connection of the
pool kept in synchronous mode: measured at 10,000 observations on a loaded 2-CPU
machine, the two hops to a connection's thread and back took ~0.9 ms p50 (each wakes a
thread that must then wait for a CPU) around a search of ~2.7 ms, and the peer answers
its whole full-text request in ~2 ms (BENCHMARKS.md, "Search over HTTP against the
peer", round 7). Blocking the event loop for the read is the price,
so it is bounded: a SQLite progress handler interrupts the read once it has used
``SHORT_BUDGET_S`` of the thread's CPU time (10 ms, half the loop-block guard's limit in
``tests/loopblock.py``), and the read is then run again, whole, on a borrowed connection's
thread (at 100,000 observations the slowest of the bench's 50 full-text searches took
~10 ms of CPU under load, so a large database pays the wasted budget rarely; the answer
is the same either way). Only a read that needs no other thread may run there (no
``VectorSource``: a hybrid search waits for the query's embedding and stays on a reader
thread).

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
import math
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, TypeVar

import apsw
import trio

from memlite.errors import StorageError
from memlite.storage.db import connect, open_reader

__all__ = ["SHORT_BUDGET_S", "ReaderPool"]

log = logging.getLogger(__name__)

DEFAULT_SIZE = 2
SHORT_BUDGET_S = 0.010  # CPU time a read may hold the event loop before it moves to a thread
SHORT_CHECK_STEPS = 2000  # SQLite VM steps between two checks of that budget (~20-50 us)

T = TypeVar("T")


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
        self._short: apsw.Connection | None = None  # run_short's synchronous connection
        self._short_lock = trio.Lock()
        self._short_deadline = math.inf  # thread CPU time at which a short read is cut
        self._short_cut = False  # the running short read was cut by its budget
        self.short_moved = 0  # short reads that went over budget and ran on a thread

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

    async def run_short(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``fn(conn, *args, **kwargs)`` on the calling thread, or on a reader thread when
        it goes over ``SHORT_BUDGET_S`` of CPU time (see the module docstring).

        ``fn`` must be a pure read that can run twice (its first run may be cut short
        inside any statement). Errors as ``borrow``; an ``apsw.Error`` closes the
        synchronous connection (the next short read opens a fresh one).
        """
        if self._closed:
            raise StorageError("the reader pool is closed (the worker is shutting down)")
        conn = self._short or await self._open_short()
        self._short_cut = False
        self._short_deadline = time.thread_time() + SHORT_BUDGET_S
        try:
            return fn(conn, *args, **kwargs)
        except apsw.Error as exc:
            if not (self._short_cut and isinstance(exc, apsw.InterruptError)):
                self._close_short()
                raise
        finally:
            self._short_deadline = math.inf
        self.short_moved += 1  # over budget: the whole read again, on a reader's thread
        async with self.borrow() as thread_conn:
            # An async-mode connection (see ``db.open_reader``): apsw's stubs type it apart.
            result: T = await thread_conn.async_run(  # type: ignore[attr-defined]
                fn, thread_conn, *args, **kwargs)
        return result

    def _over_budget(self) -> bool:
        """SQLite's progress handler on the short connection: True interrupts the read."""
        if time.thread_time() < self._short_deadline:
            return False
        self._short_cut = True
        return True

    async def _open_short(self) -> apsw.Connection:
        async with self._short_lock:  # two first requests at once open it once
            if self._short is None:
                conn = await trio.to_thread.run_sync(
                    lambda: connect(self.location, writer=False))
                conn.set_progress_handler(self._over_budget, SHORT_CHECK_STEPS)
                if self._closed:
                    conn.close()
                    raise StorageError("the reader pool is closed (the worker is shutting "
                                       "down)")
                self._short = conn
            return self._short

    def _close_short(self) -> None:
        conn, self._short = self._short, None
        if conn is not None:
            try:
                conn.close()
            except apsw.Error:
                log.warning("closing the short-read connection failed", exc_info=True)

    async def close(self) -> None:
        """Close every idle connection now and each borrowed one when returned. Idempotent."""
        self._closed = True
        self._close_short()
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
