"""Worker down: the hook spools, starts the worker, returns at once; nothing is lost."""

from __future__ import annotations

import json
import os
import signal
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from hookrun import (
    BARE,
    HOOK_TIMEOUT,
    fixture_bytes,
    healthy,
    log_lines,
    query,
    run_hook,
    wait_until,
    worker_pids,
)

from memlite.hooks import bootstrap
from memlite.lifecycle import pid_alive, read_pidfile


def test_worker_down_spools_starts_the_worker_and_the_event_arrives(hook_env, data_dir):
    stdin = fixture_bytes("PostToolUse.Bash", tool_use_id="toolu_d1",
                          tool_input={"command": "echo <private>x</private> AKIA2E0A8F3B244C9986"})
    result, elapsed = run_hook(hook_env, stdin, "PostToolUse")
    assert (result.returncode, result.stdout) == (0, b"")
    assert elapsed < HOOK_TIMEOUT, elapsed
    wait_until(lambda: healthy(hook_env))
    wait_until(lambda: query(data_dir, "SELECT count(*) FROM events WHERE tool_use_id = "
                             "'toolu_d1'") == [(1,)])
    [(payload,)] = query(data_dir, "SELECT payload FROM events WHERE tool_use_id = 'toolu_d1'")
    assert "AKIA" not in payload and "<private>" not in payload
    wait_until(lambda: not list((data_dir / "spool").glob("*.jsonl")))


def test_session_start_with_the_worker_down_and_no_memory_prints_nothing(hook_env, data_dir):
    # With memory, it prints the snapshot and spool instead: test_session_start_cold.py
    # How long it takes is bench/bench_cold_start.py's business (no wall time here: CI is
    # a loaded machine).
    result, _ = run_hook(hook_env, fixture_bytes("SessionStart.startup"), "SessionStart")
    assert (result.returncode, result.stdout) == (0, b"")
    wait_until(lambda: healthy(hook_env))
    wait_until(lambda: query(data_dir, "SELECT event_name FROM events") == [("SessionStart",)])


def test_without_a_worker_python_the_event_is_only_spooled(hook_env, data_dir):
    env = {k: v for k, v in hook_env.items() if k != "MEMLITE_PYTHON"}
    secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    result, _ = run_hook(env, fixture_bytes("UserPromptSubmit", prompt=f"hi {secret}"))
    assert (result.returncode, result.stdout) == (0, b"")
    [spooled] = list((data_dir / "spool").glob("*.jsonl"))
    record = json.loads(spooled.read_text())
    assert record["event"] == "UserPromptSubmit" and secret not in spooled.read_text()
    assert record["payload"]["prompt"] == "hi [REDACTED:github]"
    assert worker_pids(data_dir) == set()
    assert "not ready" in log_lines(data_dir)[-1]


def test_first_session_builds_the_plugin_venv_once_in_the_background(hook_env, data_dir,
                                                                     tmp_path):
    plugin_data = tmp_path / "plugin-data"
    env = {k: v for k, v in hook_env.items() if k != "MEMLITE_PYTHON"}
    env["CLAUDE_PLUGIN_DATA"] = str(plugin_data)
    result, elapsed = run_hook(env, fixture_bytes("SessionStart.startup"), "SessionStart")
    assert result.returncode == 0 and elapsed < HOOK_TIMEOUT
    # One line for the user (issue 16): why memory is not there yet.
    assert "setting up on first use" in json.loads(result.stdout)["systemMessage"]
    lock = plugin_data / bootstrap.LOCK_FILE
    builder = int(lock.read_text())
    assert pid_alive(builder) or (plugin_data / "venv").exists()
    run_hook(env, fixture_bytes("UserPromptSubmit"), "UserPromptSubmit")
    assert int(lock.read_text()) == builder  # not started twice
    assert len(list((data_dir / "spool").glob("*.jsonl"))) >= 1
    assert worker_pids(data_dir) == set()
    # Ready: the hook then starts the worker on the venv's python.
    os.killpg(builder, signal.SIGKILL)
    wait_until(lambda: not pid_alive(builder))
    venv_bin = plugin_data / "venv" / "bin"
    venv_bin.mkdir(parents=True, exist_ok=True)
    (venv_bin / "python").unlink(missing_ok=True)
    (venv_bin / "python").write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    (venv_bin / "python").chmod(0o755)
    (plugin_data / "venv" / bootstrap.READY_FILE).write_text("ready\n")
    result, _ = run_hook(env, fixture_bytes("Stop"), "Stop")
    wait_until(lambda: healthy(hook_env))
    wait_until(lambda: len(query(data_dir, "SELECT id FROM events")) == 3)


