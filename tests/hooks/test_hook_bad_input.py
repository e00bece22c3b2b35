"""Bad input: the hook exits 0 fast, prints nothing, logs one line, the worker stays healthy."""

from __future__ import annotations

import json
import os
import stat

from hookrun import HOOK_TIMEOUT, fixture_bytes, healthy, log_lines, query, run_hook

from memlite.hooks import main as hook_main

BAD = {
    "empty": (b"", "PostToolUse"),
    "whitespace": (b"  \n", "PostToolUse"),
    "not JSON": (b"{not json", "PostToolUse"),
    "list": (b"[1, 2]", "PostToolUse"),
    "string": (b'"hello"', "Stop"),
    "missing session_id": (b'{"hook_event_name": "Stop", "cwd": "/x"}', "Stop"),
    "session_id not a string": (b'{"hook_event_name": "Stop", "session_id": 5}', "Stop"),
    "binary": (bytes(range(256)) * 64, "PostToolUse"),
    "unknown event": (b'{"hook_event_name": "Telepathy", "session_id": "s"}', "Telepathy"),
    "deep nesting": (b"[" * 100000 + b"]" * 100000, "PostToolUse"),
}


def test_bad_input_exits_0_quietly_with_one_log_line(worker, hook_env, data_dir):
    for case, (stdin, event) in BAD.items():
        logged = len(log_lines(data_dir))
        result, elapsed = run_hook(hook_env, stdin, event)
        assert result.returncode == 0, case
        assert result.stdout == b"", case
        assert elapsed < HOOK_TIMEOUT, (case, elapsed)
        lines = log_lines(data_dir)
        assert len(lines) == logged + 1, (case, lines[logged:])
        assert healthy(hook_env), case
    assert query(data_dir, "SELECT count(*) FROM events") == [(0,)]
    assert stat.S_IMODE(os.stat(data_dir / "hooks.log").st_mode) == 0o600
    assert not (data_dir / "spool").exists() or not list((data_dir / "spool").iterdir())


def test_invalid_utf8_is_replaced_stored_and_logged(worker, hook_env, data_dir):
    stdin = fixture_bytes("PostToolUse.Bash", tool_use_id="toolu_u1").replace(
        b'"hello"', b'"hel\xff\xfelo"')
    result, elapsed = run_hook(hook_env, stdin, "PostToolUse")
    assert (result.returncode, result.stdout) == (0, b"") and elapsed < HOOK_TIMEOUT
    assert len(log_lines(data_dir)) == 1 and "UTF-8" in log_lines(data_dir)[0]
    [(payload,)] = query(data_dir, "SELECT payload FROM events WHERE tool_use_id = 'toolu_u1'")
    assert json.loads(payload)["tool_response"]["stdout"] == "hel\ufffd\ufffdlo"


def test_lone_surrogate_escapes_are_made_storable(worker, hook_env, data_dir):
    stdin = fixture_bytes("PostToolUse.Bash", tool_use_id="toolu_u2").replace(
        b'"hello"', b'"a\\ud800b"')
    result, _ = run_hook(hook_env, stdin, "PostToolUse")
    assert result.returncode == 0 and log_lines(data_dir) == []
    assert query(data_dir, "SELECT count(*) FROM events WHERE tool_use_id = 'toolu_u2'") == [(1,)]


def test_a_50_mb_tool_response_is_cut_before_storage(worker, hook_env, data_dir):
    big = "HEAD-" + "x" * (50 * 1024 * 1024) + "-TAIL"
    stdin = fixture_bytes("PostToolUse.Bash", tool_use_id="toolu_big",
                          tool_response={"stdout": big, "stderr": ""})
    result, elapsed = run_hook(hook_env, stdin, "PostToolUse")
    assert (result.returncode, result.stdout) == (0, b"")
    assert elapsed < HOOK_TIMEOUT, elapsed  # reading and parsing 50 MB is most of it
    assert healthy(hook_env)
    [(payload,)] = query(data_dir, "SELECT payload FROM events WHERE tool_use_id = 'toolu_big'")
    stdout = json.loads(payload)["tool_response"]["stdout"]
    assert stdout.startswith("HEAD-") and stdout.endswith("-TAIL")
    assert "[memlite: cut " in stdout and len(stdout) < 20_000


def test_the_hook_log_is_capped(hook_env, data_dir, monkeypatch):
    monkeypatch.setattr(hook_main, "LOG_MAX", 1000)
    for i in range(100):
        hook_main.log_line(str(data_dir), "Stop", f"line {i} " + "y" * 50)
    assert (data_dir / "hooks.log").stat().st_size <= 1000 + 200
    assert (data_dir / "hooks.log.1").exists()
