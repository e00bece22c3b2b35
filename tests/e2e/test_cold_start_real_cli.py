"""End to end with the real Claude Code CLI: memory arrives with no worker running.

Issue 13, "Done when": the worker is stopped between sessions 10 times in a row, and each
next session's FIRST request carries session 1's memory, on the first attempt every time;
and the same right after install, while the plugin venv is still being built (no worker
can run at all, so the hook serves the memory from the spool by itself).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import workers_of
from e2e_helpers import run_claude
from test_claude_code import (
    _completed_sessions,
    _context_of_first_request,
    _session_one_script,
    _wait_session_one_stored,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(600)]

ROUNDS = 10
SESSION_ONE = "SCRIPT=s1 Look at hello.py, note the change, run the marker command"


def _wait_completed(data_dir: Path, count: int, timeout: float = 60.0) -> None:
    from memlite.errors import MemliteError

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if _completed_sessions(data_dir) >= count:
                return
        except (MemliteError, OSError):
            pass
        time.sleep(0.05)
    raise AssertionError(f"{count} sessions not stored within {timeout} s")


def _wait_ready(data_dir: Path, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not (data_dir / "worker.pid").exists():
        assert time.monotonic() < deadline, "the worker did not become ready"
        time.sleep(0.05)


def _assert_session_one_memory(context: str, project: Path) -> None:
    """What session 1 did, however many summaries later sessions added since."""
    assert f"# Memory of project greeter ({project})" in context, context
    assert "hello.py" in context and "NOTES.md" in context, context
    assert "not instructions" in context


def test_worker_stopped_before_each_of_ten_sessions_memory_arrives_every_time(
        claude_bin, fake_api_factory, claude_env, git_project, plugin_dir, memlite_data):
    from memlite.spawn import stop_worker

    api = fake_api_factory(_session_one_script(git_project))
    env = claude_env(api)
    out, _ = run_claude(claude_bin, SESSION_ONE, cwd=git_project, env=env,
                        plugin_dir=plugin_dir)
    assert out[-1]["type"] == "result" and not out[-1]["is_error"], out[-1]
    _wait_session_one_stored(memlite_data)
    served = []
    for i in range(1, ROUNDS + 1):
        stopped = stop_worker(memlite_data, grace=10.0)  # as an idle shutdown would
        assert stopped is not None, (i, (memlite_data / "hooks.log").read_text()[-2000:])
        assert workers_of(memlite_data) == []
        marker = f"cold-start-{i:02d}"
        out, _ = run_claude(claude_bin, f"SCRIPT=s2 What did we do last time? ({marker})",
                            cwd=git_project, env=env, plugin_dir=plugin_dir)
        assert out[-1]["type"] == "result" and not out[-1]["is_error"], out[-1]
        context = _context_of_first_request(api, marker)  # the FIRST request of this run
        _assert_session_one_memory(context, git_project)
        assert len(context) <= 9000
        served.append(len(context))
        _wait_completed(memlite_data, 1 + i)  # its own events reached the new worker
        _wait_ready(memlite_data)  # (it may have drained them before it was ready)
    log = (memlite_data / "hooks.log").read_text()
    assert log.count("served the snapshot and spool") >= ROUNDS, log[-3000:]
    print(f"\n{ROUNDS} cold SessionStarts, context chars: {served}")


def _plugin_data(home: Path) -> Path:
    """``${CLAUDE_PLUGIN_DATA}`` of a ``--plugin-dir`` plugin (CLAUDE-CODE.md)."""
    return home / ".claude" / "plugins" / "data" / "memlite-inline"


def test_right_after_install_the_first_sessions_get_memory_before_any_worker(
        claude_bin, fake_api_factory, claude_env, git_project, plugin_dir, memlite_data):
    from memlite.hooks import bootstrap

    api = fake_api_factory(_session_one_script(git_project))
    env = claude_env(api)
    del env["MEMLITE_PYTHON"]  # the hook runs on the system python; no worker python yet
    env["PIP_NO_INDEX"] = "1"  # belt and braces: nothing may reach the network
    data = _plugin_data(claude_env.home)
    data.mkdir(parents=True)
    lock = data / bootstrap.LOCK_FILE
    lock.write_text(f"{os.getpid()}\n")  # "the venv is being built" (by someone else)

    out, _ = run_claude(claude_bin, SESSION_ONE, cwd=git_project, env=env,
                        plugin_dir=plugin_dir)
    assert out[-1]["type"] == "result" and not out[-1]["is_error"], out[-1]
    assert lock.exists() and not (data / "venv").exists()  # still "building"
    assert list((memlite_data / "spool").glob("*.jsonl")), "session 1 was not spooled"
    out, _ = run_claude(claude_bin, "SCRIPT=s2 What did we do last time? (first-install)",
                        cwd=git_project, env=env, plugin_dir=plugin_dir)
    assert out[-1]["type"] == "result" and not out[-1]["is_error"], out[-1]
    context = _context_of_first_request(api, "first-install")
    _assert_session_one_memory(context, git_project)
    assert "SCRIPT=s1 Look at hello.py" in context  # session 1's prompt, from the spool
    assert "ran `echo memlite-e2e-marker-7f3a`" in context
    assert not (memlite_data / "memlite.db").exists() and workers_of(memlite_data) == []

    # The venv becomes ready: the builder's last step starts the worker, which drains
    # the spool at once (no later hook needed).
    venv_bin = data / "venv" / "bin"
    venv_bin.mkdir(parents=True)
    (venv_bin / "python").write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    (venv_bin / "python").chmod(0o755)
    (data / "venv" / bootstrap.READY_FILE).write_text("ready\n")
    lock.unlink()
    root = str(Path(bootstrap.__file__).resolve().parents[2])
    subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
                    "from memlite.hooks.bootstrap import start_worker_when_ready as s; "
                    "s(sys.argv[2])", root, str(venv_bin / "python")],
                   env=env, check=True, timeout=60, capture_output=True)
    _wait_completed(memlite_data, 2)
    deadline = time.monotonic() + 30
    while list((memlite_data / "spool").glob("*.jsonl")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not list((memlite_data / "spool").glob("*.jsonl"))
    _wait_ready(memlite_data)
    assert json.loads((memlite_data / "worker.pid").read_text())["pid"] in \
        workers_of(memlite_data)
