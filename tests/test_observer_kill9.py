"""``kill -9`` of a REAL worker mid-session (issue 5, "Done when").

A worker process (started like ``memlite worker start`` does, through ``start_worker``)
observes with the claude backend over the fake stream-json CLI
(``tests/observer/fake_claude.py``, via ``memlite_fake_cli_worker.py``), which answers a
valid ``<observation>`` every turn. 200 PostToolUse events of one session go in through
``POST /api/events``; once the observer is part-way through them the worker is SIGKILLed.
Then: no observer process may survive it (launcher + fake CLI, found in /proc by the
``MEMLITE_OBSERVER_ID`` marker or their command line, within 1 s for the parent-death
watch), and after a restart every event ends with exactly one AI observation, checked on
a read-only connection.
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

import apsw
import pytest
from ports import free_port
from procroot import PROC  # noqa: E402

from memlite.lifecycle import pid_alive
from memlite.spawn import start_worker, worker_env
from memlite.storage.db import db_path

pytestmark = [pytest.mark.timeout(90)]  # ~5 s: not marked slow

HERE = Path(__file__).resolve().parent
SHIM = HERE / "observer" / "memlite_fake_cli_worker.py"
FAKE = HERE / "observer" / "fake_claude_echo.py"
EVENTS = 200
SESSION = "kill9-session"


def wait_until(predicate: Callable[[], object], timeout: float, what: str) -> float:
    started = time.monotonic()
    while not predicate():
        assert time.monotonic() - started < timeout, f"timed out after {timeout} s: {what}"
        time.sleep(0.02)
    return time.monotonic() - started


def rows(data_dir: Path, sql: str) -> list[tuple]:
    """Read-only: never the writer, never a WAL checkpoint of ours."""
    conn = apsw.Connection(str(db_path(data_dir)), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        conn.setbusytimeout(5000)
        return [tuple(r) for r in conn.execute(sql)]
    finally:
        conn.close()


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:  # gone, or a zombie
        return b""


def observer_processes(data_dir: Path) -> dict[int, str]:
    """Live processes of this data dir's observers: the marker in their environment, or
    the fake CLI / our launcher on their command line with this data dir's environment."""
    ours = f"MEMLITE_DATA_DIR={data_dir}".encode()
    registry = f"MEMLITE_OBSERVER_REGISTRY={data_dir / 'observers'}".encode()
    found = {}
    for entry in os.listdir(PROC):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        environ = _read(f"{PROC}/{entry}/environ").split(b"\0")
        cmdline = _read(f"{PROC}/{entry}/cmdline").replace(b"\0", b" ")
        marked = any(v.startswith(b"MEMLITE_OBSERVER_ID=") for v in environ)
        runs_cli = str(FAKE).encode() in cmdline or b"observer/launcher.py" in cmdline
        if (marked or runs_cli) and (ours in environ or registry in environ):
            found[int(entry)] = cmdline.decode(errors="replace")
    return found


