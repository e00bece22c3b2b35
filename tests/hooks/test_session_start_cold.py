"""SessionStart never depends on a running worker (issue 13, item 1).

The hook is run as a process (the real ``hook.py`` on a bare interpreter). With the worker
stopped, never started, or hung, SessionStart must print the project's memory at once:
the snapshot the worker left plus the project's activity still in the spool.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest
from hookrun import fixture_bytes, log_lines, run_hook, wait_until, worker_pids

from memlite.hooks import snapshot
from memlite.spawn import stop_worker


def _project(tmp_path: Path, name: str = "greeter") -> Path:
    project = tmp_path / "work" / name
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return project


def _event(name: str, session: str, project: Path, **changes: object) -> bytes:
    return fixture_bytes(name, session_id=session, cwd=str(project), **changes)


def _context(result) -> str:  # type: ignore[no-untyped-def]
    assert result.returncode == 0, result
    assert result.stdout, "SessionStart printed nothing"
    out = json.loads(result.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "SessionStart"
    return out["additionalContext"]


def _no_worker(env: dict[str, str]) -> dict[str, str]:
    """The hook cannot start a worker (as while the plugin venv is being built)."""
    return {k: v for k, v in env.items() if k != "MEMLITE_PYTHON"}


def _session_one(env: dict[str, str], project: Path, session: str = "sess-one-1111") -> None:
    for name, changes in (
            ("SessionStart.startup", {}),
            ("UserPromptSubmit", {"prompt": "rename the greeting in hello.py"}),
            ("PostToolUse.Read", {"tool_use_id": f"toolu_{session}_r",
                                  "tool_input": {"file_path": str(project / "hello.py")}}),
            ("PostToolUse.Bash", {"tool_use_id": f"toolu_{session}_b",
                                  "tool_input": {"command": "pytest -q tests/test_greet.py"}}),
            ("Stop", {"last_assistant_message": "Renamed greet() to welcome()."}),
            ("SessionEnd.other", {})):
        result, _ = run_hook(env, _event(name, session, project, **changes),
                             name.split(".")[0])
        assert result.returncode == 0


def test_worker_stopped_session_start_prints_the_snapshot_and_the_spool_at_once(
        worker, hook_env, data_dir, tmp_path):
    project = _project(tmp_path)
    _session_one(hook_env, project)
    # The worker writes the project's snapshot after the commits (debounced).
    wait_until(lambda: "Renamed greet() to welcome()" in
               ((snapshot.read(data_dir, str(project)) or {}).get("text") or ""))
    assert stop_worker(data_dir, grace=10.0) is not None  # as an idle shutdown would
    assert oct(os.stat(snapshot.path_for(data_dir, str(project))).st_mode & 0o777) == "0o600"

    env = _no_worker(hook_env)  # nothing may drain the spool during the test
    # Session 2 runs with the worker down: its activity is only in the spool.
    run_hook(env, _event("UserPromptSubmit", "sess-two-2222", project,
                         prompt="now document welcome()"), "UserPromptSubmit")
    run_hook(env, _event("PostToolUse.Read", "sess-two-2222", project,
                         tool_use_id="toolu_two_r",
                         tool_input={"file_path": str(project / "README.md")}), "PostToolUse")
    result, _ = run_hook(env, _event("SessionStart.startup", "sess-three-33", project),
                         "SessionStart")
    context = _context(result)
    assert context.startswith("<memlite-context>") and context.endswith("</memlite-context>")
    assert f"# Memory of project greeter ({project})" in context
    assert "Renamed greet() to welcome()" in context  # session 1, from the snapshot
    assert "rename the greeting in hello.py" in context
    assert "now document welcome()" in context and "read README.md" in context  # spool
    # Session 1 was observed (summary, observations); session 2 is raw activity.
    assert context.index("Recent session summaries") < context.index("Renamed greet()") \
        < context.index("Recent activity (raw") < context.index("now document welcome()")
    assert len(context) <= 9000
    assert worker_pids(data_dir) == set()
    assert "served the snapshot and spool" in log_lines(data_dir)[-1]


def test_first_install_spooled_activity_is_the_memory(hook_env, data_dir, tmp_path):
    """No worker has ever run (the venv is being built): session 1 is only in the spool,
    and session 2's SessionStart still prints it, within CONTEXT_MAX_CHARS."""
    project = _project(tmp_path)
    env = _no_worker(hook_env)
    _session_one(env, project)
    assert not (data_dir / "memlite.db").exists() and not (data_dir / "token").exists()
    context = _context(run_hook(env, _event("SessionStart.startup", "sess-two-2222", project),
                                "SessionStart")[0])
    assert "rename the greeting in hello.py" in context and "read hello.py" in context
    assert "`pytest -q tests/test_greet.py`" in context
    assert "Renamed greet() to welcome()" in context  # Claude's last answer (Stop)
    assert "Recent activity (raw, not yet compressed" in context

    # Another project sees none of it; a small budget is kept.
    other = _project(tmp_path, "other")
    result, _ = run_hook(env, _event("SessionStart.startup", "sess-x", other), "SessionStart")
    assert (result.returncode, result.stdout) == (0, b"")
    data_dir.joinpath("settings.json").write_text(json.dumps({"CONTEXT_MAX_CHARS": 1500}))
    for i in range(40):
        run_hook(env, _event("PostToolUse.Read", "sess-big", project, tool_use_id=f"t{i}",
                             tool_input={"file_path": f"{project}/src/module_{i:03}.py"}),
                 "PostToolUse")
    small = _context(run_hook(env, _event("SessionStart.startup", "sess-y", project),
                              "SessionStart")[0])
    assert len(small) <= 1500 and "module_039.py" in small and "Left out to fit" in small


