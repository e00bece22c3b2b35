"""Every captured Claude Code event through the hook, as a process, into a real worker."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from hookrun import FIXTURES, HOOK_TIMEOUT, fixture_bytes, healthy, log_lines, query, run_hook

from memlite.hooks.main import ROUTES

UNKNOWN = {"PermissionRequest", "PreToolUse", "PostCompact"}


def test_every_fixture_event_reaches_the_worker(worker, hook_env, data_dir):
    names = sorted(p.stem for p in FIXTURES.glob("*.json"))
    assert len(names) >= 17
    for name in names:
        payload = json.loads((FIXTURES / f"{name}.json").read_text())
        event = payload["hook_event_name"]
        before = query(data_dir, "SELECT count(*) FROM events")[0][0]
        logged = len(log_lines(data_dir))
        result, elapsed = run_hook(hook_env, json.dumps(payload).encode(), event)
        assert result.returncode == 0 and elapsed < HOOK_TIMEOUT, (name, result, elapsed)
        after = query(data_dir, "SELECT count(*) FROM events")[0][0]
        if event in UNKNOWN:
            assert result.stdout == b"" and after == before
            assert len(log_lines(data_dir)) == logged + 1, name
            continue
        assert event in ROUTES
        assert len(log_lines(data_dir)) == logged, (name, log_lines(data_dir))
        if event == "SessionStart" and result.stdout:
            reply = json.loads(result.stdout)
            assert reply["hookSpecificOutput"]["hookEventName"] == "SessionStart"
        else:
            assert result.stdout == b"", name
        rows = query(data_dir, "SELECT event_name, session_id FROM events WHERE event_name = ?"
                     " AND session_id = ?", (event, payload["session_id"]))
        assert rows, name
        # SessionStart resume/compact are new rows; replays of identical payloads are not.
        assert after >= before, name
    assert healthy(hook_env)
    assert not list((data_dir / "spool").glob("*.jsonl")) if (data_dir / "spool").exists() \
        else True


def test_launcher_runs_the_hook(worker, hook_env, data_dir):
    result, _ = run_hook(hook_env, fixture_bytes("PostToolUse.Bash", tool_use_id="toolu_l1"),
                         "PostToolUse", launcher=True)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    assert query(data_dir, "SELECT tool_name FROM events WHERE tool_use_id = 'toolu_l1'") \
        == [("Bash",)]


def test_skipped_tools_are_never_sent(worker, hook_env, data_dir):
    for tool, use in (("TodoWrite", "toolu_s1"), ("mcp__plugin_memlite_memlite__search",
                                                   "toolu_s2")):
        result, _ = run_hook(hook_env, fixture_bytes("PostToolUse.Bash", tool_name=tool,
                                                     tool_use_id=use), "PostToolUse")
        assert (result.returncode, result.stdout) == (0, b"")
    env = {**hook_env, "MEMLITE_SKIP_TOOLS": "Bash,Read"}
    run_hook(env, fixture_bytes("PostToolUse.Bash", tool_use_id="toolu_s3"), "PostToolUse")
    run_hook(env, fixture_bytes("PostToolUse.Bash", tool_name="Grep", tool_use_id="toolu_s4"))
    assert query(data_dir, "SELECT tool_use_id FROM events WHERE tool_use_id LIKE 'toolu_s%'") \
        == [("toolu_s4",)]
    assert not (data_dir / "spool").exists() or not list((data_dir / "spool").iterdir())


def test_stop_of_an_unknown_session_is_still_stored(worker, hook_env, data_dir):
    result, _ = run_hook(hook_env, fixture_bytes("Stop", session_id="never-started"), "Stop")
    assert result.returncode == 0
    assert query(data_dir, "SELECT event_name FROM events WHERE session_id = 'never-started'") \
        == [("Stop",)]


def test_a_prompt_event_without_a_prompt_is_stored_as_such(worker, hook_env, data_dir):
    stdin = json.loads(fixture_bytes("UserPromptSubmit"))
    del stdin["prompt"]
    result, _ = run_hook(hook_env, json.dumps(stdin).encode(), "UserPromptSubmit")
    assert result.returncode == 0 and log_lines(data_dir) == []
    assert query(data_dir, "SELECT event_name FROM events") == [("UserPromptSubmit",)]


def test_privacy_tags_and_secrets_never_reach_the_database(worker, hook_env, data_dir):
    prompt = ("fix <private>my diary\nentry</private> the bug; key AKIA2E0A8F3B244C9986, "
              "ghp_abcdefghijklmnopqrstuvwxyz0123456789 <system-reminder>be nice"
              "</system-reminder> and postgres://bob:hunter2@db/x")
    run_hook(hook_env, fixture_bytes("UserPromptSubmit", prompt=prompt), "UserPromptSubmit")
    run_hook(hook_env, fixture_bytes("PostToolUse.Bash", tool_use_id="toolu_p1", tool_response={
        "stdout": "OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx\n<private>x</private>"}))
    dumped = json.dumps(query(data_dir, "SELECT payload FROM events")) + json.dumps(
        query(data_dir, "SELECT * FROM user_prompts"))
    for secret in ("my diary", "AKIA2E0A8F3B244C9986", "ghp_abcdef", "be nice", "hunter2",
                   "sk-proj-abc", "<private>"):
        assert secret not in dumped, secret
    assert "[REDACTED:aws_access_key_id]" in dumped and "the bug" in dumped


class _FakeWorker(BaseHTTPRequestHandler):
    context = "## Earlier\n- did things"

    def _reply(self, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:  # noqa: N802
        self.rfile.read(int(self.headers["Content-Length"]))
        self._reply({"event_id": 1, "created": True})

    def do_GET(self) -> None:  # noqa: N802
        assert self.headers["Authorization"] == "Bearer " + "t" * 43
        self._reply({"context": self.context if "project=" in self.path else ""})

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("context", ["## Earlier\n- did things", ""])
def test_session_start_prints_hook_specific_output(hook_env, data_dir, context):
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    (data_dir / "token").write_text("t" * 43)
    handler = type("Handler", (_FakeWorker,), {"context": context})
    server = ThreadingHTTPServer(("127.0.0.1", int(hook_env["MEMLITE_WORKER_PORT"])), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        result, elapsed = run_hook(hook_env, fixture_bytes("SessionStart.startup", cwd="/p"))
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert result.returncode == 0 and elapsed < HOOK_TIMEOUT
    if not context:
        assert result.stdout == b""
        return
    assert json.loads(result.stdout) == {"hookSpecificOutput": {
        "hookEventName": "SessionStart", "additionalContext": context}}
