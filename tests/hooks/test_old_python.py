"""The hook, the venv builder and the MCP stdio server run on macOS's ``/usr/bin/python3``.

On a Mac without a newer Python on the launcher's list, the plugin's hooks and its MCP
server first run on the system interpreter, Python 3.9 (the Command Line Tools' one):
they must spool the event, print the snapshot and start the venv build there (the build
itself finds a Python 3.11+). Anything newer than 3.9 that runs at import or call time
(``isinstance(x, int | str)``, ``datetime.UTC``, ``dataclass(kw_only=True)``) made every
hook fail with an "internal error" and lose its event, so the plugin never installed.

Two checks: a static one over every module those entry points import (runs everywhere),
and the real thing on a Python 3.9 or 3.10 interpreter when this machine has one.
"""

from __future__ import annotations

import ast
import glob
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hookrun import REPO, fixture_bytes
from ports import free_port

ENTRY_POINTS = ("memlite.hooks.main", "memlite.hooks.bootstrap", "memlite.hooks.venv_build",
                "memlite.hooks.snapshot", "memlite.hooks.spool", "memlite.spawn",
                "memlite.mcp.server", "memlite.mcp.tools")
OLDEST = (3, 9)


def _modules() -> list[Path]:
    """Files of every memlite module the entry points import (asked of a fresh process)."""
    code = ("import sys, json; sys.path.insert(0, sys.argv[1]); "
            + "; ".join(f"import {m}" for m in ENTRY_POINTS)
            + "; print(json.dumps(sorted(m.__file__ for n, m in sys.modules.items() "
              "if n.split('.')[0] == 'memlite')))")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(REPO)],
                         capture_output=True, text=True, check=True, timeout=60).stdout
    return [Path(p) for p in json.loads(out)]


def _newer_than_39(tree: ast.Module) -> list[str]:
    """Constructs in ``tree`` that Python 3.9 refuses at import or call time."""
    found = []
    future = any(isinstance(n, ast.ImportFrom) and n.module == "__future__"
                 and any(a.name == "annotations" for a in n.names) for n in tree.body)
    for node in ast.walk(tree):
        line = getattr(node, "lineno", "?")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            name = node.func.id
            if name in ("isinstance", "issubclass") and len(node.args) == 2 \
                    and isinstance(node.args[1], ast.BinOp) \
                    and isinstance(node.args[1].op, ast.BitOr):
                found.append(f"line {line}: {name}(x, A | B) (3.10)")
            if name == "dataclass" and any(k.arg in ("kw_only", "slots") for k in node.keywords):
                found.append(f"line {line}: dataclass(kw_only/slots) (3.10)")
            if name == "zip" and any(k.arg == "strict" for k in node.keywords):
                found.append(f"line {line}: zip(strict=) (3.10)")
        if isinstance(node, ast.ImportFrom) and node.module == "datetime" \
                and any(a.name == "UTC" for a in node.names):
            found.append(f"line {line}: datetime.UTC (3.11)")
        if isinstance(node, ast.Attribute) and node.attr == "UTC" \
                and isinstance(node.value, ast.Name) and node.value.id == "datetime":
            found.append(f"line {line}: datetime.UTC (3.11)")
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) \
                else [node.module or ""]
            if any(n.split(".")[0] == "tomllib" for n in names):
                found.append(f"line {line}: tomllib (3.11)")
        if not future and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            annotations = [a.annotation for a in (*node.args.args, *node.args.kwonlyargs)]
            if any(isinstance(a, ast.BinOp) for a in (*annotations, node.returns)):
                found.append(f"line {line}: X | Y annotation without "
                             "`from __future__ import annotations` (3.10)")
    return found


def test_what_the_hook_and_the_mcp_server_import_parses_and_runs_on_python_3_9():
    modules = _modules()
    assert any(p.name == "lifecycle.py" for p in modules)  # the import graph was followed
    problems = {}
    for path in modules:
        source = path.read_text("utf-8")
        try:
            tree = ast.parse(source, str(path), feature_version=OLDEST)
        except SyntaxError as exc:
            problems[str(path)] = [f"syntax newer than 3.9: {exc}"]
            continue
        if found := _newer_than_39(tree):
            problems[str(path.relative_to(REPO))] = found
    assert not problems, problems


def _old_python() -> str | None:
    """A Python 3.9 or 3.10 on this machine (PATH, then pyenv's versions), or None."""
    for name in ("python3.9", "python3.10"):
        if found := shutil.which(name):
            try:
                subprocess.run([found, "-c", "pass"], check=True, capture_output=True,
                               timeout=30)
                return found
            except (OSError, subprocess.SubprocessError):
                pass
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    for pattern in ("3.9.*/bin/python3.9", "3.10.*/bin/python3.10"):
        for found in sorted(glob.glob(os.path.join(root, "versions", pattern))):
            if os.access(found, os.X_OK):
                return found
    return None


