"""``memlite demo``: the whole loop on a throwaway data directory, with real processes.

1. Make a throwaway data directory and a small git project (``shop``) beside it.
2. Start a worker for that data directory (``memlite worker run``, on a free port).
3. Replay a recorded Claude Code session (``demo_data/session.json``: hook payloads in the
   exact shape Claude Code 2.1.332 sends, see that file's ``about``) through the REAL
   hook entry point, one process per event, stdin to stdout, as Claude Code runs it.
4. Start the "next session": one more SessionStart through the hook, and print the
   ``additionalContext`` it answers: the context block Claude would receive.
5. One search (``GET /api/search``) with the install's bearer token, and with ``--keep``
   a dashboard login URL (``POST /api/auth/login-link``); without it the worker stops
   at the end, so no link is printed that would not open.
6. Say which observer backend compressed the events. Until the observer issue lands
   that is "none yet": the events are stored, not compressed, and the context shows
   them as raw activity.
7. Stop the worker (by its pid) and delete everything, unless ``--keep``: then the
   worker and the directory stay, and the demo prints how to use and stop them.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
import uuid
from importlib import resources
from pathlib import Path
from typing import Any

from memlite.config import load_settings
from memlite.http.credentials import load_or_create_token
from memlite.spawn import start_worker, stop_worker, worker_env

__all__ = ["OBSERVER_BACKEND", "load_recorded_session", "run_demo"]

OBSERVER_BACKEND = ("rules (deterministic, no AI, no tokens spent; "
                    "MEMLITE_OBSERVER=auto uses Claude when it is available)")
PACKAGE_ROOT = Path(__file__).resolve().parent.parent
# The hook as the plugin's launcher runs it: isolated (-I: no user site, no PYTHON* env),
# memlite's source first on sys.path, then memlite.hooks.main (standard library only).
_HOOK_BOOT = ("import sys; sys.path.insert(0, sys.argv.pop(1)); "
              "from memlite.hooks.main import main; sys.exit(main(sys.argv[1:]))")


def load_recorded_session(project: Path, home: Path, session_id: str) -> dict[str, Any]:
    """The recorded session with its placeholders filled in for ``project``."""
    text = resources.files("memlite").joinpath("demo_data/session.json").read_text("utf-8")
    encoded = str(project).replace("/", "-")
    for placeholder, value in (("<PROJECT_DIR>", str(project)), ("<HOME>", str(home)),
                               ("<ENCODED_PROJECT_DIR>", encoded),
                               ("<SESSION_ID>", session_id)):
        text = text.replace(placeholder, json.dumps(value)[1:-1])
    return json.loads(text)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _make_project(root: Path, files: dict[str, str]) -> None:
    (root / ".git" / "refs" / "heads").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(content)


def _hook(event: dict[str, Any], env: dict[str, str], cwd: Path) -> tuple[str, float]:
    """Run the real hook entry point as a process; returns (stdout, seconds)."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-I", "-c", _HOOK_BOOT, str(PACKAGE_ROOT), event["hook_event_name"]],
        input=json.dumps(event).encode(), capture_output=True, env=env, cwd=cwd, timeout=30)
    return done.stdout.decode("utf-8", "replace"), time.perf_counter() - started


def _api(port: int, token: str, method: str, path: str) -> dict[str, Any]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method,
                                     data=b"" if method == "POST" else None,
                                     headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read())


def _describe(event: dict[str, Any]) -> str:
    name = event["hook_event_name"]
    tool_input = event.get("tool_input") or {}
    target = tool_input.get("file_path") or tool_input.get("command") or ""
    if name in ("PostToolUse", "PostToolUseFailure"):
        return f"{name} {event['tool_name']} {target}".rstrip()
    if name == "UserPromptSubmit":
        return f"{name} {event['prompt'][:60]!r}"
    return name


def _replay(events: list[dict[str, Any]], env: dict[str, str], project: Path) -> None:
    print(f"replaying a recorded Claude Code session through the hook ({len(events)} events, "
          "one process each):")
    for event in events:
        out, seconds = _hook(event, env, project)
        note = f"  -> printed {len(out)} chars" if out.strip() else ""
        print(f"  {seconds * 1000:6.1f} ms  {_describe(event)}{note}")


def _next_session(env: dict[str, str], project: Path, home: Path) -> str:
    start = load_recorded_session(project, home, str(uuid.uuid4()))["events"][0]
    out, seconds = _hook(start, env, project)
    print(f"\nthe next session's SessionStart hook answered in {seconds * 1000:.1f} ms; "
          "the context block Claude would receive:\n")
    try:
        return json.loads(out)["hookSpecificOutput"]["additionalContext"]
    except (ValueError, KeyError, TypeError):
        return ""


def _main(base: Path, keep: bool) -> int:
    data_dir, project, home = base / "data", base / "shop", base / "home"
    settings = load_settings(data_dir, env={})  # creates the directory and settings.json
    port = _free_port()
    env = {**os.environ, "MEMLITE_DATA_DIR": str(settings.data_dir),
           "MEMLITE_WORKER_PORT": str(port), "MEMLITE_PYTHON": sys.executable,
           "MEMLITE_OBSERVER": "rules"}
    recorded = load_recorded_session(project, home, str(uuid.uuid4()))
    _make_project(project, recorded["files"])
    print(f"memlite demo: throwaway data directory {settings.data_dir}, project {project}")
    started = time.perf_counter()
    info = start_worker(settings.data_dir, env=worker_env(env), timeout=30).info
    assert info is not None  # start_worker waits for readiness
    print(f"worker ready in {time.perf_counter() - started:.2f} s: pid {info.pid}, {info.url}\n")
    try:
        _replay(recorded["events"], env, project)
        block = _next_session(env, project, home)
        print(block or "(empty: the worker did not answer with context)")
        token = load_or_create_token(settings.data_dir)
        query = urllib.parse.urlencode({"q": "expired login", "project": str(project)})
        found = _api(info.port, token, "GET", f"/api/search?{query}")
        print("\nsearch 'expired login' (GET /api/search, "
              f"{found['mode_used']}): {len(found['observations'])} observations, "
              f"{len(found['summaries'])} summaries, {len(found['prompts'])} prompts")
        for hit in found["prompts"][:3]:
            print(f"  prompt: {hit['prompt_text'][:100]}")
        if keep:  # without --keep the worker stops in a moment: a link would be dead
            link = _api(info.port, token, "POST", "/api/auth/login-link")
            print(f"\ndashboard (one-time login, {int(link.get('expires_in', 300))} s): "
                  f"{link['url']}")
        else:
            print("\ndashboard: `memlite demo --keep` leaves this worker running and prints "
                  "a login link; `memlite dashboard` opens your own memory's")
        print(f"observer backend: {OBSERVER_BACKEND}")
        return 0 if block else 1
    finally:
        if keep:
            print(f"\nkept {base}; the worker (pid {info.pid}) is still running: "
                  f"MEMLITE_DATA_DIR={settings.data_dir} memlite worker stop")
        else:
            stop_worker(settings.data_dir)


def run_demo(*, keep: bool = False) -> int:
    """Run the demo; returns the exit status. ``keep`` leaves the worker and directory."""
    base = Path(tempfile.mkdtemp(prefix="memlite-demo-"))
    try:
        return _main(base, keep)
    finally:
        if not keep:
            shutil.rmtree(base, ignore_errors=True)
