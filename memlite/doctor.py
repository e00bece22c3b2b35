"""``memlite doctor``: an end-to-end canary that says what is wrong, in plain lines.

It checks, in order, and prints one line per check (``ok`` / ``warn`` / ``FAIL``):

1. the settings and the data directory load;
2. which observer backend the worker will use (``OBSERVER`` and whether a Claude Code
   CLI can be run: without one the rules backend observes, which is not an error);
3. the worker starts (or is running) and answers ``/api/health``, including its observer
   health line (N failures in a row, or a quota pause);
4. the canary: one ``PostToolUse`` event of a throwaway session goes in through
   ``POST /api/events`` and an observation of it must be stored within ``deadline``
   seconds (read straight from the database); the canary session is deleted afterwards.

Exit status 0 when nothing failed, 1 otherwise.
"""

from __future__ import annotations

import json
import os
import time
import urllib.request
import uuid
from collections.abc import Callable
from typing import Any

__all__ = ["run_doctor"]


def _api(port: int, token: str, method: str, path: str,
         body: dict[str, Any] | None = None) -> dict[str, Any]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", method=method, data=data,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.loads(response.read() or b"{}")


def _observed(data_dir: Any, event_id: int) -> tuple[str, str] | None:
    from memlite.storage import connect

    conn = connect(data_dir, writer=False)
    try:
        rows = conn.execute(
            "SELECT o.backend, o.title FROM observation_sources AS s "
            "JOIN observations AS o ON o.id = s.observation_id WHERE s.event_id = ?",
            (event_id,)).fetchall()
    finally:
        conn.close()
    return (str(rows[0][0]), str(rows[0][1])) if rows else None


def _canary(port: int, token: str, data_dir: Any, cwd: str, deadline: float,
            say: Callable[[str, str], None]) -> bool:
    session_id = f"memlite-doctor-{uuid.uuid4().hex[:12]}"
    event = {"session_id": session_id, "hook_event_name": "PostToolUse", "cwd": cwd,
             "tool_name": "Edit", "tool_use_id": f"toolu_doctor_{uuid.uuid4().hex[:8]}",
             "tool_input": {"file_path": os.path.join(cwd, "memlite_doctor_canary.py"),
                            "old_string": "x = 1", "new_string": "x = 2"},
             "tool_response": {"filePath": os.path.join(cwd, "memlite_doctor_canary.py")}}
    started = time.monotonic()
    try:
        stored = _api(port, token, "POST", "/api/events", event)
        event_id = int(stored["event_id"])
        found = None
        while found is None and time.monotonic() - started < deadline:
            time.sleep(0.2)
            found = _observed(data_dir, event_id)
        if found is None:
            say("FAIL", f"canary: event {event_id} stored but not observed within "
                        f"{deadline:g} s (see the worker log in the data directory)")
            return False
        say("ok", f"canary: event in, {found[0]} observation out in "
                  f"{time.monotonic() - started:.2f} s: {found[1]!r}")
        return True
    except Exception as exc:  # noqa: BLE001 - the doctor reports, it does not crash
        say("FAIL", f"canary: {type(exc).__name__}: {exc}")
        return False
    finally:
        try:
            _api(port, token, "DELETE", f"/api/sessions/{session_id}")
        except Exception:  # noqa: BLE001 - it may never have been stored
            pass


def run_doctor(*, deadline: float = 20.0, print_: Callable[[str], None] = print) -> int:
    """Run every check, print one line each; return the exit status."""
    failed = False

    def say(level: str, text: str) -> None:
        nonlocal failed
        failed = failed or level == "FAIL"
        print_(f"{level:>4}  {text}")

    from memlite.config import load_settings
    from memlite.errors import MemliteError
    from memlite.http.credentials import load_or_create_token
    from memlite.observer.backend import choose_backend, cli_available
    from memlite.spawn import start_worker, worker_env

    try:
        settings = load_settings()
    except MemliteError as exc:
        say("FAIL", f"settings: {exc}")
        return 1
    say("ok", f"data directory {settings.data_dir}")
    plugin_data = os.environ.get("CLAUDE_PLUGIN_DATA", "").strip()
    if plugin_data:  # inside Claude Code: the plugin venv's build (issue 16)
        from memlite.hooks.bootstrap import describe

        say(*describe(plugin_data))
    cli = cli_available()
    backend = choose_backend(settings["OBSERVER"], cli)
    level = "ok" if backend == "claude" or settings["OBSERVER"] == "rules" else "warn"
    say(level, f"observer backend: {backend} (OBSERVER={settings['OBSERVER']}, Claude Code "
               f"CLI {'found' if cli else 'not found: rules observe without AI'})")
    try:
        info = start_worker(settings.data_dir, env=worker_env(dict(os.environ)),
                            timeout=30).info
        assert info is not None
        token = load_or_create_token(settings.data_dir)
        health = _api(info.port, token, "GET", "/api/health")
    except Exception as exc:  # noqa: BLE001
        say("FAIL", f"worker: {type(exc).__name__}: {exc}")
        return 1
    say("ok", f"worker pid {info.pid} on port {info.port}, version {health.get('version')}")
    if health.get("observer"):
        say("warn", f"observer health: {health['observer']}")
    _canary(info.port, token, settings.data_dir, os.getcwd(), deadline, say)
    return 1 if failed else 0