def test_hung_worker_session_start_falls_back_to_the_snapshot(hook_env, data_dir, tmp_path):
    """A worker that accepts connections but never answers (hung, or starting: the port
    is bound before it serves) costs the hook its deadline, then the snapshot is printed."""
    project = _project(tmp_path)
    snapshot.write(data_dir, str(project), text="<memlite-context>\nremembered: #7 parser "
                   "fix\n</memlite-context>", items={"index": ["- #7 parser fix"]},
                   budget=9000)
    data_dir.joinpath("token").write_text("t" * 43)
    with socket.socket() as hung:
        hung.bind(("127.0.0.1", int(hook_env["MEMLITE_WORKER_PORT"])))
        hung.listen(8)  # never accepted: requests time out
        env = _no_worker(hook_env)
        result, elapsed = run_hook(env, _event("SessionStart.startup", "sess-h", project),
                                   "SessionStart")
    assert _context(result) == "<memlite-context>\nremembered: #7 parser fix\n</memlite-context>"
    assert "did not answer in time" in "\n".join(log_lines(data_dir))


@pytest.mark.parametrize("layout", ["dir", "worktree", "submodule", "plain", "symlink"])
def test_hook_project_root_matches_memlite_project(tmp_path, layout):
    from memlite.project import resolve_project

    main = tmp_path / "main"
    (main / ".git" / "worktrees" / "wt").mkdir(parents=True)
    (main / "src" / "deep").mkdir(parents=True)
    cwd = main / "src" / "deep"
    if layout == "worktree":
        wt = tmp_path / "wt"
        (wt / "pkg").mkdir(parents=True)
        (wt / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'wt'}\n")
        (main / ".git" / "worktrees" / "wt" / "commondir").write_text("../..\n")
        cwd = wt / "pkg"
    elif layout == "submodule":
        sub = main / "vendor" / "lib"
        (main / ".git" / "modules" / "lib").mkdir(parents=True)
        sub.mkdir(parents=True)
        (sub / ".git").write_text("gitdir: ../../.git/modules/lib\n")
        cwd = sub
    elif layout == "plain":
        cwd = tmp_path / "loose" / "dir"
        cwd.mkdir(parents=True)
    elif layout == "symlink":
        (tmp_path / "link").symlink_to(main)
        cwd = tmp_path / "link" / "src"
    info = resolve_project(str(cwd))
    assert info is not None
    assert snapshot.project_root(str(cwd)) == info.root
    assert snapshot.project_root("relative/path") is None and snapshot.project_root("") is None


