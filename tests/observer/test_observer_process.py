"""Process ownership: no observer process outlives its worker; the registry reaper is safe.

Survivors are found by ``registry.marked_pids``: the observer's process group while its
liveness lock is held, plus (with /proc) every process carrying the marker
(``MEMLITE_OBSERVER_ID``), so orphans re-parented away from pytest are found too. The
same tests run with /proc hidden (``.ci/run``, ``tests/noproc``).
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import trio

from memlite import procs
from memlite.observer import registry
from memlite.observer.conversation import ConversationConfig, open_conversation, stop_when_idle

FAKE = Path(__file__).resolve().with_name("fake_claude.py")
PARENT = """
import sys, trio
from pathlib import Path
from memlite.observer.conversation import ConversationConfig, open_conversation, stop_when_idle

async def main():
    cfg = ConversationConfig(data_dir=Path(sys.argv[1]), session="p", system_prompt="S",
                             cli_path=Path(sys.argv[2]), env={"FAKE_CLAUDE_MODE": "ok,hang"},
                             turn_timeout=600)
    async with open_conversation(cfg) as conv:
        await conv.ask("first")
        print(conv.marker, flush=True)
        await conv.ask("this one hangs")

trio.run(main)
"""


def wait_until_gone(marker: str, data_dir: Path, limit: float) -> float:
    """Seconds until no process of the observer is left: none carries its marker and
    none holds its lock. Both: a process in the middle of exiting has let go of its
    memory (its environment reads empty) before its files (the lock is still held), and
    for that instant the reaper still sees, and signals, its group (a CI run under load
    caught it there once)."""
    started = time.monotonic()

    def left() -> bool:
        return bool(registry.marked_pids(marker, data_dir)) or procs.lock_held(
            registry.lock_path(data_dir, marker))

    while left() and time.monotonic() - started < limit:
        time.sleep(0.02)
    assert registry.marked_pids(marker, data_dir) == [], "observer processes survived"
    assert not procs.lock_held(registry.lock_path(data_dir, marker)), "its lock is held"
    return time.monotonic() - started


def start_parent(tmp_path: Path, data_dir: Path, env: dict[str, str] | None = None
                 ) -> tuple[subprocess.Popen[str], str]:
    script = tmp_path / "parent.py"
    script.write_text(PARENT)
    parent = subprocess.Popen([sys.executable, str(script), str(data_dir), str(FAKE)],
                              stdout=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
    ready, _, _ = select.select([parent.stdout], [], [], 30)
    if not ready:
        parent.kill()
        parent.wait()
        parent.stdout.close()
        pytest.fail("the parent did not open its conversation in 30 s")
    return parent, parent.stdout.readline().strip()


WATCHDOG = {"MEMLITE_LAUNCHER_WATCHDOG": "1"}  # the macOS way (no prctl), on Linux too


@pytest.mark.parametrize("env", [{}, WATCHDOG], ids=["prctl", "watchdog"])
def test_sigkill_of_the_owner_leaves_no_observer(tmp_path, data_dir, env):
    parent, marker = start_parent(tmp_path, data_dir, env)
    pids = registry.marked_pids(marker, data_dir)
    if procs.have_proc():  # the launcher and the CLI (and the watchdog where there is one)
        assert len(pids) == (3 if env else 2)
    else:
        assert pids  # the group stands for its members
    assert len(registry.observer_pids(data_dir)) == 1
    parent.kill()
    parent.wait()
    parent.stdout.close()
    took = wait_until_gone(marker, data_dir, limit=3.0)
    assert took < 1.0, f"survivors for {took:.2f} s"
    assert registry.reap_stale_observers(data_dir) == []
    assert not list((data_dir / "observers").glob("*.json"))


@pytest.mark.parametrize("env", [{}, WATCHDOG], ids=["prctl", "watchdog"])
def test_sigkill_of_the_launcher_kills_the_cli(tmp_path, data_dir, env):
    """The CLI dies with the launcher that forked it: by the parent-death signal (Linux)
    or by the watchdog, which sees the launcher's pipe close (everywhere)."""
    parent, marker = start_parent(tmp_path, data_dir, env)
    try:
        (launcher,) = registry.observer_pids(data_dir)
        os.kill(launcher, signal.SIGKILL)
        lock = registry.lock_path(data_dir, marker)
        started = time.monotonic()
        while procs.lock_held(lock) and time.monotonic() - started < 3:
            time.sleep(0.02)
        assert not procs.lock_held(lock), "a process of the observer outlived its launcher"

        def group_gone() -> bool:
            return not procs.group_alive(launcher) or \
                procs.group_pids(launcher) in ([], [launcher])

        # The watchdog SIGKILLs the whole group, itself included: the CLI may release the
        # lock a moment before the watchdog is done dying (seen once under load: the
        # group still listed one member right after the lock was free).
        while not group_gone() and time.monotonic() - started < 3:
            time.sleep(0.02)
        assert group_gone(), procs.group_pids(launcher)
    finally:
        parent.kill()
        parent.wait()
        parent.stdout.close()
    wait_until_gone(marker, data_dir, limit=3.0)


@pytest.mark.slow
async def test_cli_outlives_the_thread_that_spawned_it(data_dir):
    """Trio spawns from a cached thread that exits after 10 s idle: the CLI must not care."""
    cfg = ConversationConfig(data_dir=data_dir, session="t", system_prompt="S", cli_path=FAKE)
    async with open_conversation(cfg) as conv:
        await conv.ask("before")
        await trio.sleep(11.5)
        assert (await conv.ask("after")).num_turns == 2


