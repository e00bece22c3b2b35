"""The plugin venv's bootstrap: pinned and lean, and never silently stuck (issue 16).

The real build (pip, ~40 s) runs in tests/e2e/test_plugin_venv.py and bench/; here the
failure paths are driven with ``MEMLITE_BOOTSTRAP_PYTHON`` pointing at no Python, which
fails the build at once with a reason.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hookrun import fixture_bytes, run_hook, wait_until

from memlite.hooks import bootstrap, venv_build
from memlite.lifecycle import pid_alive

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def failing(monkeypatch):
    monkeypatch.setenv(bootstrap.PYTHON_ENV, "/nonexistent/python3.12")
    monkeypatch.setenv(bootstrap.BACKOFF_ENV, "0.5")


def finished(plugin_data: Path, pid: int) -> None:
    """Wait for the builder (this process's child: reaped here, so that no zombie looks
    alive where /proc cannot tell) and its lock."""

    def reaped() -> bool:
        try:
            return os.waitpid(pid, os.WNOHANG)[0] == pid
        except ChildProcessError:
            return not pid_alive(pid)

    wait_until(reaped)
    wait_until(lambda: not (plugin_data / bootstrap.LOCK_FILE).exists())


def test_pip_installs_pinned_lean_and_from_the_sdist():
    source = bootstrap.source_dir()
    command = venv_build.pip_command(["/venv/bin/python", "-m", "pip"], source)
    assert command[-1] == source
    constraints = command[command.index("-c") + 1]
    assert Path(constraints).is_file() and Path(constraints).samefile(REPO / "constraints.txt")
    assert command[command.index("--no-binary") + 1] == "claude-agent-sdk"
    assert "--no-compile" in command and "[" not in source  # no extras: runtime only
    # The plugin ships constraints.txt next to its pyproject.toml (both links to the repo's).
    assert (REPO / "plugin" / "constraints.txt").samefile(REPO / "constraints.txt")


def test_a_failed_build_says_why_and_is_retried_with_backoff(tmp_path, failing):
    data = tmp_path / "plugin-data"
    first = bootstrap.ensure_venv(str(data))
    assert first is not None
    finished(data, first)
    status = bootstrap.read_status(str(data))
    assert status["state"] == "failed" and status["attempt"] == 1
    assert "needs Python 3.11" in status["error"] and "/nonexistent" in status["error"]
    level, text = bootstrap.describe(str(data))
    assert level == "FAIL" and "attempt 1 failed" in text and "needs Python 3.11" in text
    assert "memory is off" in json.loads(bootstrap.notice(str(data)))["systemMessage"]
    # Within the backoff no new build starts; after it, attempt 2, with a doubled backoff.
    assert bootstrap.ensure_venv(str(data)) is None
    wait_until(lambda: time.time() >= status["retry_at"])
    second = bootstrap.ensure_venv(str(data))
    assert second is not None and second != first
    finished(data, second)
    again = bootstrap.read_status(str(data))
    assert again["attempt"] == 2
    assert again["retry_at"] - again["time"] == pytest.approx(1.0, abs=0.01)


def test_a_builder_that_died_counts_as_a_failed_attempt(tmp_path, monkeypatch):
    monkeypatch.setenv(bootstrap.BACKOFF_ENV, "60")
    data = tmp_path / "plugin-data"
    data.mkdir()
    dead = subprocess.Popen(["true"])
    dead.wait()
    (data / bootstrap.LOCK_FILE).write_text(f"{dead.pid}\n")
    (data / bootstrap.STATUS_FILE).write_text(json.dumps(
        {"state": "building", "attempt": 1, "time": time.time()}))
    assert bootstrap.ensure_venv(str(data)) is None  # not at once: backoff
    status = bootstrap.read_status(str(data))
    assert status["state"] == "failed" and "stopped before it finished" in status["error"]
    assert not (data / bootstrap.LOCK_FILE).exists()


def test_session_start_shows_one_line_while_the_venv_builds(hook_env, tmp_path):
    plugin_data = tmp_path / "plugin-data"
    env = {k: v for k, v in hook_env.items() if k != "MEMLITE_PYTHON"}
    env["CLAUDE_PLUGIN_DATA"] = str(plugin_data)
    env[bootstrap.PYTHON_ENV] = sys.executable
    env[bootstrap.PIP_ENV] = "--no-index --find-links /nonexistent"  # a build that fails
    result, _ = run_hook(env, fixture_bytes("SessionStart.startup"), "SessionStart")
    assert result.returncode == 0
    message = json.loads(result.stdout)["systemMessage"]
    assert "setting up on first use" in message and "\n" not in message
    # Other events print nothing, as always.
    result, _ = run_hook(env, fixture_bytes("UserPromptSubmit"), "UserPromptSubmit")
    assert (result.returncode, result.stdout) == (0, b"")
    builder = int((plugin_data / bootstrap.LOCK_FILE).read_text())
    wait_until(lambda: not pid_alive(builder), timeout=120)
    status = bootstrap.read_status(str(plugin_data))
    assert status["state"] == "failed" and "returned non-zero exit status" in status["error"]
    result, _ = run_hook(env, fixture_bytes("SessionStart.startup"), "SessionStart")
    message = json.loads(result.stdout)["systemMessage"]
    assert message.startswith("memlite: memory is off: plugin Python environment: attempt 1")


def test_status_command_works_on_the_bare_interpreter(tmp_path, failing):
    data = tmp_path / "plugin-data"
    finished(data, bootstrap.ensure_venv(str(data)))
    done = subprocess.run([sys.executable, "-S", "-m", "memlite.hooks.bootstrap",
                           "status", str(data)], capture_output=True, text=True, cwd=REPO,
                          check=False)
    assert done.returncode == 1 and done.stdout.startswith("FAIL  plugin Python environment")


def _ready_venv(data: Path, fingerprint: str | None) -> Path:
    python = data / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    python.chmod(0o755)
    (data / "venv" / bootstrap.READY_FILE).write_text(
        "1\n" + (f"fingerprint={fingerprint}\n" if fingerprint else ""))
    return python


def test_a_plugin_update_rebuilds_beside_the_venv_in_use(tmp_path, failing, monkeypatch):
    """New pins (an update): the old venv keeps serving while a build starts beside it."""
    data = tmp_path / "plugin-data"
    python = _ready_venv(data, "0123456789abcdef")
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(data))
    monkeypatch.delenv("MEMLITE_PYTHON", raising=False)
    assert bootstrap.worker_python() == str(python)
    builder = int((data / bootstrap.LOCK_FILE).read_text())
    finished(data, builder)
    assert bootstrap.read_status(str(data))["state"] == "failed"
    assert bootstrap.worker_python() == str(python)  # still served; retried after backoff
    level, text = bootstrap.describe(str(data))
    assert level == "warn" and "rebuilding it for this plugin version failed" in text
    assert bootstrap.notice(str(data)) is None  # memory works: nothing to say at SessionStart


@pytest.mark.parametrize("fingerprint", ["current", None])
def test_an_up_to_date_or_unmarked_venv_is_not_rebuilt(tmp_path, failing, monkeypatch,
                                                       fingerprint):
    data = tmp_path / "plugin-data"
    _ready_venv(data, bootstrap.fingerprint() if fingerprint else None)
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(data))
    monkeypatch.delenv("MEMLITE_PYTHON", raising=False)
    assert bootstrap.worker_python() == str(data / "venv" / "bin" / "python")
    assert not (data / bootstrap.LOCK_FILE).exists() and bootstrap.read_status(str(data)) == {}


def test_a_session_start_while_the_venv_builds_prints_the_memory_and_the_notice():
    """Issue 13 + 16: the memory on disk (snapshot and spool) and the one line saying why
    there is no more yet go out together; either alone goes out as it is."""
    from memlite.hooks.main import _with_notice

    context = json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart",
                                                  "additionalContext": "memory"}})
    notice = json.dumps({"systemMessage": "memlite: setting up on first use"})
    both = json.loads(_with_notice(context, notice))
    assert both["hookSpecificOutput"]["additionalContext"] == "memory"
    assert both["systemMessage"] == "memlite: setting up on first use"
    assert _with_notice(context, None) == context
    assert _with_notice(None, notice) == notice
    assert _with_notice(None, None) is None
