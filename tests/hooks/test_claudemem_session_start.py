"""Issue 13 item 7: memory imported from claude-mem arrives in the next SessionStart.

The database is ``tests/fixtures/claude-mem/claude-mem.db``, written by claude-mem's own
storage code (its published npm package, run by ``write_db.js``; see the README there),
with rows as its worker stores them when its hooks report sessions. claude-mem names the
projects ``shop``, ``notes`` and ``widget``; memlite must find them by path.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from hookrun import REPO, fixture_bytes, run_hook, wait_until

from memlite.lifecycle import probe_ready

FIXTURE = REPO / "tests" / "fixtures" / "claude-mem" / "claude-mem.db"


def _git_repo(path) -> str:
    (path / ".git").mkdir(parents=True)
    (path / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (path / "src").mkdir()
    return os.path.realpath(path)


def _context(env: dict[str, str], cwd: str) -> str:
    result, _ = run_hook(env, fixture_bytes("SessionStart.startup", cwd=cwd), timeout=60)
    assert result.returncode == 0, result.stderr
    if not result.stdout:
        return ""
    return json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]


def test_imported_claude_mem_memory_is_in_the_next_session_start(hook_env, data_dir,
                                                                 tmp_path):
    home = tmp_path / "home"
    notes = _git_repo(tmp_path / "code" / "notes")
    widget = _git_repo(tmp_path / "code" / "widget")
    transcripts = home / ".claude" / "projects" / notes.replace("/", "-")
    transcripts.mkdir(parents=True)
    (transcripts / "s.jsonl").write_text(json.dumps({"type": "user", "cwd": notes}) + "\n")
    env = {**hook_env, "HOME": str(home)}
    env.pop("CLAUDE_CONFIG_DIR", None)
    source = tmp_path / "claude-mem.db"
    shutil.copyfile(FIXTURE, source)
    done = subprocess.run([sys.executable, "-m", "memlite", "import", str(source),
                           "--project", f"widget={widget}", "--json"],
                          env=env, capture_output=True, text=True, timeout=60, cwd=REPO)
    assert done.returncode == 0, done.stderr
    projects = json.loads(done.stdout)["projects"]
    assert projects["mapped"]["notes"]["path"] == notes
    assert projects["mapped"]["widget"]["path"] == widget
    started = subprocess.run([sys.executable, "-m", "memlite", "worker", "start", "--json"],
                             env=env, capture_output=True, text=True, timeout=60, cwd=REPO)
    assert started.returncode == 0, started.stderr
    wait_until(lambda: probe_ready(int(env["MEMLITE_WORKER_PORT"])), timeout=30)

    text = _context(env, os.path.join(widget, "src"))  # a session in a subfolder
    assert "Renamed Button prop kind to variant" in text
    assert "kind is now variant" in text  # the imported summary
    assert "Export re-renders" not in text  # another project's memory stays out
    text = _context(env, notes)
    assert "[sensitive] Export reads the user's private journal folder" in text
    assert "Export re-renders every note on each run" in text


def test_imported_memory_arrives_even_before_any_worker_runs_again(hook_env, data_dir,
                                                                   tmp_path):
    """An import needs the worker stopped; the SessionStart right after it finds no worker
    and prints the project's snapshot, which the import itself must have written."""
    widget = _git_repo(tmp_path / "code" / "widget")
    env = {**hook_env, "HOME": str(tmp_path / "home")}
    env.pop("CLAUDE_CONFIG_DIR", None)
    env.pop("MEMLITE_PYTHON", None)  # the hook cannot start a worker (venv still building)
    source = tmp_path / "claude-mem.db"
    shutil.copyfile(FIXTURE, source)
    done = subprocess.run([sys.executable, "-m", "memlite", "import", str(source),
                           "--project", f"widget={widget}", "--json"],
                          env=env, capture_output=True, text=True, timeout=60, cwd=REPO)
    assert done.returncode == 0, done.stderr
    text = _context(env, widget)
    assert "Renamed Button prop kind to variant" in text
    assert "Export re-renders" not in text
