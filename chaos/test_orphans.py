"""Scenario 2, no orphans: several sessions observing at once over the fake CLI, the worker
SIGKILLed (or SIGTERMed) while observer processes are alive. No process of the data
directory may survive it (a /proc census by the ``MEMLITE_DATA_DIR`` marker, which
survives reparenting), and after a restart every event ends observed exactly once."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import REPO, Chaos, wait_until

pytestmark = [pytest.mark.chaos, pytest.mark.timeout(120)]

ECHO = REPO / "tests" / "observer" / "fake_claude_echo.py"
SESSIONS = 4
EVENTS = 20  # per session


@pytest.fixture
def fake_world(data_dir: Path) -> Iterator[Chaos]:
    chaos = Chaos.create(
        data_dir, fake_cli=True, FAKE_CLAUDE_MODE="ok", MEMLITE_TEST_FAKE_CLI=str(ECHO),
        FAKE_CLAUDE_DELAY="0.05",  # each turn takes a while: the kill lands mid-turn
        MEMLITE_OBSERVER_CONCURRENCY=str(SESSIONS))
    try:
        yield chaos
    finally:
        assert_stops_clean(chaos)


def assert_stops_clean(chaos: Chaos) -> None:
    """Stop the worker as ``memlite worker stop`` does; its observers (idle conversations
    are kept open for OBSERVER_IDLE_MINUTES) must go with it. Then sweep by pid."""
    from memlite.spawn import stop_worker

    left: set[int] = set()
    try:
        if chaos.data_dir.exists():
            with contextlib.suppress(Exception):
                stop_worker(chaos.data_dir, grace=5.0)
        with contextlib.suppress(AssertionError):
            wait_until(lambda: not chaos.processes(), 2.0, "processes after the stop")
        left = chaos.processes()
    finally:
        chaos.stop()
    assert not left, f"processes of this scenario outlived its worker's stop: {sorted(left)}"


def session_id(s: int) -> str:
    return f"orphans-{s}"


def event(s: int, n: int) -> dict:
    return {"session_id": session_id(s), "hook_event_name": "PostToolUse",
            "tool_name": "Bash", "tool_use_id": f"toolu_orph_{s}_{n:03d}",
            "cwd": f"/tmp/orphans-project-{s}",
            "tool_input": {"command": f"echo step {s * 1000 + n}"},
            "tool_response": {"stdout": f"step {n}", "stderr": "", "interrupted": False}}


def send_burst(world: Chaos) -> None:
    for s in range(SESSIONS):
        status, _ = world.api("POST", "/api/sessions", {
            "session_id": session_id(s), "hook_event_name": "SessionStart",
            "source": "startup", "cwd": f"/tmp/orphans-project-{s}"})
        assert status == 200
    for n in range(EVENTS):  # interleaved: every session is busy at once
        for s in range(SESSIONS):
            status, body = world.api("POST", "/api/events", event(s, n))
            assert status == 200, body


def ai_observed(world: Chaos) -> int:
    return world.query("SELECT count(DISTINCT event_id) FROM observation_sources "
                       "WHERE kind = 'ai'")[0][0]


def observers(world: Chaos) -> set[int]:
    return world.processes() - world.workers()


def reap(pid: int | None) -> None:
    if pid is None:
        return
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def wait_observing(world: Chaos, moment: str) -> None:
    """Until observer processes are alive (and, mid-burst, part of the work is done)."""
    if moment == "early":
        wait_until(lambda: observers(world), 30, "observer processes started")
    else:
        wait_until(lambda: ai_observed(world) >= SESSIONS * EVENTS // 3 and observers(world),
                   60, "a third of the burst observed, observers alive")


def check_exactly_once(world: Chaos, figures) -> None:
    """Restart; every event ends done with exactly one AI observation."""
    started = time.monotonic()
    world.start_worker()
    wait_until(lambda: world.query("SELECT count(*) FROM events WHERE event_name = "
                                   "'PostToolUse' AND status != 'done'")[0][0] == 0,
               60, "events still not done after the restart")
    figures["drain_after_restart_s"] = round(time.monotonic() - started, 2)
    per_event = world.query("""
        SELECT e.tool_use_id, count(DISTINCT s.observation_id) FROM events AS e
        LEFT JOIN observation_sources AS s ON s.event_id = e.id AND s.kind = 'ai'
        WHERE e.event_name = 'PostToolUse' GROUP BY e.id""")
    assert len(per_event) == SESSIONS * EVENTS
    assert {t: n for t, n in per_event if n != 1} == {}
    titles = sorted(t for (t,) in world.query(
        "SELECT title FROM observations WHERE backend = 'ai'"))
    assert titles == sorted(f"Ran: echo step {s * 1000 + n}"
                            for s in range(SESSIONS) for n in range(EVENTS))
    assert world.integrity() == "ok"


@pytest.mark.parametrize("moment", ["early", "mid"])
def test_sigkill_with_observers_running_leaves_no_process(fake_world, figures, moment):
    world = fake_world
    pid = world.start_worker()
    send_burst(world)
    wait_observing(world, moment)
    alive = observers(world)
    done_at_kill = ai_observed(world)
    world.kill_worker(signal.SIGKILL)
    killed_at = time.monotonic()
    reap(pid)
    figures["moment"] = moment
    figures["observer_procs_at_kill"] = len(alive)
    figures["ai_observed_at_kill"] = done_at_kill
    assert alive, "no observer process was running at the kill"
    assert done_at_kill < SESSIONS * EVENTS, "the burst was over before the kill"
    with contextlib.suppress(AssertionError):
        wait_until(lambda: not world.processes(), 2.0, "processes of the data dir")
    gone_s = time.monotonic() - killed_at
    survivors = world.processes()
    figures["survivors"] = len(survivors)
    figures["vanish_s"] = round(gone_s, 3)
    assert not survivors, f"survived the worker's SIGKILL by 2 s: {sorted(survivors)}"
    check_exactly_once(world, figures)


@pytest.mark.parametrize("moment", ["early", "mid"])
def test_sigterm_with_observers_running_stops_everything(fake_world, figures, moment):
    world = fake_world
    pid = world.start_worker()
    send_burst(world)
    wait_observing(world, moment)
    alive = observers(world)
    assert alive, "no observer process was running at the SIGTERM"
    figures["moment"] = moment
    figures["observer_procs_at_term"] = len(alive)
    world.kill_worker(signal.SIGTERM)
    started = time.monotonic()
    with contextlib.suppress(AssertionError):
        wait_until(lambda: not world.processes(), 5.0, "processes of the data dir")
    took = time.monotonic() - started
    reap(pid)
    survivors = world.processes()
    figures["sigterm_shutdown_s"] = round(took, 3)
    figures["survivors"] = len(survivors)
    assert not survivors, f"still alive 5 s after SIGTERM: {sorted(survivors)}"
    check_exactly_once(world, figures)
