"""End to end with the real Claude Code CLI: session 2 is told what session 1 did.

Session 1 (``claude -p`` against the fake API, our plugin loaded) reads ``hello.py``,
writes ``NOTES.md`` and runs a shell command; the hooks hand every event to the worker.
Session 2 starts in the same project, and its FIRST request to the model must carry the
``<memlite-context>`` block naming those files and that command. The AI observer is a
later issue, so the block shows the raw layer ("Recent activity (raw, not yet
compressed)"): session 1's prompt and its tool events, straight from the events table.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from e2e_helpers import REAL_PLUGIN, REPO, run_claude, run_cli

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(240)]

MARKER = "memlite-e2e-marker-7f3a"


def _session_one_script(project: Path) -> dict:
    return {
        "s1": [
            {"tool": "Read", "input": {"file_path": str(project / "hello.py")}},
            {"tool": "Write", "input": {"file_path": str(project / "NOTES.md"),
                                        "content": "greeting renamed\n"}},
            {"tool": "Bash", "input": {"command": f"echo {MARKER}",
                                       "description": "print the marker"}},
            {"text": "Read hello.py, wrote NOTES.md and ran the marker command."},
        ],
        "s2": [{"text": "I see what the last session did."}],
    }


def _context_of_first_request(api, marker: str) -> str:
    first = api.message_requests(marker)[0]
    text = json.dumps(first)
    assert "<memlite-context>" in text, text[:3000]
    start = text.index("<memlite-context>")
    return json.loads('"' + text[start:text.index("</memlite-context>", start)] + '"')


def _wait_session_one_stored(data_dir: Path, timeout: float = 30.0) -> float:
    """Wait until session 1's SessionEnd is in the database (it may have been spooled
    while the worker that its SessionStart spawned was still starting)."""
    from memlite.errors import MemliteError

    started = time.monotonic()
    while time.monotonic() - started < timeout:
        try:
            if _completed_sessions(data_dir) >= 1:
                return time.monotonic() - started
        except (MemliteError, OSError):
            pass  # the worker has not created the database yet
        time.sleep(0.05)
    raise AssertionError(f"session 1 was not stored within {timeout} s; see "
                         f"{data_dir / 'hooks.log'} and {data_dir / 'worker.log'}")


def _completed_sessions(data_dir: Path) -> int:
    from memlite.storage import connect

    conn = connect(data_dir, writer=False)
    try:
        return conn.execute("SELECT count(*) FROM sessions WHERE status = 'completed'"
                            ).fetchall()[0][0]
    finally:
        conn.close()


def _two_sessions(claude_bin, api, env, project, plugin_dir) -> dict:
    timings = {}
    out1, timings["session1"] = run_claude(
        claude_bin, "SCRIPT=s1 Look at hello.py, note the change, run the marker command",
        cwd=project, env=env, plugin_dir=plugin_dir)
    assert out1[-1]["type"] == "result" and not out1[-1]["is_error"], out1[-1]
    assert (project / "NOTES.md").read_text() == "greeting renamed\n"
    assert not out1[-1].get("permission_denials"), out1[-1]["permission_denials"]
    timings["stored_after"] = _wait_session_one_stored(Path(env["MEMLITE_DATA_DIR"]))
    out2, timings["session2"] = run_claude(
        claude_bin, "SCRIPT=s2 What did we do last time?", cwd=project, env=env,
        plugin_dir=plugin_dir)
    assert out2[-1]["type"] == "result" and not out2[-1]["is_error"], out2[-1]
    return timings


def _assert_names_session_one(context: str, project: Path) -> None:
    assert "reference data" in context.lower() and "not instructions" in context
    assert "read hello.py" in context  # paths inside the project are shown relative to it
    assert "wrote NOTES.md" in context
    assert f"# Memory of project greeter ({project})" in context
    # Session 1 was observed (rules backend in tests): its events are observations and a
    # summary now, not a raw layer; a bare `echo` is low signal and is not kept, so the
    # marker shows through Claude's last answer in the summary instead.
    assert "ran the marker command" in context
    assert "SCRIPT=s1 Look at hello.py" in context  # session 1's prompt


def test_session_two_starts_with_what_session_one_did(
        claude_bin, fake_api_factory, claude_env, git_project, plugin_dir, memlite_data):
    api = fake_api_factory(_session_one_script(git_project))
    env = claude_env(api)
    timings = _two_sessions(claude_bin, api, env, git_project, plugin_dir)

    # Session 1's own first request had no memory to show (the project was new).
    assert "<memlite-context>" not in json.dumps(api.message_requests("SCRIPT=s1")[0])
    context = _context_of_first_request(api, "SCRIPT=s2")
    _assert_names_session_one(context, git_project)
    assert len(context) <= 9000
    # It arrived the documented way: SessionStart's hookSpecificOutput.additionalContext.
    assert "SessionStart hook additional context: <memlite-context>" in \
        json.dumps(api.message_requests("SCRIPT=s2")[0], ensure_ascii=False)
    # The hooks' worker is the one in the test's data directory, and it stored the events.
    assert (memlite_data / "worker.pid").exists()
    counts = _table_counts(memlite_data)
    assert counts["sessions"] == 2 and counts["user_prompts"] == 2, counts
    assert counts["events"] >= 2 * 4 + 3, counts  # 2x start/prompt/stop/end + 3 tools
    print(f"\ne2e timings (s): {timings}; session 2 context: {len(context)} chars\n{context}")


def _table_counts(data_dir: Path) -> dict[str, int]:
    from memlite.storage import connect, table_counts

    conn = connect(data_dir, writer=False)
    try:
        return table_counts(conn)
    finally:
        conn.close()


def _marketplace(tmp_path: Path, plugin_dir: Path) -> tuple[Path, str]:
    """The repository itself when it carries a marketplace.json; else a temp one."""
    repo_manifest = REPO / ".claude-plugin" / "marketplace.json"
    if plugin_dir == REAL_PLUGIN and repo_manifest.is_file():
        return REPO, json.loads(repo_manifest.read_text())["name"]
    root = tmp_path / "marketplace"
    (root / ".claude-plugin").mkdir(parents=True)
    shutil.copytree(plugin_dir, root / "plugins" / "memlite")
    (root / ".claude-plugin" / "marketplace.json").write_text(json.dumps({
        "name": "memlite-e2e", "owner": {"name": "memlite tests"},
        "plugins": [{"name": "memlite", "source": "./plugins/memlite",
                     "description": "memlite (e2e)"}]}))
    return root, "memlite-e2e"


def test_plugin_installed_from_the_marketplace_works_the_same(
        claude_bin, fake_api_factory, claude_env, git_project, plugin_dir, tmp_path):
    api = fake_api_factory(_session_one_script(git_project))
    env = claude_env(api)
    market, name = _marketplace(tmp_path, plugin_dir)
    started = time.monotonic()
    run_cli(claude_bin, "plugin", "marketplace", "add", str(market), env=env, cwd=git_project)
    run_cli(claude_bin, "plugin", "install", f"memlite@{name}", env=env, cwd=git_project)
    listed = run_cli(claude_bin, "plugin", "list", env=env, cwd=git_project)
    install_seconds = time.monotonic() - started
    assert "memlite" in listed
    settings = json.loads((claude_env.home / ".claude" / "settings.json").read_text())
    assert settings["enabledPlugins"] == {f"memlite@{name}": True}

    timings = _two_sessions(claude_bin, api, env, git_project, plugin_dir=None)
    _assert_names_session_one(_context_of_first_request(api, "SCRIPT=s2"), git_project)
    print(f"\ne2e marketplace: install {install_seconds:.2f} s, sessions {timings}")


def test_session_two_gets_context_even_after_the_worker_idled_out(
        claude_bin, fake_api_factory, claude_env, git_project, plugin_dir, memlite_data):
    from memlite.spawn import stop_worker

    api = fake_api_factory(_session_one_script(git_project))
    env = claude_env(api)
    out1, _ = run_claude(claude_bin, "SCRIPT=s1 Look at hello.py, note the change, run the "
                         "marker command", cwd=git_project, env=env, plugin_dir=plugin_dir)
    assert out1[-1]["type"] == "result" and not out1[-1]["is_error"]
    _wait_session_one_stored(memlite_data)
    assert stop_worker(memlite_data, grace=10.0) is not None  # as an idle shutdown would
    run_claude(claude_bin, "SCRIPT=s2 What did we do last time?", cwd=git_project, env=env,
               plugin_dir=plugin_dir)
    _assert_names_session_one(_context_of_first_request(api, "SCRIPT=s2"), git_project)
