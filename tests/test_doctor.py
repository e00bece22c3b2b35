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
    finally:
        subprocess.run([sys.executable, "-m", "memlite", "worker", "stop"], env=env,
                       capture_output=True, timeout=30)
    assert pid is not None and not pid_alive(int(pid.group(1)))


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
