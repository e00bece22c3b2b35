"""Scenario 6, disk and database faults, each against a real worker and real hook processes.

| fault              | how it is made here                                                    |
|--------------------|------------------------------------------------------------------------|
| ``deleted``        | ``memlite.db``, ``-wal``, ``-shm`` unlinked while the worker runs        |
| ``garbage``        | worker stopped; ``memlite.db`` overwritten with random bytes            |
| ``truncated``      | worker stopped; ``memlite.db`` cut to its first 100 bytes (half header) |
| ``locked``         | another process-level writer (apsw in this test) holds ``BEGIN         |
|                    | EXCLUSIVE`` for ``LOCK_HOLD_S`` seconds while hooks fire                |
| ``read_only``      | worker stopped; the data directory bind-mounted on itself and remounted |
|                    | ``ro`` (a real EROFS: ``chmod`` does not stop root). Remounting ro while |
|                    | the worker holds files open for writing fails with EBUSY, so it is done |
|                    | with the worker stopped.                                                |
| ``disk_full``      | the data directory is a 4 MiB tmpfs; a filler file takes every free     |
|                    | block (a real ENOSPC) while the worker runs, then is removed            |

Each records: ``acked`` (events stored before the fault), ``fired`` during it, ``stored``
and ``spooled`` of those, ``lost`` (acked events missing afterwards + fired events missing
after recovery that the fault itself did not make impossible to keep), worker
``spawns`` during the fault (``starting:`` lines in worker.log), the worst hook latency and
the seconds to recover. Everything mounted is unmounted in ``finally``.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import apsw
import pytest
from harness import payload, wait_until

pytestmark = [pytest.mark.chaos, pytest.mark.timeout(150)]

LOCK_HOLD_S = 3.0
HOOK_LIMIT_S = 1.0 + 0.6  # the hook's 1 s deadline plus a loaded 2-core machine's start-up


# --- helpers ---------------------------------------------------------------------------------


def _ids(prefix: str, n: int) -> list[str]:
    return [f"toolu_{prefix}_{i}" for i in range(n)]


def _fire(world, ids: list[str]) -> list[float]:
    """One PostToolUse hook process per id, one after another; returns their latencies."""
    took = []
    for tid in ids:
        code, out, seconds = world.hook("PostToolUse", payload("PostToolUse.Bash",
                                                               tool_use_id=tid))
        assert (code, out) == (0, b""), (tid, code, out)
        took.append(seconds)
    return took


def _stored(world, ids: list[str]) -> set[str]:
    marks = ",".join("?" * len(ids))
    return {row[0] for row in world.query(
        f"SELECT tool_use_id FROM events WHERE tool_use_id IN ({marks})", tuple(ids))}


def _spool_lines(world) -> int:
    directory = world.data_dir / "spool"
    if not directory.is_dir():
        return 0
    return sum(len(p.read_bytes().splitlines()) for p in directory.iterdir()
               if p.name.endswith((".jsonl", ".draining"))
               and p.name not in ("rejected.jsonl", "quarantine.jsonl"))


def _log(world, name: str = "worker.log") -> str:
    text = ""
    for path in (world.data_dir / f"{name}.1", world.data_dir / name):
        with contextlib.suppress(OSError):
            text += path.read_text(errors="replace")
    return text


def _starts(world) -> int:
    return _log(world).count("starting: pid")


def _wait_all_stored(world, ids: list[str], timeout: float, what: str) -> float:
    return wait_until(lambda: _stored(world, ids) == set(ids), timeout, what)


def _remove_db(world) -> None:
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(world.data_dir / f"memlite.db{suffix}")


def _baseline(world, figures, n: int = 4) -> list[str]:
    """A running worker holding ``n`` stored (acked) events."""
    world.start_worker()
    acked = _ids("acked", n)
    _fire(world, acked)
    _wait_all_stored(world, acked, 10, "baseline events stored")
    figures["acked"] = n
    return acked


@contextlib.contextmanager
def _mounted(args: list[str], target: Path):
    """Run ``mount args``; yield; unmount (lazily if busy) in any case."""
    result = subprocess.run(["mount", *args], capture_output=True, text=True, timeout=10)
    if result.returncode != 0:
        pytest.skip(f"cannot mount here ({' '.join(args)}): {result.stderr.strip()}")
    try:
        yield
    finally:
        if subprocess.run(["umount", str(target)], capture_output=True,
                          timeout=10).returncode != 0:
            subprocess.run(["umount", "-l", str(target)], capture_output=True, timeout=10)


# --- 1. deleted while running ------------------------------------------------------------------


def test_database_deleted_while_running(world, figures):
    """KNOWN BUG (reported): the worker keeps answering 200 to writes that go into the
    unlinked inode of the deleted database; they vanish when it stops, and its log only
    says, once a second, that a background checkpoint "failed: unable to open database
    file". The assertions below fail until the worker notices the deletion (the events
    must then be spooled by the hooks, or at least the loss announced)."""
    acked = _baseline(world, figures)
    _remove_db(world)
    fired = _ids("after_delete", 6)
    took = _fire(world, fired)
    figures["hook_worst_s"] = round(max(took), 3)
    assert max(took) < HOOK_LIMIT_S
    time.sleep(1.5)  # the background checkpointer runs every second
    figures["db_recreated_while_running"] = (world.data_dir / "memlite.db").exists()
    spooled = _spool_lines(world)
    figures["spooled"] = spooled
    figures["answered_200"] = len(fired) - spooled  # the hooks had nothing to spool
    log = _log(world)
    lines = [line.replace(str(world.data_dir), "<data>").lower() for line in log.splitlines()]
    said = [line for line in lines if "memlite.db" in line and any(
        word in line for word in ("delet", "moved", "missing", "unlink", "gone"))]
    figures["worker_log_clear_message"] = bool(said)
    # Restart: whatever the worker could not keep must come back from the spool.
    began = time.monotonic()
    world.stop()
    starts = _starts(world)
    world.start_worker()
    with contextlib.suppress(AssertionError):
        _wait_all_stored(world, fired, 5, "events fired after the deletion stored")
    figures["recovery_s"] = round(time.monotonic() - began, 2)
    figures["spawns"] = _starts(world) - starts
    figures["lost_acked_by_deletion"] = len(set(acked) - _stored(world, acked))
    lost = len(set(fired) - _stored(world, fired))
    figures["lost_fired_after_deletion"] = lost
    assert world.integrity() == "ok"
    assert lost == 0, (f"{lost} of {len(fired)} events answered 200 after the database was "
                       "deleted are gone after a restart (written to the unlinked file)")
    assert said, "worker.log does not say that memlite.db was deleted"


# --- 2. not a database (garbage, truncated) while stopped --------------------------------------


def _garbage(path: Path) -> None:
    path.write_bytes(os.urandom(64 * 1024))


def _truncated(path: Path) -> None:
    with open(path, "r+b") as f:
        f.truncate(100)


@pytest.mark.parametrize("damage", [_garbage, _truncated], ids=["garbage", "truncated"])
def test_not_a_database_while_stopped(world, figures, damage):
    """``garbage``: random bytes (no SQLite header: refused before SQLite opens it).
    ``truncated``: the first 100 bytes kept (a valid header, no pages: SQLite itself says
    "database disk image is malformed").

    KNOWN FINDINGS (reported): every hook that finds the worker down spawns another worker
    once the previous failed start released the spawn lock (no backoff after a failed
    start); the truncated file's start error is "Exceptions from Trio nursery", without the
    file's name."""
    _baseline(world, figures)
    world.stop()
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(world.data_dir / f"memlite.db{suffix}")
    damage(world.data_dir / "memlite.db")
    starts = _starts(world)
    # Hooks fire for ~3 s with the worker unable to start.
    fired: list[str] = []
    took: list[float] = []
    ends = time.monotonic() + 3.0
    while time.monotonic() < ends:
        fired.append(f"toolu_bad_db_{len(fired)}")
        took += _fire(world, fired[-1:])
    wait_until(lambda: not world.workers(), 15, "the failed workers exited")
    spawns = _starts(world) - starts
    figures["fired"] = len(fired)
    figures["spawns"] = spawns
    figures["hook_worst_s"] = round(max(took), 3)
    spooled = _spool_lines(world)
    figures["spooled"] = spooled
    error_file = world.data_dir / "worker.start-error"
    start_error = json.loads(error_file.read_text())["message"] if error_file.exists() else ""
    figures["start_error"] = start_error[:140]
    alive_after = len(world.workers())
    # The file is moved aside: a fresh database; the spool drains into it.
    os.replace(world.data_dir / "memlite.db", world.data_dir / "memlite.db.bad")
    began = time.monotonic()
    world.start_worker()
    _wait_all_stored(world, fired, 15, "spooled events stored in the fresh database")
    figures["recovery_s"] = round(time.monotonic() - began, 2)
    figures["lost"] = len(fired) - len(_stored(world, fired))
    assert world.integrity() == "ok"
    assert max(took) < HOOK_LIMIT_S
    assert spooled == len(fired)  # nothing lost: all on disk until the worker can start
    assert alive_after == 0  # no worker left in a crash loop
    assert figures.values["lost"] == 0
    assert str(world.data_dir / "memlite.db") in start_error, start_error
    # A failing start must not be retried by every hook: at most one attempt per start
    # error, not one per ~0.7 s for as long as hooks fire.
    assert spawns <= 2, f"{spawns} worker starts for {len(fired)} hooks in 3 s: no backoff"


