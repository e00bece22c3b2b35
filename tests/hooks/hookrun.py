"""Helpers for hook tests: run the hook as a PROCESS, read the database, find workers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from procroot import PROC  # noqa: E402

from memlite.lifecycle import pid_alive, probe_ready
from memlite.storage import connect

REPO = Path(__file__).resolve().parents[2]
HOOK_TIMEOUT = 5.0
"""plugin/hooks/hooks.json gives each hook 5 s; past it Claude Code kills the hook and the
event is lost. Tests bound hook runs by it (not tighter: CI is a loaded machine; the
figures are bench/bench_hooks.py's)."""
FIXTURES = REPO / "tests" / "fixtures" / "claude-code" / "v2.1.332" / "hooks"
HOOK = REPO / "plugin" / "scripts" / "hook.py"
LAUNCHER = REPO / "plugin" / "scripts" / "memlite-hook"
BARE = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def fixture_bytes(name: str, **changes: object) -> bytes:
    payload = json.loads((FIXTURES / f"{name}.json").read_text())
    payload.update(changes)
    return json.dumps(payload).encode()


def worker_pids(data_dir: Path) -> set[int]:
    wanted = os.path.realpath(data_dir)
    found = set()
    for entry in os.listdir(PROC):
        if not entry.isdigit():
            continue
        try:
            with open(f"{PROC}/{entry}/cmdline", "rb") as f:
                args = [a.decode() for a in f.read().split(b"\0")]
        except OSError:
            continue
        if "worker" in args and "run" in args and wanted in args and pid_alive(int(entry)):
            found.add(int(entry))
    return found


def wait_until(predicate: Callable[[], object], timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out after {timeout} s"
        time.sleep(0.02)


def run_hook(env: dict[str, str], stdin: bytes, *args: str, launcher: bool = False,
             timeout: float = 30) -> tuple[subprocess.CompletedProcess[bytes], float]:
    argv = [str(LAUNCHER)] if launcher else [BARE, "-I", "-S", str(HOOK)]
    started = time.monotonic()
    result = subprocess.run([*argv, *args], input=stdin, env=env, capture_output=True,
                            timeout=timeout, cwd=REPO)
    return result, time.monotonic() - started


def query(data_dir: Path, sql: str, params: tuple[object, ...] = ()) -> list[tuple]:
    conn = connect(data_dir, writer=False)
    try:
        return [tuple(row) for row in conn.execute(sql, params)]
    finally:
        conn.close()


def log_lines(data_dir: Path) -> list[str]:
    try:
        return (data_dir / "hooks.log").read_text().splitlines()
    except FileNotFoundError:
        return []


def healthy(env: dict[str, str]) -> bool:
    return probe_ready(int(env["MEMLITE_WORKER_PORT"]))