OLD = _old_python()
needs_old = pytest.mark.skipif(OLD is None, reason="no Python 3.9 or 3.10 on this machine")


@needs_old
def test_a_first_session_on_python_3_9_is_spooled_and_its_memory_shown(tmp_path, data_dir):
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    # As on a Mac right after the install: no MEMLITE_PYTHON, no plugin venv yet (no
    # CLAUDE_PLUGIN_DATA: nothing is built in the background here), the worker down.
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"),
           "MEMLITE_DATA_DIR": str(data_dir), "MEMLITE_WORKER_PORT": str(free_port())}
    hook = str(REPO / "plugin" / "scripts" / "hook.py")
    events = [("SessionStart.startup", {}),
              ("UserPromptSubmit", {"prompt": "we use httpx now"}), ("PostToolUse.Bash", {}),
              ("Stop", {}), ("SessionEnd.other", {}), ("SessionStart.startup", {})]
    outs = []
    for fixture, changes in events:
        name = fixture.split(".")[0]
        stdin = fixture_bytes(fixture, cwd=str(project), session_id="old-1", **changes)
        done = subprocess.run([OLD, "-I", "-S", hook, name], input=stdin, env=env,
                              cwd=project, capture_output=True, timeout=30)
        assert done.returncode == 0 and not done.stderr, done
        outs.append(done.stdout.decode())
    log = (data_dir / "hooks.log").read_text()
    assert "internal error" not in log, log
    assert len(list((data_dir / "spool").glob("*.jsonl"))) == len(events)
    context = json.loads(outs[-1])["hookSpecificOutput"]["additionalContext"]
    assert "we use httpx now" in context


@needs_old
def test_the_builder_and_the_mcp_server_import_on_python_3_9(tmp_path):
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            + "; ".join(f"import {m}" for m in ENTRY_POINTS)
            + "; from memlite.lifecycle import WorkerInfo; "
              "print(WorkerInfo(pid=1, port=2, started_at='2026-12-01T00:00:00+00:00', "
              "version='0').uptime() > 0)")
    done = subprocess.run([OLD, "-I", "-S", "-c", code, str(REPO)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "True", done.stderr
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
         "params": {"name": "memory_get", "arguments": {"ids": "7"}}},
    ]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
           "MEMLITE_DATA_DIR": str(tmp_path / "data"), "MEMLITE_WORKER_PORT": str(free_port())}
    done = subprocess.run([OLD, "-I", "-S", str(REPO / "plugin" / "scripts" / "mcp.py")],
                          input="".join(json.dumps(r) + "\n" for r in requests), env=env,
                          capture_output=True, text=True, timeout=60)
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, 2], (done.stdout, done.stderr)
    assert replies[0]["result"]["serverInfo"]["name"] == "memlite"
    assert "result" in replies[1], replies[1]  # an answer (an isError text), not a crash


def _older_python() -> str | None:
    """A Python older than 3.9 (macOS 11's Command Line Tools ship 3.8), or None."""
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    for name in ("python3.8", "python3.7"):
        candidates = [shutil.which(name), *sorted(glob.glob(
            os.path.join(root, "versions", f"{name[6:]}.*", "bin", name)))]
        for found in filter(None, candidates):
            if _runs(found):  # a pyenv shim of a version not selected exits 127
                return found
    return None


def _runs(python: str) -> bool:
    try:
        return subprocess.run([python, "-c", "pass"], capture_output=True,
                              timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


OLDER = _older_python()


@pytest.mark.skipif(OLDER is None, reason="no Python 3.8 or 3.7 on this machine")
def test_on_python_3_8_session_start_says_why_memlite_does_not_start(tmp_path):
    """memlite cannot run there at all (not even build its venv): one line says so."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
           "MEMLITE_DATA_DIR": str(tmp_path / "data")}
    hook = str(REPO / "plugin" / "scripts" / "hook.py")
    start = subprocess.run([OLDER, "-I", "-S", hook, "SessionStart"], env=env,
                           input=fixture_bytes("SessionStart.startup"), capture_output=True,
                           timeout=30)
    assert start.returncode == 0 and not start.stderr, start
    message = json.loads(start.stdout)["systemMessage"]
    assert "needs 3.9 or newer" in message and "MEMLITE_PYTHON" in message, message
    stop = subprocess.run([OLDER, "-I", "-S", hook, "Stop"], env=env,
                          input=fixture_bytes("Stop"), capture_output=True, timeout=30)
    assert stop.returncode == 0 and stop.stdout == b"" and stop.stderr == b"", stop
    server = subprocess.run([OLDER, "-I", "-S", str(REPO / "plugin" / "scripts" / "mcp.py")],
                            env=env, input=b"", capture_output=True, timeout=30)
    assert server.returncode == 1 and server.stdout == b"", server
    assert b"needs Python 3.9 or newer" in server.stderr, server.stderr