# --- 3. locked by another writer -----------------------------------------------------------------


def test_database_locked_by_another_writer(world, figures):
    _baseline(world, figures)
    conn = apsw.Connection(str(world.data_dir / "memlite.db"))
    try:
        conn.setbusytimeout(5000)
        conn.execute("BEGIN EXCLUSIVE")
        locked_at = time.monotonic()
        fired: list[str] = []
        took: list[float] = []
        while time.monotonic() - locked_at < LOCK_HOLD_S - 0.5:
            fired.append(f"toolu_locked_{len(fired)}")
            took += _fire(world, fired[-1:])
        figures["stored_while_locked"] = len(_stored(world, fired))
        while time.monotonic() - locked_at < LOCK_HOLD_S:
            time.sleep(0.02)
    finally:
        with contextlib.suppress(apsw.Error):
            conn.execute("ROLLBACK")
        conn.close()
    began = time.monotonic()
    figures["fired"] = len(fired)
    figures["hook_worst_s"] = round(max(took), 3)
    figures["spooled"] = _spool_lines(world)
    assert max(took) < HOOK_LIMIT_S
    # Requests already waiting commit once the lock is gone (busy_timeout 5 s > the hold);
    # anything else is in the spool and arrives with the next start.
    try:
        _wait_all_stored(world, fired, 8, "events stored after the lock was released")
    except AssertionError:
        figures["needed_restart"] = True
        world.stop()
        world.start_worker()
        _wait_all_stored(world, fired, 15, "spooled events stored after a restart")
    figures["recovery_s"] = round(time.monotonic() - began, 2)
    figures["lost"] = len(fired) - len(_stored(world, fired))
    assert world.integrity() == "ok"


