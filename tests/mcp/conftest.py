"""Fixtures of the MCP tests: a seeded data directory, a worker on a free port, a client.

The worker (started by a fixture, or by the MCP server itself) is daemonized; ``reap``
stops every worker of the test's data directory by its pid (``stop_worker`` checks the
pid is that worker first), then any that is still starting, found by its command line.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcp_helpers import REPO, worker_pids
from ports import free_port

from memlite.lifecycle import pid_alive

DAY_MS = 86_400_000
BASE_MS = 1_768_003_200_000  # 2026-01-10T00:00:00Z


@pytest.fixture
def mcp_env(data_dir: Path) -> dict[str, str]:
    """The MCP server's whole environment: data dir, worker port, worker python."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(data_dir.parent),
            "MEMLITE_DATA_DIR": str(data_dir), "MEMLITE_WORKER_PORT": str(free_port()),
            "MEMLITE_PYTHON": sys.executable}


@pytest.fixture
def seeded(data_dir: Path) -> dict[str, int]:
    """Five observations in two projects, written straight into the database."""
    from memlite import storage

    rows = [
        ("alpha", "/p/alpha", "s1", "decision", "chose trio nursery for the parser workers",
         ["memlite/parser.py"], 0),
        ("change", "/p/alpha", "s1", "change", "taught the parser empty input",
         ["memlite/parser.py", "tests/test_parser.py"], 1),
        ("bugfix", "/p/alpha", "s1", "bugfix", "fixed parser crash on emoji titles",
         ["memlite/parser.py"], 2),
        ("later", "/p/alpha", "s2", "change", "renamed the greeting helper",
         ["hello.py"], 3),
        ("beta", "/p/beta", "s9", "change", "beta project parser rewrite", ["beta.py"], 4),
    ]
    ids = {}
    conn = storage.connect(data_dir)
    with conn:
        for key, project, session, kind, title, files, day in rows:
            ids[key] = storage.insert_observation(conn, storage.NewObservation(
                session_id=session, project=project, type=kind, title=title,
                narrative=f"Narrative of: {title}. " * 3, facts=(f"fact about {key}",),
                files_modified=tuple(files), backend="rules",
                at_ms=BASE_MS + day * DAY_MS)).id
    conn.close()
    return ids


@pytest.fixture
def worker(mcp_env: dict[str, str], seeded: dict[str, int]) -> dict:
    """A running worker of the test's data directory (its pid-file info)."""
    result = subprocess.run([sys.executable, "-m", "memlite", "worker", "start", "--json"],
                            env=mcp_env, capture_output=True, text=True, timeout=60, cwd=REPO)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(autouse=True)
def reap(data_dir: Path):
    yield
    from memlite.spawn import stop_worker

    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if data_dir.exists():
            stop_worker(data_dir, grace=5.0)
        if not worker_pids(data_dir):
            break
        time.sleep(0.05)
    for pid in worker_pids(data_dir):
        os.kill(pid, signal.SIGKILL)
        while pid_alive(pid):
            time.sleep(0.02)