@pytest.mark.slow
def test_1000_events_across_a_killed_worker_arrive_exactly_once(worker, hook_env, data_dir):
    total = 1000
    killed = {}

    def fire(i: int) -> int:
        if i == 300 and not killed:
            info = read_pidfile(data_dir)
            assert info is not None
            os.kill(info.pid, signal.SIGKILL)
            killed["pid"] = info.pid
        stdin = fixture_bytes("PostToolUse.Bash", tool_use_id=f"toolu_k{i:04d}",
                              tool_input={"command": f"echo {i}"})
        result, elapsed = run_hook(hook_env, stdin, "PostToolUse")
        assert (result.returncode, result.stdout) == (0, b""), result
        return elapsed

    with ThreadPoolExecutor(max_workers=4) as pool:
        times = list(pool.map(fire, range(total)))
    assert max(times) < 3.0
    wait_until(lambda: healthy(hook_env), timeout=30)

    def stored() -> int:
        return query(data_dir, "SELECT count(*) FROM events WHERE tool_use_id LIKE 'toolu_k%'"
                     )[0][0]

    wait_until(lambda: stored() == total, timeout=30)
    # Lines spooled after the new worker's drains were also resent live (the hook resends
    # once it finds a ready worker): whatever is left in the spool is already stored, and
    # the next start drains it idempotently.
    stored_ids = {row[0] for row in query(data_dir, "SELECT tool_use_id FROM events")}
    for path in (data_dir / "spool").glob("*.jsonl"):
        for line in path.read_text().splitlines():
            assert json.loads(line)["payload"]["tool_use_id"] in stored_ids
    rows = query(data_dir, "SELECT tool_use_id, count(*) FROM events WHERE tool_use_id LIKE "
                 "'toolu_k%' GROUP BY tool_use_id HAVING count(*) > 1")
    assert rows == []
    assert killed["pid"] not in worker_pids(data_dir)
    assert BARE  # the hooks ran on the bare interpreter


def test_a_worker_of_another_data_directory_on_our_port_gets_nothing_and_loses_nothing(
        worker, hook_env, data_dir, tmp_path):
    """User trial (docs/user-trials.md): two installs on one port (two HOMEs or users on
    the default 37888, or a data directory moved while its old worker still runs). The
    other install's worker answers 401 to our token; the hook logged "refused" and DROPPED
    the event. It must be spooled for our own worker, with a line saying why."""
    other = tmp_path / "other-install"
    other.mkdir(mode=0o700)
    (other / "token").write_text("a-token-the-running-worker-does-not-know\n")
    (other / "token").chmod(0o600)
    env = {**hook_env, "MEMLITE_DATA_DIR": str(other)}
    env.pop("MEMLITE_PYTHON")  # its own worker cannot start (the port is taken anyway)
    result, _ = run_hook(env, fixture_bytes("UserPromptSubmit", session_id="sess-other",
                                            prompt="the other install's prompt"),
                         "UserPromptSubmit")
    assert (result.returncode, result.stdout) == (0, b"")
    spooled = [json.loads(line) for f in (other / "spool").glob("*.jsonl")
               for line in f.read_text().splitlines()]
    assert [r["payload"]["prompt"] for r in spooled] == ["the other install's prompt"]
    assert "401" in log_lines(other)[-1] and "spooled" in log_lines(other)[-1]
    assert query(data_dir, "SELECT count(*) FROM sessions WHERE id = 'sess-other'") \
        == [(0,)]


