"""End to end with the real Claude Code CLI: a session killed mid-turn still reaches the next.

Round 7's new-user trial: the terminal closed (the CLI SIGKILLed) while a tool ran. Claude
Code then sends no PostToolUse for that tool, no Stop and no SessionEnd: the session holds
only its SessionStart and its prompt, so the observer never makes a summary of it, and
the next session was told nothing of it. The context block's raw layer now shows such a
session by its prompt.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from e2e_helpers import run_claude

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

MARKER = "settlement-retries-9c1e"


def _prompt_stored(data_dir: Path, marker: str) -> bool:
    from memlite.errors import MemliteError
    from memlite.storage import connect

    try:
        conn = connect(data_dir, writer=False)
    except (MemliteError, OSError):
        return False  # the worker has not created the database yet
    try:
        return conn.execute("SELECT count(*) FROM user_prompts WHERE prompt_text LIKE ?",
                            (f"%{marker}%",)).fetchall()[0][0] > 0
    except Exception:  # noqa: BLE001 - a table not migrated yet reads as "not yet"
        return False
    finally:
        conn.close()


def _stop_tool(pid_file: Path) -> None:
    """Stop the slow tool by the pid it wrote (it may not have started)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        text = pid_file.read_text() if pid_file.exists() else ""
        if text.strip():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(text), signal.SIGKILL)
            return
        time.sleep(0.05)


def test_a_session_killed_mid_turn_reaches_the_next_session(
        claude_bin, fake_api_factory, claude_env, git_project, plugin_dir, memlite_data):
    # Claude Code runs a tool in a session of its own, so killing the CLI's process group
    # leaves it running: it writes its pid, and the test stops it by that pid.
    tool_pid = git_project.parent / "tool.pid"
    slow = (f"python3 -c \"import os, time; open('{tool_pid}', 'w').write(str(os.getpid())); "
            f"time.sleep(120)\"")
    api = fake_api_factory({
        "killed": [{"tool": "Bash", "input": {"command": slow, "description": "wait"}},
                   {"text": "never reached"}],
        "next": [{"text": "ok"}],
    })
    env = claude_env(api)
    argv = [str(claude_bin), "-p", f"SCRIPT=killed the settlement batch retries 5 times "
            f"{MARKER}", "--output-format", "stream-json", "--verbose",
            "--allowedTools", "Bash", "--plugin-dir", str(plugin_dir)]
    cli = subprocess.Popen(argv, cwd=git_project, env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not (_prompt_stored(memlite_data, MARKER) and tool_pid.exists()):
            assert cli.poll() is None, "the CLI ended before it could be killed"
            assert time.monotonic() < deadline, "the prompt or the tool never started"
            time.sleep(0.1)
    finally:
        os.killpg(cli.pid, signal.SIGKILL)  # the terminal closed, mid-turn
        cli.wait(timeout=10)
        _stop_tool(tool_pid)

    run_claude(claude_bin, "SCRIPT=next what was I doing?", cwd=git_project, env=env,
               plugin_dir=plugin_dir)
    first = json.dumps(api.message_requests("SCRIPT=next")[0], ensure_ascii=False)
    assert "<memlite-context>" in first
    context = first[first.index("<memlite-context>"):first.index("</memlite-context>")]
    assert f"prompt: SCRIPT=killed the settlement batch retries 5 times {MARKER}" in context
