"""``memlite doctor``: an end-to-end canary that says what is wrong, in plain lines.

It checks, in order, and prints one line per check (``ok`` / ``warn`` / ``FAIL``):

1. the settings and the data directory load;
2. which observer backend the worker will use (``OBSERVER`` and whether a Claude Code
   CLI can be run: without one the rules backend observes, which is not an error);
3. the worker starts (or is running) and answers ``/api/health``, including its observer
   health line (N failures in a row, or a quota pause);
4. the hook spool: events still waiting to be drained, and quarantined lines (events the
   worker could not ingest, kept with their reason: ``warn`` with the newest reason and
   where they are kept); and a data directory open to other users (``warn``);
5. the canary: one ``PostToolUse`` event of a throwaway session goes in through
   ``POST /api/events`` and an observation of it must be stored within ``deadline``
   seconds (read straight from the database); the canary session is deleted afterwards.
   When the claude backend was chosen but the canary's observation came from the rules
   (the AI observer failed, most often a Claude Code CLI that is not logged in, and the
   worker fell back), the doctor says so with the failure it recorded: ``warn`` with
   OBSERVER=auto, ``FAIL`` with OBSERVER=claude. Step 2 only says which backend was
   chosen; whether the AI answers is known from the canary alone.

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

__all__ = ["run_doctor", "spool_lines"]


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


def _observer_error(data_dir: Any, session_id: str) -> str | None:
    from memlite.storage import connect

    conn = connect(data_dir, writer=False)
    try:
        rows = conn.execute("SELECT observer_error FROM sessions WHERE id = ?",
                            (session_id,)).fetchall()
    finally:
        conn.close()
    return str(rows[0][0]) if rows and rows[0][0] else None


def _ai_fell_back(port: int, token: str, data_dir: Any, session_id: str, mode: str,
                  say: Callable[[str, str], None]) -> None:
    """The claude backend was chosen but rules observed the canary: say why, plainly."""
    try:
        reason = _api(port, token, "GET", "/api/health").get("observer") \
            or _observer_error(data_dir, session_id)
    except Exception as exc:  # noqa: BLE001 - the doctor reports, it does not crash
        reason = f"{type(exc).__name__}: {exc}"
    say("FAIL" if mode == "claude" else "warn",
        "observer backend: claude was chosen but did NOT observe the canary; the rules "
        f"backend did, without AI ({reason or 'no failure recorded'}). Is the Claude Code "
        "CLI logged in? Run `claude` once and log in, then run `memlite doctor` again; "
        "or set OBSERVER=rules to observe without AI on purpose")


def _canary(port: int, token: str, data_dir: Any, cwd: str, deadline: float,
            say: Callable[[str, str], None], *, backend: str = "rules",
            mode: str = "auto") -> bool:
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
        if backend == "claude" and found[0] == "rules":
            _ai_fell_back(port, token, data_dir, session_id, mode, say)
            return mode != "claude"
        return True
    except Exception as exc:  # noqa: BLE001 - the doctor reports, it does not crash
        say("FAIL", f"canary: {type(exc).__name__}: {exc}")
        return False
    finally:
        try:
            _api(port, token, "DELETE", f"/api/sessions/{session_id}")
        except Exception:  # noqa: BLE001 - it may never have been stored
            pass


def spool_lines(data_dir: Any) -> list[tuple[str, str]]:
    """``(level, text)`` lines about the data directory's privacy and the hook spool."""
    import stat

    from memlite.actors.spooler import spool_waiting
    from memlite.hooks import spool

    lines = []
    try:
        mode = stat.S_IMODE(os.stat(data_dir).st_mode)
    except OSError:
        mode = 0o700
    if mode & 0o077:
        lines.append(("warn", f"data directory {data_dir} is open to other users "
                              f"({mode:o}); `chmod 700 {data_dir}` makes it private"))
    found = spool.quarantined(data_dir, latest=1)
    waiting = spool_waiting(data_dir)
    if found.count:
        newest = found.latest[0]
        lines.append(("warn", f"spool: {found.count} event(s) quarantined, kept in "
                              f"{', '.join(found.files)}; newest ({newest.get('event')}): "
                              f"{newest.get('reason')}"))
    if waiting:
        lines.append(("warn", "spool: events wait to be drained (the worker drains them "
                              "every few seconds; see worker.log if they stay)"))
    if not found.count and not waiting:
        lines.append(("ok", "spool: empty, nothing quarantined"))
    return lines


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
    checked = "; the canary below shows whether it answers" if backend == "claude" else ""
    say(level, f"observer backend: {backend} (OBSERVER={settings['OBSERVER']}, Claude Code "
               f"CLI {'found' if cli else 'not found: rules observe without AI'}{checked})")
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
    for child, error in sorted((health.get("degraded") or {}).items()):
        say("warn", f"worker part {child} stopped after failing repeatedly (the worker "
                    f"runs without it; restart the worker to retry): {error}")
    for level, text in spool_lines(settings.data_dir):
        say(level, text)
    _canary(info.port, token, settings.data_dir, os.getcwd(), deadline, say,
            backend=backend, mode=settings["OBSERVER"])
    return 1 if failed else 0
