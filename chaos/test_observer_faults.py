"""Scenario 3, a hung or broken observer: the fake CLI hangs, crashes, floods, prints
garbage or answers with a quota message, while one session sends its events through real
hook processes. The hook path never waits for the observer (every hook exits 0, prints
nothing and is fast), no event is lost or left ``processing``, the session recovers (the
rules fallback or a fresh conversation observes; a quota pauses the AI and provisional
rules observations keep the context), and no observer process outlives the scenario.

The worker has no setting for the observer's turn or connect timeout (60 s / 30 s, in
``ConversationConfig``): a test worker patches ``claude_factory`` to pass shorter ones
(``SHIM`` below) so a hung observer is given up on in a second, not in minutes.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import attrs
import pytest
from harness import FAKE_CLI_WORKER, Chaos, _environ, payload, wait_until

pytestmark = [pytest.mark.chaos, pytest.mark.timeout(150)]

SESSION = "faults-session"

# ``memlite worker run`` over the fake CLI (FAKE_CLI_WORKER), with the observer's turn and
# connect timeouts from CHAOS_TURN_TIMEOUT / CHAOS_CONNECT_TIMEOUT.
SHIM = f"""
import os, runpy, sys
from memlite.observer import backend
_factory = backend.claude_factory
def claude_factory(settings, governor, **overrides):
    overrides.setdefault("turn_timeout", float(os.environ["CHAOS_TURN_TIMEOUT"]))
    overrides.setdefault("connect_timeout", float(os.environ["CHAOS_CONNECT_TIMEOUT"]))
    return _factory(settings, governor, **overrides)
backend.claude_factory = claude_factory
sys.argv = [{str(FAKE_CLI_WORKER)!r}, *sys.argv[1:]]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


@attrs.frozen
class Case:
    mode: str
    events: int = 10
    turn_timeout: float = 1.0
    connect_timeout: float = 15.0
    ai: bool = False  # a fresh conversation observes every event (else the rules do)
    quota: bool = False


CASES = [
    Case("hang", events=5, turn_timeout=0.5),
    Case("crash"),
    Case("huge"),
    Case("garbage", events=5, turn_timeout=0.5),
    Case("quota", quota=True),
    Case("crash_init"),
    Case("hang_init", events=3, connect_timeout=1.5),
    Case("ok,crash", ai=True),  # a CLI that dies after one good turn: a fresh one each time
    Case("ok,huge", ai=True),
]


def start(world: Chaos, case: Case) -> int:
    from memlite.spawn import start_worker, worker_command

    world.env.update(CHAOS_TURN_TIMEOUT=str(case.turn_timeout),
                     CHAOS_CONNECT_TIMEOUT=str(case.connect_timeout))
    argv = [sys.executable, "-c", SHIM,
            *worker_command(world.data_dir, python=sys.executable)[3:]]
    with _environ(world.env):
        info = start_worker(world.data_dir, argv=argv, timeout=30).info
    assert info is not None
    return info.pid


@pytest.fixture
def make_world(data_dir: Path) -> Iterator:
    made: list[Chaos] = []

    def make(mode: str) -> Chaos:
        chaos = Chaos.create(data_dir, fake_cli=True, FAKE_CLAUDE_MODE=mode,
                             FAKE_CLAUDE_LOG=str(data_dir.parent / "fake.jsonl"))
        made.append(chaos)
        return chaos

    yield make
    for chaos in made:
        from memlite.spawn import stop_worker

        left: set[int] = set()
        try:
            with contextlib.suppress(Exception):
                stop_worker(chaos.data_dir, grace=5.0)
            with contextlib.suppress(AssertionError):
                wait_until(lambda c=chaos: not c.processes(), 2.0, "after the stop")
            left = chaos.processes()
        finally:
            chaos.stop()
        assert not left, f"processes outlived the worker's stop: {sorted(left)}"


def statuses(world: Chaos) -> dict[str, int]:
    return dict(world.query("SELECT status, count(*) FROM events "
                            "WHERE event_name = 'PostToolUse' GROUP BY status"))


def observed(world: Chaos) -> dict[str, int]:
    """tool_use_id -> observations linked to it (any backend, superseded ones excluded)."""
    return dict(world.query("""
        SELECT e.tool_use_id, count(DISTINCT s.observation_id) FROM events AS e
        LEFT JOIN observation_sources AS s ON s.event_id = e.id
        WHERE e.event_name = 'PostToolUse' GROUP BY e.id"""))