# --- 4. read-only data directory ------------------------------------------------------------------


def test_data_dir_read_only(world, figures):
    acked = _baseline(world, figures)
    world.stop()
    target = world.data_dir
    with _mounted(["--bind", str(target), str(target)], target):
        result = subprocess.run(["mount", "-o", "remount,bind,ro", str(target)],
                                capture_output=True, text=True, timeout=10)
        if result.returncode != 0:
            pytest.skip(f"cannot remount read-only: {result.stderr.strip()}")
        with pytest.raises(OSError):
            (target / "probe").write_text("x")  # a real EROFS, even for root
        starts = _starts(world)
        fired = _ids("read_only", 5)
        took = _fire(world, fired)
        figures["fired"] = len(fired)
        figures["hook_worst_s"] = round(max(took), 3)
        time.sleep(0.5)
        figures["spawns"] = _starts(world) - starts
        figures["workers_alive"] = len(world.workers())
        assert max(took) < HOOK_LIMIT_S
        assert not world.workers()
        figures["spooled"] = _spool_lines(world)  # nowhere to spool: the fault's damage
    began = time.monotonic()
    after = _ids("after_ro", 3)
    _fire(world, after)  # the first hook starts the worker again
    _wait_all_stored(world, after, 15, "events after the directory is writable again")
    figures["recovery_s"] = round(time.monotonic() - began, 2)
    figures["lost_acked"] = len(set(acked) - _stored(world, acked))
    figures["lost_fired_during_fault"] = len(set(fired) - _stored(world, fired))
    assert figures.values["lost_acked"] == 0
    assert world.integrity() == "ok"


# --- 5. disk full ---------------------------------------------------------------------------


def test_disk_full(world, figures):
    target = world.data_dir
    target.mkdir(parents=True, exist_ok=True)
    filler = target / "filler"
    with _mounted(["-t", "tmpfs", "-o", "size=4m,mode=0700", "tmpfs", str(target)], target):
        try:
            acked = _baseline(world, figures)
            with open(filler, "wb", buffering=0) as f:
                for block in (65536, 512):
                    with contextlib.suppress(OSError):
                        while True:
                            f.write(b"\0" * block)
            figures["free_bytes"] = shutil.disk_usage(target).free
            starts = _starts(world)
            fired = _ids("full", 6)
            took = _fire(world, fired)
            figures["fired"] = len(fired)
            figures["hook_worst_s"] = round(max(took), 3)
            figures["stored_while_full"] = len(_stored(world, fired))
            figures["spooled_while_full"] = _spool_lines(world)
            figures["worker_survived"] = world.worker_pid() is not None
            figures["worker_log_says_full"] = "full" in _log(world)
            assert max(took) < HOOK_LIMIT_S
            filler.unlink()
            began = time.monotonic()
            figures["spawns"] = _starts(world) - starts
            after = _ids("after_full", 3)
            _fire(world, after)
            _wait_all_stored(world, after, 15, "events after space was freed")
            figures["recovery_s"] = round(time.monotonic() - began, 2)
            figures["lost_acked"] = len(set(acked) - _stored(world, acked))
            figures["lost_fired_during_fault"] = len(set(fired) - _stored(world, fired))
            assert figures.values["lost_acked"] == 0
            assert world.integrity() == "ok"
            assert len(world.workers()) == 1
        finally:
            world.stop()