def test_a_hung_worker_that_resumes_keeps_each_session_closed_and_dated_by_its_hooks(
        worker, hook_env, data_dir, tmp_path):
    """User trial (docs/user-trials.md): the worker hung (SIGSTOP) through whole sessions.
    Each hook waited its deadline and spooled; on SIGCONT the worker answered the requests
    still queued on its socket (dated then) and the drain replayed the spooled copies (with
    their own, older times). 4 of 5 sessions ended ``active`` (the drained SessionStart
    came after the SessionEnd) and every session was dated when the worker resumed."""
    import time

    project = tmp_path / "proj"
    project.mkdir()
    sessions = [f"sess-hung-{i}" for i in range(3)]
    os.kill(worker["pid"], signal.SIGSTOP)
    try:
        for sid in sessions:
            for name, changes in (("SessionStart.startup", {}),
                                  ("UserPromptSubmit", {"prompt": f"prompt of {sid}"}),
                                  ("PostToolUse.Bash", {"tool_use_id": f"toolu_{sid}"}),
                                  ("SessionEnd.other", {})):
                result, _ = run_hook(hook_env, fixture_bytes(name, session_id=sid,
                                                             cwd=str(project), **changes),
                                     name.split(".")[0])
                assert result.returncode == 0
                assert name.startswith("SessionStart") or result.stdout == b""
        resumed_ms = int(time.time() * 1000)
        time.sleep(0.2)
    finally:
        os.kill(worker["pid"], signal.SIGCONT)

    def settled() -> bool:
        rows = query(data_dir, "SELECT count(*) FROM events WHERE session_id LIKE "
                     "'sess-hung-%'")
        return rows == [(4 * len(sessions),)]

    wait_until(settled, timeout=60)
    wait_until(lambda: not list((data_dir / "spool").glob("*.jsonl")), timeout=60)
    rows = query(data_dir, "SELECT id, status, started_at_epoch FROM sessions WHERE id LIKE "
                 "'sess-hung-%' ORDER BY id")
    assert [(r[0], r[1]) for r in rows] == [(sid, "completed") for sid in sessions], rows
    late = query(data_dir, "SELECT session_id, event_name, created_at_epoch FROM events "
                 f"WHERE session_id LIKE 'sess-hung-%' AND created_at_epoch > {resumed_ms}")
    assert late == [], late
    assert all(r[2] < resumed_ms for r in rows), rows


def test_a_request_answered_late_carries_the_time_its_spooled_copy_has(hook_env, data_dir):
    """The request a hung worker finds on its socket when it resumes, and the copy the
    hook spooled, carry one time: when the hook read the event (``X-Memlite-Event-At``)."""
    import socket
    import time

    data_dir.mkdir(parents=True, exist_ok=True)
    data_dir.joinpath("token").write_text("t" * 43)
    env = {k: v for k, v in hook_env.items() if k != "MEMLITE_PYTHON"}
    with socket.socket() as hung:
        hung.bind(("127.0.0.1", int(hook_env["MEMLITE_WORKER_PORT"])))
        hung.listen(8)  # accepted only after the hook gave up, as by a resumed worker
        before = int(time.time() * 1000)
        result, _ = run_hook(env, fixture_bytes("UserPromptSubmit", prompt="late"),
                             "UserPromptSubmit")
        assert (result.returncode, result.stdout) == (0, b"")
        conn, _ = hung.accept()
        with conn:
            conn.settimeout(5)
            request = b""
            while b"\r\n\r\n" not in request:
                request += conn.recv(65536)
    head = request.split(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
    sent = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in head[1:])}
    [spooled] = [json.loads(line) for f in (data_dir / "spool").glob("*.jsonl")
                 for line in f.read_text().splitlines()]
    assert int(sent["x-memlite-event-at"]) == spooled["spooledAt"]
    assert before <= spooled["spooledAt"] <= before + 2000  # read time, not spool time


def test_the_worker_dates_an_event_by_the_hooks_time(worker, hook_env, data_dir):
    """``X-Memlite-Event-At`` is the event's time; one in the future is now, one older
    than a week or not a number is ignored."""
    import time

    from memlite.hooks import client

    token = (data_dir / "token").read_text().strip()
    now = int(time.time() * 1000)
    cases = {"sess-at-past": str(now - 90_000), "sess-at-future": str(now + 10**9),
             "sess-at-ancient": str(now - 30 * 24 * 3600 * 1000), "sess-at-junk": "12a"}
    for sid, value in cases.items():
        body = json.loads(fixture_bytes("UserPromptSubmit", session_id=sid, prompt=sid))
        status, reply = client.request(worker["port"], "POST", "/api/sessions", bearer=token,
                                       body=json.dumps(body).encode(),
                                       deadline=time.monotonic() + 10,
                                       headers={"X-Memlite-Event-At": value})
        assert status == 200, reply
    after = int(time.time() * 1000)
    at = dict(query(data_dir, "SELECT session_id, created_at_epoch FROM user_prompts "
                              "WHERE session_id LIKE 'sess-at-%'"))
    assert at["sess-at-past"] == now - 90_000
    for sid in ("sess-at-future", "sess-at-ancient", "sess-at-junk"):
        assert now <= at[sid] <= after, (sid, at)

