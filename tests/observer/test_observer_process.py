"""Process ownership: no observer process outlives its worker; the registry reaper is safe.

Survivors are found by walking /proc for the marker (``MEMLITE_OBSERVER_ID``) every
observer process carries in its environment, so orphans re-parented away from pytest
are found too.
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

from memlite.observer import registry
from memlite.observer.conversation import ConversationConfig, open_conversation, stop_when_idle

FAKE = Path(__file__).resolve().with_name("fake_claude.py")
PARENT = """
import sys, trio
from pathlib import Path
from memlite.observer.conversation import ConversationConfig, open_conversation

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


def wait_until_gone(marker: str, limit: float) -> float:
    started = time.monotonic()
    while registry.marked_pids(marker) and time.monotonic() - started < limit:
        time.sleep(0.02)
    assert registry.marked_pids(marker) == [], "observer processes survived"
    return time.monotonic() - started


def start_parent(tmp_path: Path, data_dir: Path) -> tuple[subprocess.Popen[str], str]:
    script = tmp_path / "parent.py"
    script.write_text(PARENT)
    parent = subprocess.Popen([sys.executable, str(script), str(data_dir), str(FAKE)],
                              stdout=subprocess.PIPE, text=True)
    ready, _, _ = select.select([parent.stdout], [], [], 30)
    if not ready:
        parent.kill()
        parent.wait()
        parent.stdout.close()
        pytest.fail("the parent did not open its conversation in 30 s")
    return parent, parent.stdout.readline().strip()


def test_sigkill_of_the_owner_leaves_no_observer(tmp_path, data_dir):
    parent, marker = start_parent(tmp_path, data_dir)
    assert len(registry.marked_pids(marker)) == 2  # the launcher and the CLI
    assert len(registry.observer_pids(data_dir)) == 1
    parent.kill()
    parent.wait()
    parent.stdout.close()
    took = wait_until_gone(marker, limit=3.0)
    assert took < 1.0, f"survivors for {took:.2f} s"
    assert registry.reap_stale_observers(data_dir) == []
    assert not list((data_dir / "observers").glob("*.json"))


def test_sigkill_of_the_launcher_kills_the_cli(tmp_path, data_dir):
    """The parent-death signal: the CLI dies with the launcher that forked it."""
    parent, marker = start_parent(tmp_path, data_dir)
    try:
        (launcher,) = registry.observer_pids(data_dir)
        cli = [pid for pid in registry.marked_pids(marker) if pid != launcher]
        assert len(cli) == 1
        os.kill(launcher, signal.SIGKILL)
        started = time.monotonic()
        while os.path.exists(f"/proc/{cli[0]}/environ") and \
                registry.marked_pids(marker) and time.monotonic() - started < 3:
            time.sleep(0.02)
        assert cli[0] not in registry.marked_pids(marker)
    finally:
        parent.kill()
        parent.wait()
        parent.stdout.close()
    wait_until_gone(marker, limit=3.0)


@pytest.mark.slow
async def test_cli_outlives_the_thread_that_spawned_it(data_dir):
    """Trio spawns from a cached thread that exits after 10 s idle: the CLI must not care."""
    cfg = ConversationConfig(data_dir=data_dir, session="t", system_prompt="S", cli_path=FAKE)
    async with open_conversation(cfg) as conv:
        await conv.ask("before")
        await trio.sleep(11.5)
        assert (await conv.ask("after")).num_turns == 2


def spawn_sleeper(env_extra: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(["sleep", "60"], env={**os.environ, **env_extra})


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def write_entry(data_dir: Path, marker: str, pid: int, owner: int, owner_start) -> Path:
    path = registry.registry_dir(data_dir) / f"{marker}.json"
    path.write_text(json.dumps({"pid": pid, "start": registry.start_time(pid), "marker": marker,
                                "owner": owner, "owner_start": owner_start}))
    return path


def test_reaper_kills_a_stale_observer(data_dir):
    stale = spawn_sleeper({registry.MARKER_ENV: "stale1"})
    try:
        entry = write_entry(data_dir, "stale1", stale.pid, dead_pid(), 12345)
        assert registry.observer_pids(data_dir) == [stale.pid]
        assert registry.reap_stale_observers(data_dir) == [stale.pid]
        assert stale.wait(timeout=5) == -signal.SIGKILL
        assert not entry.exists()
    finally:
        stale.kill()
        stale.wait()


def test_reaper_refuses_a_reused_pid(data_dir):
    unrelated = spawn_sleeper({})
    try:
        entry = write_entry(data_dir, "gone1", unrelated.pid, dead_pid(), 12345)
        assert registry.observer_pids(data_dir) == []
        assert registry.reap_stale_observers(data_dir) == []
        assert unrelated.poll() is None, "an unrelated process was killed"
        assert not entry.exists()
    finally:
        unrelated.kill()
        unrelated.wait()


def test_reaper_leaves_observers_of_a_live_worker(data_dir):
    live = spawn_sleeper({registry.MARKER_ENV: "live1"})
    try:
        entry = write_entry(data_dir, "live1", live.pid, os.getpid(),
                            registry.start_time(os.getpid()))
        assert registry.reap_stale_observers(data_dir) == []
        assert live.poll() is None and entry.exists()
    finally:
        live.kill()
        live.wait()


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
