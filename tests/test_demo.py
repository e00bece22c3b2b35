"""``memlite demo`` runs the real loop as processes (worker, hook per event) and cleans up."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

from memlite.demo import load_recorded_session
from memlite.lifecycle import pid_alive


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # the login's own answer (with its cookie), not the page it leads to


def _demo(tmp_path, *args):
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    env.pop("MEMLITE_DATA_DIR", None)
    done = subprocess.run([sys.executable, "-m", "memlite", "demo", *args], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.stdout, done.stderr)
    return done.stdout


def test_recorded_session_is_real_hook_payloads(tmp_path):
    recorded = load_recorded_session(tmp_path / "p", tmp_path / "h", "sid-1")
    names = [event["hook_event_name"] for event in recorded["events"]]
    assert names[0] == "SessionStart" and names[-1] == "SessionEnd"
    assert {"UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop"} <= set(names)
    for event in recorded["events"]:
        assert event["session_id"] == "sid-1" and event["cwd"] == str(tmp_path / "p")
        assert not re.search(r"<[A-Z_]+>", json.dumps(event))  # every placeholder filled


def test_demo_replays_through_the_hook_and_prints_the_next_context(tmp_path):
    out = _demo(tmp_path)
    assert "replaying a recorded Claude Code session through the hook (9 events" in out
    block = out[out.index("<memlite-context>"):out.index("</memlite-context>")]
    assert "not instructions" in block
    # The session was observed (rules backend): a summary and observations, no raw layer.
    assert "summary #1): The login test is flaky" in block
    assert "[change] Edited auth/session.py" in block
    assert "Tests failed: tests/test_login.py::test_expired_session" in block
    assert "completed: modified auth/session.py; test_expired_session failed" in block
    # Any-term BM25 (issue 14) also ranks the observations that hold one of the words.
    assert re.search(
        r"search 'expired login' .*: [1-9][0-9]* observations, 1 summaries, 1 prompts", out)
    # The worker stops when the demo ends: no login link that would not open.
    assert not re.search(r"/login\?code=", out)
    assert "memlite demo --keep" in out
    assert "observer backend: rules (deterministic, no AI" in out
    worker_pid = int(re.search(r"worker ready in .* pid (\d+)", out).group(1))
    assert not pid_alive(worker_pid)
    base = Path(re.search(r"throwaway data directory (\S+)", out).group(1)).parent
    assert base.parent == tmp_path and not base.exists()


def test_demo_keep_leaves_the_worker_and_a_readable_database(tmp_path):
    out = _demo(tmp_path, "--keep")
    base = Path(re.search(r"kept (\S+);", out).group(1))
    pid = int(re.search(r"worker \(pid (\d+)\) is still running", out).group(1))
    try:
        assert pid_alive(pid)
        # The printed login link opens the dashboard while the kept worker runs.
        link = re.search(r"http://127\.0\.0\.1:\d+/login\?code=\S+", out).group(0)
        opener = urllib.request.build_opener(_NoRedirect)
        try:
            answer = opener.open(link, timeout=10)
            status, cookie = answer.status, answer.headers.get("Set-Cookie", "")
        except urllib.error.HTTPError as redirect:
            status, cookie = redirect.code, redirect.headers.get("Set-Cookie", "")
        assert status in (200, 302, 303) and "HttpOnly" in cookie, (status, cookie)
        assert (base / "data" / "memlite.db").stat().st_size > 0
        assert (base / "data" / "settings.json").exists()
    finally:
        from memlite.spawn import stop_worker

        stop_worker(base / "data")
    assert not pid_alive(pid)
