"""Scenario 1, crash mid-burst: 8 concurrent sessions fire hook events while the worker is
SIGKILLed 3 times at seeded random moments. A hook that finds the worker down spools its
event and starts a new worker. Afterwards every event whose hook exited 0 is stored, once,
with its content; the database is intact; observations are not duplicated.

``MEMLITE_CHAOS_EVENTS`` sets the burst's size: the issue's full size is 2000, which took
91-92 s here (2 cores shared with other jobs); the default, 1500, keeps the burst near
30-60 s. ``MEMLITE_CHAOS_SEED`` sets the seed of the kill moments.
"""

from __future__ import annotations

import json
import os
import random
import signal
import statistics
import threading
import time
from pathlib import Path

import pytest
from harness import payload, wait_until

from memlite.hooks import spool

EVENTS = int(os.environ.get("MEMLITE_CHAOS_EVENTS", "1500"))
SEED = int(os.environ.get("MEMLITE_CHAOS_SEED", "20261130"))
SESSIONS = 8
KILLS = 3
PROMPT_EVERY = 12  # a UserPromptSubmit now and then

pytestmark = [pytest.mark.chaos, pytest.mark.timeout(300)]


def _plan(total: int) -> list[list[tuple[str, dict]]]:
    """Per session: (hook event name, stdin) in the order a session sends them."""
    plans: list[list[tuple[str, dict]]] = [[] for _ in range(SESSIONS)]
    for s in range(SESSIONS):
        sid = f"chaos-burst-{s:02d}"
        share = total // SESSIONS + (1 if s < total % SESSIONS else 0)
        plans[s].append(("SessionStart", payload("SessionStart.startup", session_id=sid)))
        for i in range(1, share):
            if i % PROMPT_EVERY == 0:
                plans[s].append(("UserPromptSubmit", payload(
                    "UserPromptSubmit", session_id=sid, prompt=f"prompt {s}-{i}: go on")))
            else:
                plans[s].append(("PostToolUse", payload(
                    "PostToolUse.Bash", session_id=sid, tool_use_id=f"toolu_cb_{s:02d}_{i:05d}",
                    tool_input={"command": f"grep -c 'burst {s} {i}' notes.txt",
                                "description": f"step {i} of session {s}"})))
    return plans


def _spooled(data_dir: Path) -> list[dict]:
    found = []
    for path in (data_dir / "spool").glob("*.*"):
        if spool.is_spool_file(path.name):  # not the quarantine
            found += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return found