def test_first_run_the_venv_builder_starts_the_worker_which_drains_the_spool(
        hook_env, data_dir, tmp_path, monkeypatch):
    """Issue 13 item 2: when the plugin venv is ready, the worker starts and the spool is
    drained at once, with no wait for a later hook. ``build`` runs for real except for
    the two slow commands (venv, pip), which make a venv whose python is this one."""
    import subprocess
    import sys

    from hookrun import healthy, query

    from memlite.hooks import bootstrap, venv_build

    project = _project(tmp_path)
    _session_one(_no_worker(hook_env), project)  # spooled while the venv "is built"
    assert worker_pids(data_dir) == set()
    plugin_data = tmp_path / "plugin-data"
    plugin_data.mkdir()

    def fake_run(argv, check=False, **kwargs):  # type: ignore[no-untyped-def]
        if argv[1:3] == ["-m", "venv"]:
            (Path(argv[-1]) / "bin").mkdir(parents=True)
            shim = Path(argv[-1]) / "bin" / "python"
            shim.write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
            shim.chmod(0o755)
        elif "sys.version_info" in argv[-1]:  # which Python makes the venv
            return subprocess.CompletedProcess(argv, 0, stdout="3 11\n", stderr="")
        elif argv[1:4] == ["-m", "pip", "--version"]:  # can the host's pip install into it
            return subprocess.CompletedProcess(argv, 0, stdout="pip 24.0 from x\n", stderr="")
        return subprocess.CompletedProcess(argv, 0, stdout="", stderr="")

    monkeypatch.setattr(venv_build.subprocess, "run", fake_run)
    for key in ("MEMLITE_WORKER_PORT", "MEMLITE_OBSERVER", "MEMLITE_EMBEDDER"):
        if key in hook_env:
            monkeypatch.setenv(key, hook_env[key])
    assert venv_build.build(str(plugin_data)) == 0
    assert (plugin_data / "venv" / bootstrap.READY_FILE).exists()
    wait_until(lambda: healthy(hook_env), timeout=30)
    wait_until(lambda: query(data_dir, "SELECT count(*) FROM events") == [(6,)], timeout=30)
    wait_until(lambda: not list((data_dir / "spool").glob("*.jsonl")))
    wait_until(lambda: snapshot.read(data_dir, str(project)) is not None)


def test_memory_deleted_through_the_api_leaves_the_snapshot_at_once(worker, hook_env, data_dir,
                                                                   tmp_path):
    """A deletion must not come back through a SessionStart served while the worker is
    down: the worker sweeps its snapshots after every delete (not only every 5 minutes)."""
    from hookrun import query

    from memlite.workerapi import call

    project = _project(tmp_path)
    _session_one(hook_env, project)
    wait_until(lambda: "Renamed greet() to welcome()" in
               ((snapshot.read(data_dir, str(project)) or {}).get("text") or ""))
    token = (data_dir / "token").read_text().strip()
    port = int(hook_env["MEMLITE_WORKER_PORT"])
    for (summary_id,) in query(data_dir, "SELECT id FROM summaries"):
        call(port, token, "DELETE", f"/api/summaries/{summary_id}")
    wait_until(lambda: "Renamed greet() to welcome()" not in
               ((snapshot.read(data_dir, str(project)) or {}).get("text") or ""))
    call(port, token, "DELETE", "/api/sessions/sess-one-1111")
    wait_until(lambda: snapshot.read(data_dir, str(project)) is None)
    assert stop_worker(data_dir, grace=10.0) is not None
    result, _ = run_hook(_no_worker(hook_env), _event("SessionStart.startup", "sess-2", project),
                         "SessionStart")
    assert (result.returncode, result.stdout) == (0, b"")


def test_the_fallback_imports_only_the_standard_library_and_no_typing():
    import subprocess

    from hookrun import BARE, REPO

    code = ("import sys; sys.path.insert(0, sys.argv[1]); import memlite.hooks.snapshot; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('trio', 'attrs', 'quart', "
            "'apsw', 'hypercorn', 'typing') or m == 'memlite.context']; print(bad)")
    result = subprocess.run([BARE, "-I", "-S", "-c", code, str(REPO / "plugin")],
                            capture_output=True, text=True, timeout=30)
    assert (result.returncode, result.stdout.strip()) == (0, "[]"), result.stderr


def test_a_budget_changed_while_the_worker_is_down_is_kept(hook_env, data_dir, tmp_path):
    project = _project(tmp_path)
    items = {"index": [f"- #{i} 2026-12-01 10:00 [change] edited module {i}"
                       for i in range(200, 0, -1)]}
    from memlite.context_text import pack_items

    text, _, _ = pack_items(str(project), items, 9000)
    snapshot.write(data_dir, str(project), text=text, items=items, budget=9000)
    env = _no_worker(hook_env)
    full = _context(run_hook(env, _event("SessionStart.startup", "s", project),
                             "SessionStart")[0])
    assert full == text and len(full) > 5000
    data_dir.joinpath("settings.json").write_text(json.dumps({"CONTEXT_MAX_CHARS": 2000}))
    small = _context(run_hook(env, _event("SessionStart.startup", "s", project),
                              "SessionStart")[0])
    assert len(small) <= 2000 and "edited module 200" in small and "Left out to fit" in small