HOLDER = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.flock(fd, fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(60)
"""


def spawn_holder(data_dir: Path, marker: str | None) -> subprocess.Popen[str]:
    """A process in its own group (pgid = pid) holding ``marker``'s lock (None: no lock)."""
    target = registry.lock_path(data_dir, marker) if marker else data_dir / "unrelated.lock"
    registry.registry_dir(data_dir)
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(target)], stdout=subprocess.PIPE,
                            text=True, start_new_session=True)
    assert proc.stdout.readline().strip() == "locked"
    return proc


def stop(proc: subprocess.Popen[str]) -> None:
    proc.kill()
    proc.wait()
    proc.stdout.close()


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def write_entry(data_dir: Path, marker: str, pid: int, owner: int, owner_start) -> Path:
    path = registry.registry_dir(data_dir) / f"{marker}.json"
    path.write_text(json.dumps({"pid": pid, "pgid": pid, "start": registry.start_time(pid),
                                "marker": marker, "owner": owner, "owner_start": owner_start}))
    return path


def test_reaper_kills_a_stale_observer(data_dir):
    stale = spawn_holder(data_dir, "stale1")
    try:
        entry = write_entry(data_dir, "stale1", stale.pid, dead_pid(), "t:12345")
        assert registry.observer_pids(data_dir) == [stale.pid]
        assert registry.reap_stale_observers(data_dir) == [stale.pid]
        assert stale.wait(timeout=5) == -signal.SIGKILL
        assert not entry.exists()
        assert not registry.lock_path(data_dir, "stale1").exists()
    finally:
        stop(stale)


def test_reaper_refuses_a_reused_pid(data_dir):
    """The entry's pid now belongs to a process that does not hold the observer's lock."""
    unrelated = spawn_holder(data_dir, None)
    try:
        entry = write_entry(data_dir, "gone1", unrelated.pid, dead_pid(), "t:12345")
        assert registry.observer_pids(data_dir) == []
        assert registry.marked_pids("gone1", data_dir) == []
        assert registry.reap_stale_observers(data_dir) == []
        assert unrelated.poll() is None, "an unrelated process was killed"
        assert not entry.exists()
    finally:
        stop(unrelated)


def test_reaper_leaves_observers_of_a_live_worker(data_dir):
    live = spawn_holder(data_dir, "live1")
    try:
        entry = write_entry(data_dir, "live1", live.pid, os.getpid(),
                            registry.start_time(os.getpid()))
        assert registry.reap_stale_observers(data_dir) == []
        assert live.poll() is None and entry.exists()
    finally:
        stop(live)


def test_reaper_logs_and_retries_instead_of_raising(data_dir, monkeypatch, caplog):
    """A failure while reaping (e.g. no /proc on the old code) never reaches the supervisor."""
    calls, slept = [], []

    def failing(_data_dir):
        calls.append(1)
        if len(calls) < 3:
            raise OSError("no /proc")
        return [42]

    monkeypatch.setattr(registry, "reap_stale_observers", failing)
    assert registry.reap_with_retry(data_dir, sleep=slept.append) == [42]
    assert slept == [0.5, 1.0] and "attempt 1 of 3" in caplog.text
    calls.clear()
    monkeypatch.setattr(registry, "reap_stale_observers",
                        lambda _d: (_ for _ in ()).throw(OSError("still no /proc")))
    assert registry.reap_with_retry(data_dir, sleep=slept.append) == []
    assert "gave up reaping" in caplog.text


def test_one_bad_entry_does_not_stop_the_reaper(data_dir, monkeypatch):
    stale = spawn_holder(data_dir, "stale2")
    real = registry.kill_marked

    def kill(marker, where):
        if marker == "abad":  # sorted first
            raise PermissionError("cannot signal")
        return real(marker, where)

    monkeypatch.setattr(registry, "kill_marked", kill)
    try:
        write_entry(data_dir, "abad", dead_pid(), dead_pid(), "t:1")
        write_entry(data_dir, "stale2", stale.pid, dead_pid(), "t:1")
        assert registry.reap_stale_observers(data_dir) == [stale.pid]
        assert stale.wait(timeout=5) == -signal.SIGKILL
    finally:
        stop(stale)


class IdleStub:
    def __init__(self) -> None:
        self.last_activity = trio.current_time()
        self.busy = False
        self.closed_at: float | None = None

    @property
    def closed(self) -> bool:
        return self.closed_at is not None

    async def aclose(self) -> None:
        self.closed_at = trio.current_time()


async def test_idle_conversation_is_closed_on_time(autojump_clock):
    conv = IdleStub()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(stop_when_idle, conv, 300)
        await trio.sleep(100)
        conv.last_activity = trio.current_time()  # a turn at t=100
        await trio.sleep(250)
        conv.busy = True  # a long turn from t=350 to t=900
        await trio.sleep(550)
        conv.busy, conv.last_activity = False, trio.current_time()
    assert conv.closed_at == 900 + 300


async def test_a_conversation_under_the_watchdog_turns_and_closes_cleanly(data_dir):
    """The macOS way (a watchdog, no prctl): the SDK still sees the CLI's EOF and exit."""
    cfg = ConversationConfig(data_dir=data_dir, session="w", system_prompt="S", cli_path=FAKE,
                             env={"FAKE_CLAUDE_MODE": "ok", **WATCHDOG})
    async with open_conversation(cfg) as conv:
        assert (await conv.ask("hello")).text
        if procs.have_proc():  # the launcher, the watchdog, the CLI
            assert len(registry.marked_pids(conv.marker, data_dir)) == 3
    assert registry.marked_pids(conv.marker, data_dir) == []
    assert registry.observer_pids(data_dir) == []