def test_worker_sigkilled_three_times_mid_burst(world, figures):
    rng = random.Random(SEED)
    plans = _plan(EVENTS)
    total = sum(len(p) for p in plans)
    # Kill after these many hooks have completed (spread over the middle of the burst).
    kill_at = sorted(rng.sample(range(total // 10, total * 8 // 10), KILLS))
    figures["seed"] = SEED
    figures["events_sent"] = total
    world.start_worker()

    done = 0
    done_lock = threading.Lock()
    kill_now = threading.Semaphore(0)
    results: list[tuple[str, str, dict, int, bytes, float]] = []
    errors: list[BaseException] = []
    kills: list[tuple[int, float]] = []  # (pid, monotonic time)
    finished = threading.Event()
    recovered: list[float] = []

    def session(plan: list[tuple[str, dict]]) -> None:
        nonlocal done
        try:
            for name, data in plan:
                code, out, took = world.hook(name, data, timeout=30)
                with done_lock:
                    results.append((name, data["session_id"], data, code, out, took))
                    done += 1
                    if done in kill_at:
                        kill_now.release()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def killer() -> None:
        last = None
        for _ in range(KILLS):
            while not kill_now.acquire(timeout=0.1):
                if finished.is_set():
                    return
            # A new worker (not the one killed last) must be up to be killed again.
            deadline = time.monotonic() + 15
            pid = world.worker_pid()
            while (pid is None or pid == last) and time.monotonic() < deadline:
                time.sleep(0.02)
                pid = world.worker_pid()
            if pid is None or pid == last:
                errors.append(AssertionError("no new worker came up to be killed"))
                return
            os.kill(pid, signal.SIGKILL)
            kills.append((pid, time.monotonic()))
            last = pid
        # Recovery: from the last kill until a new worker answers /api/health.
        killed = {p for p, _ in kills}
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            pid = world.worker_pid()
            if pid is not None and pid not in killed:
                try:
                    if world.api("GET", "/api/health", timeout=2)[0] == 200:
                        recovered.append(time.monotonic() - kills[-1][1])
                        return
                except OSError:
                    pass
            time.sleep(0.02)

    started = time.monotonic()
    threads = [threading.Thread(target=session, args=(plan,)) for plan in plans]
    killing = threading.Thread(target=killer)
    killing.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=240)
    finished.set()
    killing.join(timeout=30)
    burst_s = time.monotonic() - started
    assert not errors, errors
    assert all(not t.is_alive() for t in threads)
    figures["kills"] = len(kills)
    figures["burst_s"] = round(burst_s, 1)
    assert len(kills) == KILLS

    times = sorted(r[5] for r in results)
    figures["hook_p50_s"] = round(statistics.median(times), 3)
    figures["hook_p99_s"] = round(times[int(len(times) * 0.99) - 1], 3)
    figures["hook_max_s"] = round(times[-1], 3)
    bad = [(r[0], r[1], r[3], r[4][:200]) for r in results if (r[3], r[4]) != (0, b"")]
    acked = [r for r in results if r[3] == 0]
    figures["acked"] = len(acked)

    # Recovery: a healthy worker (not one we killed) and every acked event stored.
    killed = {pid for pid, _ in kills}

    def healthy() -> bool:
        pid = world.worker_pid()
        if pid is None or pid in killed:
            return False
        try:
            return world.api("GET", "/api/health", timeout=2)[0] == 200
        except OSError:
            return False

    wait_until(healthy, 30, "a healthy worker after the burst")
    tool_ids = {r[2]["tool_use_id"] for r in acked if r[0] == "PostToolUse"}

    def stored_tools() -> int:
        return world.query("SELECT count(DISTINCT tool_use_id) FROM events "
                           "WHERE tool_use_id LIKE 'toolu_cb_%'")[0][0]

    try:
        wait_until(lambda: stored_tools() >= len(tool_ids), 30, "every acked event stored")
    except AssertionError:
        pass  # counted and reported below
    assert recovered, "no healthy worker within 30 s of the last kill"
    figures["recover_s"] = round(recovered[0], 2)
    figures["all_stored_after_last_kill_s"] = round(time.monotonic() - kills[-1][1], 2)

    rows = world.query("SELECT session_id, event_name, tool_use_id, payload FROM events "
                       "WHERE session_id LIKE 'chaos-burst-%'")
    by_tool: dict[str, list[tuple]] = {}
    for row in rows:
        if row[2] is not None:
            by_tool.setdefault(row[2], []).append(row)
    duplicates = sum(len(v) - 1 for v in by_tool.values())
    dup_keys = world.query("SELECT session_id, event_name, content_hash, count(*) FROM events "
                           "GROUP BY session_id, event_name, content_hash HAVING count(*) > 1")
    missing, wrong = [], []
    for name, sid, data, _code, _out, _took in acked:
        if name == "PostToolUse":
            found = by_tool.get(data["tool_use_id"], [])
            if not found:
                missing.append(data["tool_use_id"])
                continue
            stored = json.loads(found[0][3])
            if (found[0][0], found[0][1], stored.get("tool_input")) != (
                    sid, "PostToolUse", data["tool_input"]):
                wrong.append((data["tool_use_id"], found[0][:3], stored.get("tool_input")))
    prompts_stored = {(r[0], json.loads(r[3]).get("prompt")) for r in rows
                      if r[1] == "UserPromptSubmit"}
    missing += [f"{r[1]}:{r[2]['prompt']}" for r in acked if r[0] == "UserPromptSubmit"
                and (r[1], r[2]["prompt"]) not in prompts_stored]
    starts_stored = {r[0] for r in rows if r[1] == "SessionStart"}
    missing += [f"{r[1]}:SessionStart" for r in acked if r[0] == "SessionStart"
                and r[1] not in starts_stored]
    figures["stored"] = len(rows)
    figures["lost"] = len(missing)
    figures["duplicates"] = duplicates + len(dup_keys)
    spool_left = _spooled(world.data_dir)
    figures["spool_lines_left"] = len(spool_left)

    # Let the rules observer finish (observations are made after the events are stored).
    def pending() -> int:
        return world.query("SELECT count(*) FROM events WHERE status IN "
                           "('pending', 'processing')")[0][0]

    try:
        wait_until(lambda: pending() == 0, 30, "every event observed")
    except AssertionError:
        pass  # recorded below
    figures["unobserved_left"] = pending()
    integrity = world.integrity()
    obs_dups = world.query("SELECT event_id, kind, count(*) FROM observation_sources "
                           "GROUP BY event_id, kind HAVING count(*) > 1")
    hash_dups = world.query("SELECT content_hash, count(*) FROM observations "
                            "GROUP BY content_hash HAVING count(*) > 1")
    figures["observations"] = world.query("SELECT count(*) FROM observations")[0][0]

    assert bad == [], bad[:5]
    in_spool = {line["payload"].get("tool_use_id") for line in spool_left}
    assert missing == [], (f"{len(missing)} acked events not stored "
                           f"({len(set(missing) & in_spool)} of them still in the spool): "
                           f"{missing[:10]}")
    assert wrong == [], wrong[:5]
    assert (duplicates, dup_keys) == (0, [])
    assert len(rows) == len(acked)
    assert integrity == "ok"
    assert obs_dups == [] and hash_dups == []
