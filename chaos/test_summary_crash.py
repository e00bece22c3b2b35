"""Scenario: the worker dies or stops in the middle of a session's AI summary (issue 13).

Real hook processes, a real worker observing through the fake CLI, whose summary turn is
slow (``FAKE_CLAUDE_SUMMARY_DELAY``):

* SIGKILL while the summary is being made: the Stop stays ``processing`` (never
  ``skipped`` without its summary); the next worker requeues it at start, rings the
  session, and the AI summary is made then. The orphaned observer CLI is reaped.
* SIGTERM (``memlite worker stop``) while the summary is being made: the worker waits
  ``SHUTDOWN_SUMMARY_WAIT_SECONDS`` for it, then stores the rules summary with the Stop
  ``done``, and still exits within its 4 s grace.
"""

from __future__ import annotations

import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from harness import Chaos, payload, wait_until

from memlite.lifecycle import pid_alive

pytestmark = [pytest.mark.chaos, pytest.mark.timeout(180)]

SESSION = "summary-crash-session"
PROMPT = "rename greet to hello"


@pytest.fixture
def make_world(data_dir: Path) -> Iterator:
    made: list[Chaos] = []

    def make(**env: str) -> Chaos:
        chaos = Chaos.create(data_dir, fake_cli=True, FAKE_CLAUDE_MODE="ok",
                             FAKE_CLAUDE_LOG=str(data_dir.parent / "fake.jsonl"), **env)
        made.append(chaos)
        return chaos

    yield make
    for chaos in made:
        chaos.stop()
        assert not chaos.processes(), sorted(chaos.processes())


def fake_log(world: Chaos) -> list[dict]:
    path = Path(world.env["FAKE_CLAUDE_LOG"])
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def summary_started(world: Chaos) -> bool:
    return any(entry["kind"] == "summary_start" for entry in fake_log(world))


def stop_status(world: Chaos) -> str | None:
    rows = world.query("SELECT status FROM events WHERE event_name = 'Stop'")
    return rows[0][0] if rows else None


def summaries(world: Chaos) -> list[str]:
    return [r[0] for r in world.query("SELECT request FROM summaries ORDER BY id")]


def run_session(world: Chaos, *, end: bool) -> None:
    """A short session as hooks send it: start, a prompt, a tool, Stop (and SessionEnd)."""
    steps = [("SessionStart", payload("SessionStart.startup", session_id=SESSION)),
             ("UserPromptSubmit", payload("UserPromptSubmit", session_id=SESSION,
                                          prompt=PROMPT)),
             ("PostToolUse", payload("PostToolUse.Bash", session_id=SESSION,
                                     tool_use_id="toolu_summary_1",
                                     tool_input={"command": "sed -i s/greet/hello/ a.py"})),
             ("Stop", payload("Stop", session_id=SESSION,
                              last_assistant_message="Renamed greet to hello."))]
    if end:
        steps.append(("SessionEnd", payload("SessionEnd.other", session_id=SESSION,
                                            reason="prompt_input_exit")))
    for name, data in steps:
        code, out, _ = world.hook(name, data)
        assert code == 0, (name, out)


def test_sigkill_mid_summary_the_summary_is_made_after_the_restart(make_world, figures):
    world = make_world(FAKE_CLAUDE_SUMMARY_DELAY="600")
    first = world.start_worker()
    run_session(world, end=False)
    wait_until(lambda: summary_started(world), 60, "the AI summary turn started")
    assert stop_status(world) == "processing"
    world.kill_worker(signal.SIGKILL)
    wait_until(lambda: not pid_alive(first), 10, "the worker died")
    assert summaries(world) == [] and stop_status(world) == "processing"

    world.env["FAKE_CLAUDE_SUMMARY_DELAY"] = "0"
    restarted = time.monotonic()
    world.start_worker()
    took = wait_until(lambda: summaries(world), 60, "the summary after the restart")
    figures["restart_to_summary_s"] = round(time.monotonic() - restarted, 2)
    figures["summary_wait_after_ready_s"] = round(took, 2)
    assert summaries(world) == ["fake AI summary"]  # the AI's, made after the restart
    wait_until(lambda: stop_status(world) == "done", 5, "the Stop done")
    assert world.integrity() == "ok"
    # The CLI orphaned by the SIGKILL (asleep in its summary turn) was reaped at start.
    turns = [e["pid"] for e in fake_log(world) if e["kind"] == "summary_start"]
    figures["summary_turns"] = len(turns)
    wait_until(lambda: not pid_alive(turns[0]), 10, "the orphaned observer CLI reaped")

def test_sigterm_mid_summary_stores_the_rules_summary_within_the_grace(make_world, figures):
    from memlite.spawn import stop_worker

    world = make_world(FAKE_CLAUDE_SUMMARY_DELAY="30")
    world.start_worker()
    run_session(world, end=True)  # claude -p: Stop and SessionEnd back to back
    wait_until(lambda: summary_started(world), 60, "the AI summary turn started")
    started = time.monotonic()
    stop_worker(world.data_dir, grace=10.0)
    took = time.monotonic() - started
    figures["stop_s"] = round(took, 2)
    assert took < 5.0, f"the worker took {took:.1f} s to stop"
    assert summaries(world) == [PROMPT]  # the rules summary: request = the first prompt
    assert stop_status(world) == "done"
    assert world.integrity() == "ok"
