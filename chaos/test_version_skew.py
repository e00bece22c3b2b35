"""Scenario 7, version skew: a worker of an older memlite is running when hooks of the new
one arrive, several at once. It must be replaced exactly once (one new worker, the old one
gone), with no replacement loop, and every event stored.

The old worker is faked as tests/test_worker.py does: ``MEMLITE_WORKER_VERSION_OVERRIDE``
makes it report an older version; the hooks run without it, so they expect the installed
``memlite.__version__``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import pytest
from harness import REPO, payload, wait_until

from memlite import __version__
from memlite.lifecycle import pid_alive, read_pidfile

pytestmark = [pytest.mark.chaos, pytest.mark.timeout(120)]

OLD = "0.0.1-old"
HOOKS = 6
STABLE_S = 5.0


def _start_old(world) -> int:
    result = subprocess.run([sys.executable, "-m", "memlite", "worker", "start", "--json"],
                            env={**world.env, "MEMLITE_WORKER_VERSION_OVERRIDE": OLD},
                            capture_output=True, text=True, timeout=60, cwd=REPO)
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["version"] == OLD
    return int(info["pid"])


def _fire(world, jobs: list[tuple[str, dict]]) -> list[tuple[int, bytes, float]]:
    barrier = threading.Barrier(len(jobs))
    results: list[tuple[int, bytes, float] | BaseException] = [None] * len(jobs)  # type: ignore[list-item]

    def one(i: int) -> None:
        try:
            barrier.wait(timeout=20)
            results[i] = world.hook(*jobs[i])
        except BaseException as exc:  # noqa: BLE001 - reported below
            results[i] = exc

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert all(isinstance(r, tuple) for r in results), results
    return results  # type: ignore[return-value]


def _jobs(tag: str) -> list[tuple[str, dict]]:
    sid = f"skew-{tag}"
    jobs = [("SessionStart", payload("SessionStart.startup", session_id=sid))]
    jobs += [("PostToolUse", payload("PostToolUse.Bash", session_id=sid,
                                     tool_use_id=f"toolu_skew_{tag}_{i}",
                                     tool_input={"command": f"echo skew {tag} {i}"}))
             for i in range(HOOKS - 1)]
    return jobs


def _settle_and_check(world, figures, old_pid: int, tag: str, started: float) -> None:
    """One new worker of the hooks' version, the old one gone, stable for STABLE_S."""
    def replaced() -> bool:
        info = read_pidfile(world.data_dir)
        return (not pid_alive(old_pid) and info is not None and info.version == __version__
                and world.workers() == {info.pid})

    try:
        wait_until(replaced, 10, "the old worker replaced by one of the new version")
    finally:
        info = read_pidfile(world.data_dir)
        figures["old_worker_alive"] = pid_alive(old_pid)
        figures["running_version"] = info.version if info else None
        figures["workers"] = len(world.workers())
    figures["replace_s"] = round(time.monotonic() - started, 2)
    new_pid = world.worker_pid()
    seen = {new_pid}
    stable_until = time.monotonic() + STABLE_S
    while time.monotonic() < stable_until:  # no replacement loop
        seen |= world.workers()
        time.sleep(0.1)
    figures["replacements"] = len(seen)
    assert seen == {new_pid} and world.worker_pid() == new_pid
    assert world.api("GET", "/api/health")[0] == 200

    jobs = _jobs(tag)
    wanted = {d["tool_use_id"] for n, d in jobs if n == "PostToolUse"}

    def stored() -> set[str]:
        return {r[0] for r in world.query(
            "SELECT tool_use_id FROM events WHERE session_id = ? AND tool_use_id IS NOT NULL",
            (f"skew-{tag}",))}

    wait_until(lambda: stored() >= wanted, 15, "every event stored")
    count = world.query("SELECT count(*) FROM events WHERE session_id = ?",
                        (f"skew-{tag}",))[0][0]
    figures["events"] = count
    assert count == HOOKS  # the SessionStart too, each once
    assert world.integrity() == "ok"


def test_new_hooks_replace_an_old_worker_exactly_once(world, figures):
    """Only hooks of the new version arrive (nobody runs `memlite worker start`)."""
    old_pid = _start_old(world)
    started = time.monotonic()
    results = _fire(world, _jobs("hooks"))
    figures["hook_max_s"] = round(max(r[2] for r in results), 3)
    assert all((code, out) == (0, b"") or (code == 0 and name == "SessionStart")
               for (code, out, _), (name, _d) in zip(results, _jobs("hooks"), strict=True))
    _settle_and_check(world, figures, old_pid, "hooks", started)


def test_a_new_starter_racing_new_hooks_replaces_the_old_worker_once(world, figures):
    """A new-version `memlite worker start` and new hooks at once, against an old worker:
    hooks that hit the old worker while it is stopped spool and start one themselves."""
    old_pid = _start_old(world)
    started = time.monotonic()
    starter: list[subprocess.CompletedProcess[str]] = []
    run = threading.Thread(target=lambda: starter.append(subprocess.run(
        [sys.executable, "-m", "memlite", "worker", "start", "--json"], env=world.env,
        capture_output=True, text=True, timeout=60, cwd=REPO)))
    run.start()
    results = _fire(world, _jobs("race"))
    run.join(timeout=70)
    assert starter and starter[0].returncode == 0, starter and starter[0].stderr
    report = json.loads(starter[0].stdout)
    figures["starter_replaced"] = (report.get("replaced") or {}).get("pid") == old_pid
    figures["hook_max_s"] = round(max(r[2] for r in results), 3)
    assert all(code == 0 for code, _, _ in results)
    _settle_and_check(world, figures, old_pid, "race", started)
