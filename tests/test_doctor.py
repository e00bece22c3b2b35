"""``memlite doctor``: the canary goes through a real worker (rules backend, no AI)."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys

from memlite.lifecycle import pid_alive


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_doctor_runs_the_canary_and_says_all_is_well(data_dir):
    env = {**os.environ, "MEMLITE_WORKER_PORT": str(_free_port()), "MEMLITE_OBSERVER": "rules"}
    done = subprocess.run([sys.executable, "-m", "memlite", "doctor", "--deadline", "20"],
                          env=env, capture_output=True, text=True, timeout=120)
    pid = re.search(r"worker pid (\d+)", done.stdout)
    try:
        assert done.returncode == 0, (done.stdout, done.stderr)
        assert "observer backend: rules (OBSERVER=rules" in done.stdout
        assert re.search(r"ok  canary: event in, rules observation out in [\d.]+ s: "
                         r"'Edited memlite_doctor_canary.py'", done.stdout)
        assert "FAIL" not in done.stdout
        assert "  ok  spool: empty, nothing quarantined" in done.stdout
    finally:
        subprocess.run([sys.executable, "-m", "memlite", "worker", "stop"], env=env,
                       capture_output=True, timeout=30)
    assert pid is not None and not pid_alive(int(pid.group(1)))


def test_doctor_says_when_the_ai_observer_fails_and_rules_observed_the_canary(data_dir):
    """Issue 13: a Claude Code CLI that is not logged in answers every turn with an error;
    the worker falls back to rules, and the doctor must not call that all ok."""
    from pathlib import Path

    from memlite.spawn import start_worker

    here = Path(__file__).resolve().parent / "observer"
    env = {**os.environ, "MEMLITE_WORKER_PORT": str(_free_port()), "MEMLITE_OBSERVER": "auto",
           "MEMLITE_TEST_FAKE_CLI": str(here / "fake_claude.py"), "FAKE_CLAUDE_MODE": "error"}
    argv = [sys.executable, str(here / "memlite_fake_cli_worker.py"), "worker", "run",
            "--data-dir", os.path.realpath(data_dir)]
    info = start_worker(data_dir, argv=argv, env=env).info
    assert info is not None
    try:
        done = subprocess.run([sys.executable, "-m", "memlite", "doctor", "--deadline", "40"],
                              env=env, capture_output=True, text=True, timeout=120)
    finally:
        subprocess.run([sys.executable, "-m", "memlite", "worker", "stop"], env=env,
                       capture_output=True, timeout=30)
        try:
            os.waitpid(info.pid, 0)  # our child (start_worker spawned it)
        except ChildProcessError:
            pass
    assert f"worker pid {info.pid}" in done.stdout, done.stdout  # the fake-CLI worker
    assert "observer backend: claude (OBSERVER=auto" in done.stdout
    assert "rules observation out" in done.stdout
    warning = [line for line in done.stdout.splitlines()
               if "claude was chosen but did NOT observe the canary" in line]
    assert warning and warning[0].startswith("warn"), done.stdout
    assert "fake failure" in warning[0] or "Error" in warning[0]
    assert "logged in" in warning[0]
    assert not pid_alive(info.pid)


def test_doctor_names_quarantined_events_and_a_shared_data_dir(data_dir):
    from memlite.doctor import spool_lines
    from memlite.hooks import spool

    data_dir.mkdir(mode=0o700, parents=True)
    assert spool_lines(data_dir) == [("ok", "spool: empty, nothing quarantined")]
    spool.append(data_dir, "Stop", {"session_id": 42}, now_ms=1)
    (claimed,) = spool.claim(data_dir)
    (record,) = spool.read_claimed(claimed)
    spool.reject(data_dir, record, "InputError: field 'session_id' must be a string")
    os.chmod(data_dir, 0o755)
    assert spool_lines(data_dir) == [
        ("warn", f"data directory {data_dir} is open to other users (755); "
                 f"`chmod 700 {data_dir}` makes it private"),
        ("warn", f"spool: 1 event(s) quarantined, kept in {data_dir}/spool/quarantine.jsonl; "
                 "newest (Stop): InputError: field 'session_id' must be a string"),
        ("warn", "spool: events wait to be drained (the worker drains them every few "
                 "seconds; see worker.log if they stay)")]


def test_doctor_says_why_the_plugin_venv_is_not_there(data_dir, tmp_path):
    """Issue 16: a failed first-run build is reported with its reason, not silently stuck."""
    import json
    import time

    plugin_data = tmp_path / "plugin-data"
    plugin_data.mkdir()
    (plugin_data / "venv-status.json").write_text(json.dumps({
        "state": "failed", "attempt": 2, "error": "pip: no matching distribution for apsw",
        "time": time.time(), "retry_at": time.time() + 240}))
    env = {**os.environ, "MEMLITE_WORKER_PORT": str(_free_port()), "MEMLITE_OBSERVER": "rules",
           "CLAUDE_PLUGIN_DATA": str(plugin_data)}
    done = subprocess.run([sys.executable, "-m", "memlite", "doctor", "--deadline", "20"],
                          env=env, capture_output=True, text=True, timeout=120)
    pid = re.search(r"worker pid (\d+)", done.stdout)
    try:
        assert done.returncode == 1, (done.stdout, done.stderr)
        assert re.search(r"FAIL  plugin Python environment: attempt 2 failed: pip: no matching "
                         r"distribution for apsw \(retry in [34] min; log: ", done.stdout)
    finally:
        subprocess.run([sys.executable, "-m", "memlite", "worker", "stop"], env=env,
                       capture_output=True, timeout=30)
    assert pid is None or not pid_alive(int(pid.group(1)))


def test_doctor_warns_about_a_worker_part_given_up(data_dir, monkeypatch):
    """Issue 17: an optional child that kept failing (here the embedder) is given up by
    its supervisor; /api/health lists it under ``degraded`` and the doctor says so."""
    import types

    from memlite import doctor, spawn

    monkeypatch.setattr(spawn, "start_worker", lambda *a, **k: types.SimpleNamespace(
        info=types.SimpleNamespace(pid=4242, port=1)))
    health = {"status": "ok", "version": "x", "observer": None,
              "degraded": {"embedder": "RuntimeError: injected"}}
    monkeypatch.setattr(doctor, "_api", lambda *a, **k: health)
    monkeypatch.setattr(doctor, "_canary", lambda *a, **k: None)
    lines: list[str] = []
    assert doctor.run_doctor(print_=lines.append) == 0  # a warning, not a failure
    (line,) = [line for line in lines if "embedder" in line]
    assert line.startswith("warn") and "RuntimeError: injected" in line
    assert "runs without it" in line