def settle(world: Chaos, predicate, timeout: float, what: str) -> None:
    try:
        wait_until(predicate, timeout, what)
    except AssertionError as exc:
        raise AssertionError(f"{exc}; statuses {statuses(world)}, observations per "
                             f"event {observed(world)}") from None


def cli_processes(world: Chaos) -> int:
    """Fake CLI processes started (one ``argv`` line each in FAKE_CLAUDE_LOG)."""
    log = Path(world.env["FAKE_CLAUDE_LOG"])
    lines = log.read_text().splitlines() if log.exists() else []
    return sum('"kind": "argv"' in line for line in lines)


def observers(world: Chaos) -> set[int]:
    return world.processes() - world.workers()


@pytest.mark.parametrize("case", CASES, ids=[c.mode for c in CASES])
def test_broken_observer_never_blocks_hooks_nor_loses_events(make_world, figures, case):
    world = make_world(case.mode)
    start(world, case)
    status, _ = world.api("POST", "/api/sessions", {
        "session_id": SESSION, "hook_event_name": "SessionStart", "source": "startup",
        "cwd": "/tmp/faults-project"})
    assert status == 200
    tools = [f"toolu_fault_{n:03d}" for n in range(case.events)]
    took = []
    for n, tool_use_id in enumerate(tools):
        code, out, seconds = world.hook("PostToolUse", payload(
            "PostToolUse.Bash", session_id=SESSION, tool_use_id=tool_use_id,
            cwd="/tmp/faults-project", tool_input={"command": f"make target{n}"}))
        assert (code, out) == (0, b""), (tool_use_id, code, out)
        took.append(seconds)
    last_hook = time.monotonic()
    took.sort()
    p50, p99 = took[len(took) // 2], took[min(len(took) - 1, int(len(took) * 0.99))]
    figures["mode"] = case.mode
    figures["events"] = case.events
    figures["hook_p50_s"] = round(p50, 3)
    figures["hook_p99_s"] = round(p99, 3)
    assert p99 < 1.0, f"a hook waited: {took}"

    if case.quota:
        # The AI is paused (the health line says so); every event keeps a provisional
        # rules observation for the context and stays pending (never processing, lost).
        settle(world, lambda: observed(world).get(tools[0], 0) >= 1, 20,
               "the first event's provisional observation (the pause)")
        _, health = world.api("GET", "/api/health")
        figures["health"] = health["observer"]
        assert "paused" in (health["observer"] or ""), health
        figures["statuses"] = statuses(world)
        figures["provisional"] = sum(1 for t in tools if observed(world).get(t, 0) >= 1)
        settle(world, lambda: all(observed(world).get(t, 0) >= 1 for t in tools)
               and set(statuses(world)) <= {"pending"}, 10,
               "provisional observations of every event, all pending")
        backends = dict(world.query("SELECT backend, count(*) FROM observations "
                                    "GROUP BY backend"))
        assert backends == {"rules": case.events}, backends
    else:
        settle(world, lambda: statuses(world) == {"done": case.events}, 60,
               "every event observed")
        wanted = "ai" if case.ai else "rules"
        per_event = dict(world.query(f"""
            SELECT e.tool_use_id, count(DISTINCT s.observation_id) FROM events AS e
            LEFT JOIN observation_sources AS s ON s.event_id = e.id AND s.kind = '{wanted}'
            WHERE e.event_name = 'PostToolUse' GROUP BY e.id"""))
        assert sorted(per_event) == tools  # none lost
        assert {t: n for t, n in per_event.items() if n != 1} == {}, per_event
        if case.ai:  # each crash after a good turn: a fresh CLI for the next event
            assert cli_processes(world) >= case.events // 2
    figures["recovery_s"] = round(time.monotonic() - last_hook, 2)
    figures["statuses"] = statuses(world)
    figures["observations"] = dict(world.query(
        "SELECT backend, count(*) FROM observations GROUP BY backend"))
    figures["cli_processes"] = cli_processes(world)
    assert world.integrity() == "ok"
    if not case.ai:
        # Every conversation of a broken observer was killed: no observer process is left
        # (a working one may idle for OBSERVER_IDLE_MINUTES, so only for the broken ones).
        with contextlib.suppress(AssertionError):
            wait_until(lambda: not observers(world), 5, "observer processes")
        figures["observers_left"] = len(observers(world))
        assert not observers(world), sorted(observers(world))
