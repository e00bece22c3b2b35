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
