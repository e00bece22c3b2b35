"""Fixtures for hook tests: a real worker on a free port in the test's data directory.

Workers are daemonized (not descendants of pytest, so the leak check cannot see them):
``reap_workers`` finds every worker of the test's data directory by its command line,
stops it by pid, and kills the process group of a venv builder a test started.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from hookrun import REPO, worker_pids
from ports import free_port

from memlite.lifecycle import pid_alive


@pytest.fixture
def hook_env(data_dir) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE_PLUGIN")}
    env.update(MEMLITE_WORKER_PORT=str(free_port()), MEMLITE_PYTHON=sys.executable)
    return env


@pytest.fixture(autouse=True)
def reap_workers(data_dir):
    """Stop (by pid) every worker of this test's data directory and any venv builder."""
    yield
    builders = []
    for lock in data_dir.parent.glob("**/venv.lock"):
        try:
            builders.append(int(lock.read_text().split()[0]))
        except (OSError, ValueError, IndexError):
            pass
    for pgid in builders:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    left = worker_pids(data_dir)
    for pid in left:
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 5
    while any(pid_alive(p) for p in left) and time.monotonic() < deadline:
        time.sleep(0.02)
    for pid in left:
        if pid_alive(pid):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def worker(hook_env, data_dir) -> dict:
    """A running worker of this test's data directory (its pid-file info)."""
    result = subprocess.run([sys.executable, "-m", "memlite", "worker", "start", "--json"],
                            env=hook_env, capture_output=True, text=True, timeout=60, cwd=REPO)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)
