"""Short reads on the event loop's own thread (``ReaderPool.run_short``), and the HTTP API's
full-text search through them: no hop to a reader's thread, a CPU budget past which the
read moves to one, the same answers."""

from __future__ import annotations

import threading
import urllib.parse

import apsw
import pytest
import trio
from http_helpers import headers, seed_observation, seed_session

from memlite.errors import StorageError
from memlite.http import queries
from memlite.storage import pool as pool_module
from memlite.storage.pool import ReaderPool

pytestmark = pytest.mark.loop_guard

# A read of ~10^7 SQLite steps: tens to hundreds of ms of CPU, far over any budget.
SLOW_SQL = ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n "
            "WHERE i < 3000000) SELECT count(*) FROM n")


def _count(conn: apsw.Connection, threads: list[int]) -> int:
    threads.append(threading.get_ident())
    return int(conn.execute("SELECT count(*) FROM observations").fetchone()[0])


async def test_a_short_read_runs_on_the_calling_thread(services, storage):
    await seed_session(storage, "s-1")
    await seed_observation(storage, "s-1", title="one", at_ms=1_000)
    pool = ReaderPool(services.db_path)
    try:
        threads: list[int] = []
        assert await pool.run_short(_count, threads) == 1
        assert await pool.run_short(_count, threads) == 1
        assert threads == [threading.get_ident()] * 2
        assert pool.short_moved == 0 and pool.open_count == 0  # no reader thread used
    finally:
        await pool.close()
    with pytest.raises(StorageError, match="closed"):
        await pool.run_short(_count, [])


async def test_a_read_over_budget_moves_to_a_reader_thread(services, storage, monkeypatch):
    monkeypatch.setattr(pool_module, "SHORT_BUDGET_S", 0.002)
    pool = ReaderPool(services.db_path)
    threads: list[int] = []

    def slow(conn: apsw.Connection) -> int:
        threads.append(threading.get_ident())
        return int(conn.execute(SLOW_SQL).fetchone()[0])

    try:
        with trio.fail_after(60):
            assert await pool.run_short(slow) == 3_000_000
        assert pool.short_moved == 1
        assert threads[0] == threading.get_ident() and threads[1] != threads[0]
        # The short connection is still good for the next read.
        assert await pool.run_short(_count, threads) == 0
        assert threads[-1] == threading.get_ident()
    finally:
        await pool.close()


async def test_a_failed_short_read_reopens_its_connection(services, storage):
    pool = ReaderPool(services.db_path)
    try:
        with pytest.raises(apsw.SQLError):
            await pool.run_short(lambda conn: conn.execute("SELECT * FROM nothing_here"))
        assert pool.short_moved == 0
        assert await pool.run_short(_count, []) == 0
    finally:
        await pool.close()


@pytest.fixture
async def seeded(storage):
    await seed_session(storage, "a-1")
    for i, title in enumerate(["parser crash on empty input", "parser fixed with guard",
                               "cache invalidation bug"]):
        await seed_observation(storage, "a-1", title=title, at_ms=1_000 * (i + 1))


@pytest.fixture
def search_threads(monkeypatch):
    """Which thread ran each ``queries.search`` / ``queries.index`` call."""
    seen: list[int] = []
    for name in ("search", "index"):
        original = getattr(queries, name)

        def recorded(*args, _original=original, **kwargs):
            seen.append(threading.get_ident())
            return _original(*args, **kwargs)

        monkeypatch.setattr(queries, name, recorded)
    return seen


async def test_full_text_search_runs_without_a_thread_hop(client, token, seeded,
                                                          search_threads):
    for path in ("/api/search", "/api/search/index"):
        url = f"{path}?{urllib.parse.urlencode({'q': 'parser', 'mode': 'fts'})}"
        response = await client.get(url, headers=headers(token))
        assert response.status_code == 200
        assert b"parser" in await response.get_data()
    # Old code: both ran on a reader connection's thread.
    assert search_threads == [threading.get_ident()] * 2
    hybrid = f"/api/search?{urllib.parse.urlencode({'q': 'parser'})}"
    assert (await client.get(hybrid, headers=headers(token))).status_code == 200
    assert search_threads[-1] != threading.get_ident()  # hybrid waits for an embedding


async def test_full_text_answers_are_the_same_on_either_thread(client, token, seeded,
                                                               monkeypatch, readers):
    urls = [f"{path}?{urllib.parse.urlencode(params)}"
            for path in ("/api/search", "/api/search/index")
            for params in ({"q": "parser", "mode": "fts"}, {"q": "bug OR (", "mode": "fts"},
                           {"q": "parser guard", "mode": "fts", "limit": "1"})]
    monkeypatch.setattr(pool_module, "SHORT_CHECK_STEPS", 1)  # a tiny read is cut too
    here = [await (await client.get(url, headers=headers(token))).get_data() for url in urls]
    monkeypatch.setattr(pool_module, "SHORT_BUDGET_S", -1.0)  # every read cut at once
    moved = readers.short_moved
    there = [await (await client.get(url, headers=headers(token))).get_data() for url in urls]
    assert readers.short_moved == moved + len(urls)
    assert here == there