def post(port: int, token: str, path: str, body: dict) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("POST", path, json.dumps(body), {
            "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        response = conn.getresponse()
        data = response.read()
        assert response.status == 200, (response.status, data)
        return json.loads(data)
    finally:
        conn.close()


def event(n: int) -> dict:
    return {"session_id": SESSION, "hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_use_id": f"toolu_kill9_{n:04d}", "cwd": "/tmp/kill9-project",
            "tool_input": {"command": f"echo step {n}"},
            "tool_response": {"stdout": f"step {n}", "stderr": "", "interrupted": False}}


def ai_observed(data_dir: Path) -> int:
    return rows(data_dir, "SELECT count(DISTINCT event_id) FROM observation_sources "
                          "WHERE kind = 'ai'")[0][0]


def unfinished(data_dir: Path) -> int:
    return rows(data_dir, "SELECT count(*) FROM events "
                          "WHERE status IN ('pending', 'processing')")[0][0]


def test_kill9_mid_session_leaves_no_observer_and_one_observation_per_event(data_dir):
    env = {**worker_env(), "MEMLITE_WORKER_PORT": str(free_port()),
           "MEMLITE_OBSERVER": "claude", "MEMLITE_DATA_DIR": str(data_dir)}
    for key in [k for k in env if k.startswith("FAKE_CLAUDE_")]:
        del env[key]
    # A valid <observation> every turn, titled after the event ("Ran: echo step 7").
    env["MEMLITE_TEST_FAKE_CLI"] = str(FAKE)
    env["FAKE_CLAUDE_DELAY"] = "0.01"  # >= 2 s of observing: the kill lands mid-session
    env["FAKE_CLAUDE_LOG"] = str(data_dir.parent / "fake.jsonl")
    argv = [sys.executable, str(SHIM), "worker", "run", "--data-dir",
            os.path.realpath(data_dir)]
    started: list[int] = []
    try:
        info = start_worker(data_dir, argv=argv, env=env).info
        assert info is not None
        started.append(info.pid)
        token = (data_dir / "token").read_text().strip()
        post(info.port, token, "/api/sessions", {
            "session_id": SESSION, "hook_event_name": "SessionStart", "source": "startup",
            "cwd": "/tmp/kill9-project"})
        ids = [post(info.port, token, "/api/events", event(n))["event_id"]
               for n in range(EVENTS)]
        assert len(set(ids)) == EVENTS

        # Mid-session: some events observed, not all, and the observer's processes up.
        wait_until(lambda: ai_observed(data_dir) >= 20, 30, "the first AI observations")
        before_kill = observer_processes(data_dir)
        observed_at_kill = ai_observed(data_dir)
        os.kill(info.pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(info.pid, 0)  # our child (start_worker spawned it): reap it now
        assert observed_at_kill < EVENTS, "the observer finished before the kill"
        assert before_kill, "no observer process was running at the kill"
        assert any(str(FAKE) in c for c in before_kill.values()), before_kill

        # No survivor: the launcher's parent watch (0.2 s) kills its group.
        gone_after = wait_until(lambda: not observer_processes(data_dir), 1.0,
                                f"observer processes survived: {observer_processes(data_dir)}")
        left = list((data_dir / "observers").glob("*.json"))

        # Restart; the new worker reaps the registry, requeues and observes the rest.
        info = start_worker(data_dir, argv=argv, env=env).info
        assert info is not None
        started.append(info.pid)
        wait_until(lambda: unfinished(data_dir) == 0, 40, "events still pending")

        per_event = dict(rows(data_dir, """
            SELECT e.id, count(DISTINCT s.observation_id) FROM events AS e
            LEFT JOIN observation_sources AS s ON s.event_id = e.id AND s.kind = 'ai'
            WHERE e.event_name = 'PostToolUse' AND e.session_id = 'kill9-session'
            GROUP BY e.id"""))
        statuses = dict(rows(data_dir, "SELECT status, count(*) FROM events "
                                       "WHERE event_name = 'PostToolUse' GROUP BY status"))
        assert sorted(per_event) == sorted(ids)
        assert statuses == {"done": EVENTS}, statuses
        assert {eid: n for eid, n in per_event.items() if n != 1} == {}
        assert rows(data_dir, "SELECT count(*) FROM observations WHERE backend = 'ai'") == \
            [(EVENTS,)]
        titles = rows(data_dir, "SELECT title FROM observations WHERE backend = 'ai'")
        assert sorted(t for (t,) in titles) == sorted(f"Ran: echo step {n}"
                                                      for n in range(EVENTS))
        assert rows(data_dir, "SELECT count(*) FROM observation_sources WHERE kind = 'ai'") \
            == [(EVENTS,)], "an AI observation linked to more than one event"
        assert rows(data_dir, "PRAGMA integrity_check") == [("ok",)]
        owners = [json.loads(p.read_text()).get("owner")
                  for p in (data_dir / "observers").glob("*.json")]
        assert started[0] not in owners, "the dead worker's registry entries were not reaped"
        log = [json.loads(line) for line in
               (data_dir.parent / "fake.jsonl").read_text().splitlines()]
        turns = sum(e["kind"] == "turn" for e in log)
        clis = sum(e["kind"] == "argv" for e in log)
        assert turns >= EVENTS
        print(f"\n{turns} fake-CLI turns in {clis} CLI processes "
              f"({turns - EVENTS} re-asked after the kill); kill -9 after "
              f"{observed_at_kill}/{EVENTS} AI observations; "
              f"{len(before_kill)} observer processes at the kill, none "
              f"{gone_after:.2f} s later; {len(left)} registry entries left by the dead "
              f"worker; after restart {EVENTS}/{EVENTS} events with exactly one AI "
              "observation")
    finally:
        for pid in started:
            if pid_alive(pid):  # by pid: SIGTERM, and SIGKILL if it will not go
                os.kill(pid, signal.SIGTERM)
                with contextlib.suppress(AssertionError):
                    wait_until(lambda pid=pid: not pid_alive(pid), 10, "worker exit")
                if pid_alive(pid):
                    os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
        wait_until(lambda: not observer_processes(data_dir), 5, "observers after the stop")
