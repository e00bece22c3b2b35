"""The writer's WAL checkpoints, moved to a thread of their own (``WalCheckpointer``)."""

from __future__ import annotations

import threading
import time

import apsw
import trio

from memlite import storage
from memlite.storage.db import WalCheckpointer


def write(conn: apsw.Connection, checkpointer: WalCheckpointer, rows: int) -> None:
    """One committed transaction of ``rows`` 2 KB rows, then the checkpointer's turn."""
    with conn:
        for _ in range(rows):
            conn.execute("INSERT INTO meta (key, value) VALUES (hex(randomblob(16)), ?)",
                         ("x" * 2000,))
    checkpointer.after_commit(conn)


def wal_frames(conn: apsw.Connection) -> int:
    """Frames in the WAL. A passive checkpoint never waits: while the checkpointer's own
    thread is checkpointing it answers busy at once, so ask again (up to 5 s)."""
    for _ in range(500):
        try:
            return conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)[0]
        except apsw.BusyError:
            time.sleep(0.01)
    raise AssertionError("the WAL stayed busy for 5 s")


async def wait_for(condition, seconds: float = 5.0) -> None:
    """Poll: the condition is set by the checkpointer's thread, which cannot wake Trio."""
    with trio.fail_after(seconds):
        while not condition():  # noqa: ASYNC110
            await trio.sleep(0.01)


async def test_the_writer_hands_checkpoints_to_the_thread(data_dir):
    conn = storage.connect(data_dir)
    checkpointer = WalCheckpointer(data_dir, checkpoint_pages=20, hard_limit_pages=10_000,
                                   idle_seconds=60)
    try:
        checkpointer.install(conn)
        assert conn.execute("PRAGMA wal_autocheckpoint").fetchall() == [(0,)]
        write(conn, checkpointer, 5)  # a few pages: below the threshold, nothing asked
        assert checkpointer.background_checkpoints == 0
        for _ in range(4):
            write(conn, checkpointer, 10)
        await wait_for(lambda: checkpointer.background_checkpoints > 0)
        assert checkpointer.writer_checkpoints == 0
        assert conn.execute("SELECT count(*) FROM meta").fetchall()[0][0] > 40
    finally:
        await checkpointer.aclose()
        conn.close()
    assert not [t for t in threading.enumerate() if t.name == "memlite-db-checkpointer"]


async def test_past_the_hard_limit_the_writer_checkpoints_and_the_wal_starts_over(data_dir):
    conn = storage.connect(data_dir)
    checkpointer = WalCheckpointer(data_dir, checkpoint_pages=10_000, hard_limit_pages=30)
    try:
        checkpointer.install(conn)
        write(conn, checkpointer, 40)  # about 40 pages: over the limit
        assert checkpointer.writer_checkpoints == 1
        write(conn, checkpointer, 1)  # this transaction reuses the WAL from its start
        assert wal_frames(conn) < 10
    finally:
        await checkpointer.aclose()
        conn.close()


async def test_after_a_quiet_moment_the_rest_of_the_wal_is_copied(data_dir):
    conn = storage.connect(data_dir)
    checkpointer = WalCheckpointer(data_dir, checkpoint_pages=10_000, idle_seconds=0.05)
    try:
        checkpointer.install(conn)
        write(conn, checkpointer, 20)  # below every threshold
        await wait_for(lambda: checkpointer.background_checkpoints == 1)
        await trio.sleep(0.2)
        assert checkpointer.background_checkpoints == 1  # nothing new: no more checkpoints
        write(conn, checkpointer, 1)
        assert wal_frames(conn) < 8  # the WAL started over (auto_vacuum adds a ptrmap page)
    finally:
        await checkpointer.aclose()
        conn.close()


async def test_a_checkpointer_whose_database_is_missing_only_logs(tmp_path, caplog):
    checkpointer = WalCheckpointer(tmp_path / "missing" / "memlite.db", idle_seconds=60)
    checkpointer._commits = 1
    checkpointer._wanted.set()
    await wait_for(lambda: any("checkpoint" in r.getMessage() for r in caplog.records))
    await checkpointer.aclose()