def test_the_snapshot_fallback_reads_exactly_the_spool_files_the_drain_reads(tmp_path):
    """The hook's spool reader inlines ``spool.is_spool_file`` (importing spool is slow):
    quarantined lines must never show up as activity, live and claimed files must."""
    from memlite.hooks import snapshot, spool

    directory = tmp_path / "spool"
    directory.mkdir()
    names = ["20261201-1.jsonl", "20261201-2.jsonl.draining", "x.draining", "quarantine.jsonl",
             "rejected.jsonl", "attempts.json", "notes.txt"]
    for i, name in enumerate(names):
        (directory / name).write_bytes(b'{"n": %d}\n' % i)
    read = {int(line.split(b":")[1].strip(b" }")) for line in snapshot._spool_lines(str(tmp_path))}
    assert {names[i] for i in read} == {n for n in names if spool.is_spool_file(n)}


def test_the_snapshot_fallback_reads_only_the_newest_spool_files(tmp_path, monkeypatch):
    """One file per hook process: a worker down for long leaves thousands. The hook reads
    the newest ``MAX_SPOOL_FILES`` (20,000 files took it ~1 s; user trials, 17)."""
    import os

    from memlite.hooks import snapshot

    monkeypatch.setattr(snapshot, "MAX_SPOOL_FILES", 3)
    directory = tmp_path / "spool"
    directory.mkdir()
    for i in range(6):  # written in a shuffled order, so names say nothing about age
        path = directory / f"20261201-{(i * 7) % 6 + 100}.jsonl"
        path.write_bytes(b'{"n": %d}\n' % i)
        os.utime(path, (1_764_600_000 + i, 1_764_600_000 + i))
    read = sorted(int(line.split(b":")[1].strip(b" }"))
                  for line in snapshot._spool_lines(str(tmp_path)))
    assert read == [3, 4, 5]


def test_a_spool_with_bad_lines_still_gives_the_good_ones(data_dir, tmp_path):
    """Torn, non-JSON, wrong-shaped or surrogate-laden lines are skipped, never fatal."""
    project = _project(tmp_path)
    spool_dir = data_dir / "spool"
    spool_dir.mkdir(parents=True)
    good = {"v": 1, "event": "PostToolUse", "spooledAt": 1_764_600_000_000,
            "payload": {"session_id": "sess-good", "cwd": str(project), "tool_name": "Edit",
                        "tool_input": {"file_path": f"{project}/kept.py"}}}
    lines = [b"not json", b'{"v": 1, "payload": []}', b'{"payload": {"cwd": 7}}',
             b'{"v": 1, "event": "PostToolUse", "payload": {"session_id": "s", "cwd": "'
             + str(project).encode() + b'", "tool_name": "Bash", "tool_input": '
             b'{"command": "echo \\ud800 lone"}}}',
             b"[" * 100_000, json.dumps(good).encode(), b'{"v": 1, "event": "Stop", "pay']
    (spool_dir / "20261201-1.jsonl").write_bytes(b"\n".join(lines))
    (spool_dir / "20261201-2.draining").write_bytes(b"\xff\xfe garbage\n")
    context = snapshot.fallback_context(str(data_dir), str(project))
    assert context is not None and "edited kept.py" in context
    assert "echo" in context and "lone" in context  # the lone surrogate did not stop it
    assert context.encode("utf-8", "surrogatepass")


@pytest.mark.parametrize("bad_cwd", ["/tmp/with\x00nul", "/tmp/lone-\ud800-surrogate"])
def test_a_spooled_event_with_an_unexaminable_cwd_does_not_hide_the_others(
        hook_env, data_dir, tmp_path, bad_cwd):
    """User trial (docs/user-trials.md): one spooled event whose cwd cannot even be made
    a path (a NUL, a lone surrogate) made every later worker-down SessionStart print
    nothing ("snapshot unreadable: ValueError: embedded null byte"), in every project,
    until a worker drained the spool."""
    project = _project(tmp_path)
    env = _no_worker(hook_env)
    _session_one(env, project)
    result, _ = run_hook(env, fixture_bytes("PostToolUse.Bash", session_id="sess-bad",
                                            cwd=bad_cwd), "PostToolUse")
    assert (result.returncode, result.stdout) == (0, b"")
    context = _context(run_hook(env, _event("SessionStart.startup", "sess-two-2222", project),
                                "SessionStart")[0])
    assert "rename the greeting in hello.py" in context
    assert snapshot.project_root(bad_cwd) is None
    # Its own SessionStart exits 0 and prints only protocol output (the hook stores a lone
    # surrogate as "?", so that cwd names a project of its own).
    result, _ = run_hook(env, fixture_bytes("SessionStart.startup", session_id="sess-bad",
                                            cwd=bad_cwd), "SessionStart")
    assert result.returncode == 0
    if "\x00" in bad_cwd:
        assert result.stdout == b""
    else:
        assert "/tmp/lone-?-surrogate" in _context(result)
