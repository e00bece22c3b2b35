"""The hook: one entry point for every Claude Code event (STANDARD LIBRARY ONLY).

``main(argv)`` reads the event from stdin, strips privacy tags and redacts secrets
(``memlite.privacy``), cuts oversized fields (``limits.py``), and sends ONE HTTP/1.1
request over a raw socket (``client.py``) to the worker, with the bearer token and a
deadline. It always exits 0; nothing but a SessionStart context reply is printed.

=====================  ==========================  =========================================
event                  request                     stdout
=====================  ==========================  =========================================
SessionStart           POST /api/sessions, then    ``{"hookSpecificOutput": {"hookEventName":
                       GET /api/context?project=   "SessionStart", "additionalContext": ...}}``
                                                   when the context is not empty
UserPromptSubmit       POST /api/sessions          nothing
PostToolUse(Failure)   POST /api/events            nothing (SKIP_TOOLS and memlite's own MCP
PreCompact, SubagentStop                           tools are dropped before anything is sent)
Stop                   POST /api/summarize         nothing
SessionEnd             POST /api/sessions/complete nothing (0.8 s in all: Claude Code gives
                                                   every SessionEnd hook 1.5 s together)
=====================  ==========================  =========================================

A 404 from summarize/complete (the session is unknown: its start was lost) is sent again
to ``/api/events``, which creates it. A 401 means the worker on the port is not this data
directory's (another install on the same port): the event is spooled, as with a worker
down. Other 4xx: logged, dropped (the event is malformed).

Worker down (refused, no token yet, reset, unreadable reply) or failing (5xx), or too slow
(deadline): the cleaned event is appended to the spool (fsync'd); if the worker was not
there at all it is started with ``spawn.start_worker(wait=False)`` using the worker's
Python (``$MEMLITE_PYTHON``, else the plugin venv, see ``bootstrap.py``), and if a ready
worker is found right after, the event is sent once more (ingestion is idempotent). The
worker drains the spool when it starts.

SessionStart never depends on a running worker (docs/delivery.md): when the worker does
not answer (down, idled out, starting, hung past the deadline, 5xx), the hook prints the
project's context snapshot, which the worker keeps fresh, plus the project's activity
still in the spool (``snapshot.fallback_context``), at once. It never waits for a worker
start (``$MEMLITE_HOOK_SESSION_START_WAIT``, default 0, is an opt-in wait used only when
there is no snapshot and nothing spooled).

Settings are read with the worker's own parser (``memlite.settings_spec``): when one is
invalid (``WORKER_PORT=abc``, a ``settings.json`` that is not JSON...) the event is
spooled and the reason logged; nothing is sent, since a guessed port may be another
install's worker. Every event the hook can read is kept whatever its content: see
``spool.storable`` and ``_prepare``.

Every POST carries ``X-Memlite-Event-At`` (epoch ms, when the hook read the event), and
the spool keeps the same time, so an event has one time whichever copy is stored first: a
hung worker that resumes answers the requests its hooks gave up on (and spooled), and
those used to be dated when it resumed (user trial, docs/user-trials.md).

Errors never reach stdout: one line goes to ``<data dir>/hooks.log`` (0600, rotated at
``LOG_MAX`` bytes to ``hooks.log.1``).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from urllib.parse import quote

from memlite.hooks import client
from memlite.hooks.limits import fit, precut
from memlite.hooks.storable import storable
from memlite.privacy import clean
from memlite.settings_spec import make_private_dir

__all__ = ["DEADLINE", "LOG_MAX", "MAX_STDIN", "ROUTES", "SESSION_END_DEADLINE", "main"]

MAX_STDIN = 64 * 1024 * 1024
DEADLINE = 1.0
SESSION_END_DEADLINE = 0.8
LOG_MAX = 1024 * 1024
LOG_FILE = "hooks.log"
SESSION_START_WAIT_ENV = "MEMLITE_HOOK_SESSION_START_WAIT"
OWN_TOOL_PREFIXES = ("mcp__plugin_memlite_", "mcp__memlite__")
TOOL_EVENTS = frozenset({"PostToolUse", "PostToolUseFailure"})
ROUTES = {
    "SessionStart": "/api/sessions",
    "UserPromptSubmit": "/api/sessions",
    "PostToolUse": "/api/events",
    "PostToolUseFailure": "/api/events",
    "PreCompact": "/api/events",
    "SubagentStop": "/api/events",
    "Stop": "/api/summarize",
    "SessionEnd": "/api/sessions/complete",
}


class _Down(Exception):
    """The worker cannot take the event now; ``absent`` when nothing is listening."""

    def __init__(self, reason: str, *, absent: bool) -> None:
        super().__init__(reason)
        self.absent = absent


def log_line(directory: str, event: str, message: str) -> None:
    """Append one line to hooks.log (never raises)."""
    try:
        make_private_dir(directory)
        path = os.path.join(directory, LOG_FILE)
        try:
            if os.stat(path).st_size > LOG_MAX:
                os.replace(path, path + ".1")
        except FileNotFoundError:
            pass
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        text = " ".join(message.split())[:500]
        line = f"{stamp} pid={os.getpid()} {event or '-'}: {text}\n"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except Exception:  # noqa: BLE001 - logging must never fail the hook
        pass


def _read_event(argv: list[str]) -> tuple[str, dict[str, object] | None, str | None]:
    """(event name, payload, problem): a problem means "log it and stop"."""
    hint = argv[0] if argv else ""
    raw = sys.stdin.buffer.read(MAX_STDIN + 1)
    if len(raw) > MAX_STDIN:
        return hint, None, f"stdin over {MAX_STDIN} bytes: dropped"
    if not raw.strip():
        return hint, None, "empty stdin"
    note = None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = raw.decode("utf-8", "replace")
        note = f"stdin is not valid UTF-8 ({exc.reason} at byte {exc.start}): bytes replaced"
    try:
        payload = json.loads(text)
    except (ValueError, RecursionError) as exc:
        return hint, None, f"stdin is not JSON: {type(exc).__name__}: {str(exc)[:120]}"
    if not isinstance(payload, dict):
        return hint, None, f"stdin is JSON {type(payload).__name__}, not an object"
    name = payload.get("hook_event_name")
    event = name if isinstance(name, str) and name else hint
    if event not in ROUTES:
        return str(event)[:100], None, f"unknown hook event {str(event)[:100]!r}: ignored"
    session_id = payload.get("session_id")
    if not isinstance(session_id, str) or not session_id.strip():
        return event, None, "no session_id (a non-empty string) in the payload: dropped"
    payload.setdefault("hook_event_name", event)
    return event, payload, note


def _skipped(event: str, payload: dict[str, object], skip: frozenset[str]) -> bool:
    if event not in TOOL_EVENTS:
        return False
    tool = payload.get("tool_name")
    return isinstance(tool, str) and (tool.startswith(OWN_TOOL_PREFIXES) or tool in skip)


UNFILTERABLE = "[memlite: nested too deeply to filter; left out]"


def _prepare(payload: dict[str, object], directory: str,
             event: str) -> tuple[dict[str, object], bytes]:
    """Filter, make storable and cut the event; returns it and its JSON body.

    A payload the filters cannot walk (nested deeper than Python's recursion limit) is
    still kept: field by field, each top-level field that is too deep is replaced by
    ``UNFILTERABLE`` (unfiltered content is never stored), and a line goes to hooks.log.
    """
    try:
        return fit(storable(clean(precut(payload))))
    except RecursionError:
        pass
    kept: dict[str, object] = {}
    for key, value in payload.items():
        try:
            kept.update(storable(clean(precut({key: value}))))
        except RecursionError:
            kept[key] = UNFILTERABLE
    left_out = sorted(key for key, value in kept.items() if value == UNFILTERABLE)
    log_line(directory, event, f"payload nested too deeply to filter: {left_out} left out")
    return fit(kept)


EVENT_AT_HEADER = "X-Memlite-Event-At"
_event_at_ms = 0  # when this hook read its event (epoch ms): set by run()


def _send(port: int, bearer: str | None, method: str, path: str, body: bytes | None,
          deadline: float) -> tuple[int, bytes]:
    if bearer is None:
        raise _Down("no token yet (the worker never ran)", absent=True)
    try:
        status, reply = client.request(
            port, method, path, bearer=bearer, body=body, deadline=deadline,
            headers={EVENT_AT_HEADER: str(_event_at_ms)} if body is not None else None)
    except (ConnectionRefusedError, FileNotFoundError) as exc:
        raise _Down(f"worker not running ({exc})", absent=True) from None
    except TimeoutError:
        raise _Down("worker did not answer in time", absent=False) from None
    except (OSError, ValueError) as exc:
        raise _Down(f"worker connection failed ({type(exc).__name__}: {exc})",
                    absent=True) from None
    if status >= 500:
        raise _Down(f"worker answered HTTP {status}", absent=False)
    if status == 401:
        # Our token is refused: the worker on this port belongs to another data directory
        # (two installs on one port, or a data directory moved while its old worker
        # runs). Keep the event for our own worker rather than drop it.
        raise _Down(f"the worker on port {port} refused this data directory's token "
                    "(HTTP 401: another install's worker? set WORKER_PORT)", absent=False)
    return status, reply


def _deliver(event: str, body: bytes, port: int, bearer: str | None, deadline: float,
             directory: str) -> None:
    route = ROUTES[event]
    if event == "UserPromptSubmit" and b'"prompt":' not in body:
        route = "/api/events"  # /api/sessions would take it for a SessionStart
    status, reply = _send(port, bearer, "POST", route, body, deadline)
    if status == 404 and route != "/api/events":
        status, reply = _send(port, bearer, "POST", "/api/events", body, deadline)
    if status >= 300:
        log_line(directory, event, f"worker refused the event: HTTP {status}: "
                 f"{reply[:300].decode('utf-8', 'replace')}")


def _context(port: int, bearer: str | None, cwd: object, deadline: float) -> str | None:
    """The SessionStart reply to print, or None (no context, or no time left)."""
    if not isinstance(cwd, str) or not cwd:
        return None
    status, reply = _send(port, bearer, "GET", "/api/context?project=" + quote(cwd, safe=""),
                          None, deadline)
    if status != 200:
        return None
    context = json.loads(reply).get("context")
    if not isinstance(context, str) or not context.strip():
        return None
    return json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart",
                                              "additionalContext": context}})


def _await_context(directory: str, port: int, cwd: object, until: float) -> str | None:
    """SessionStart with the worker just spawned: poll for its answer until ``until``.

    The worker drains the spool (this SessionStart included) before it serves, so the
    first answer already knows the session.
    """
    while time.monotonic() < until:
        try:
            return _context(port, client.token(directory), cwd, until)
        except _Down:
            time.sleep(0.02)
        except (ValueError, AttributeError):
            return None
    return None


def _session_start_wait() -> float:
    """How long a SessionStart that found the worker down and had nothing to print from
    the snapshot and spool waits for the worker it started (seconds, <= 1.5).

    Default 0: the snapshot (``snapshot.py``) is the memory of a down worker, so no
    SessionStart waits for a start. ``$MEMLITE_HOOK_SESSION_START_WAIT`` still lets a
    person trade up to 1.5 s of every cold start for a worker's answer when there is no
    snapshot yet (a database from a memlite older than snapshots).
    """
    try:
        return min(max(float(os.environ.get(SESSION_START_WAIT_ENV, "") or 0.0), 0.0), 1.5)
    except ValueError:
        return 0.0


def _fallback(directory: str, payload: dict[str, object], budget: int | None,
              why: str) -> str | None:
    """SessionStart without the worker's answer: the project's snapshot plus its spooled
    activity (``snapshot.fallback_context``), as the SessionStart reply; None if empty."""
    from memlite.hooks import snapshot

    try:
        context = snapshot.fallback_context(directory, payload.get("cwd"), budget)
    except Exception as exc:  # noqa: BLE001 - never fail the hook; say why in the log
        log_line(directory, "SessionStart", f"{why}; snapshot unreadable: "
                 f"{type(exc).__name__}: {exc}")
        return None
    log_line(directory, "SessionStart", f"{why}; served the snapshot and spool "
             f"({len(context or '')} chars)")
    if not context or not context.strip():
        return None
    return json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart",
                                              "additionalContext": context}})


def _with_notice(out: str | None, notice: str | None) -> str | None:
    """The SessionStart reply plus the bootstrap's one line (``{"systemMessage": ...}``)
    while the plugin venv is being built: the memory from disk and why there is no more."""
    if notice is None:
        return out
    if out is None:
        return notice
    reply = json.loads(out)
    reply.update(json.loads(notice))
    return json.dumps(reply)


def _worker_down(event: str, payload: dict[str, object], body: bytes, down: _Down,
                 directory: str, port: int, deadline: float,
                 started: float, budget: int | None = None) -> str | None:
    """Spool the event, start the worker if nothing was listening, resend if it is ready.

    A SessionStart returns what to print: the snapshot and spooled activity of its
    project (``_fallback``), at once, without waiting for the worker it starts.
    """
    from memlite.hooks import bootstrap, spool_write

    start = event == "SessionStart"
    spool_write.append(directory, event, payload, now_ms=_event_at_ms or None)
    if not down.absent:
        log_line(directory, event, f"{down}: spooled")
        return _fallback(directory, payload, budget, str(down)) if start else None
    python = bootstrap.worker_python()
    if python is None:
        log_line(directory, event, f"{down}: spooled; the plugin's Python environment is "
                 "not ready yet")
        if not start:
            return None
        out = _fallback(directory, payload, budget, "no worker yet")
        return _with_notice(out, bootstrap.notice())
    from memlite.spawn import start_worker, worker_command

    result = start_worker(Path(directory), argv=worker_command(Path(directory), python=python),
                          wait=False)
    if result.info is not None:
        # A ready worker was found right after: send the event once more (idempotent).
        try:
            _deliver(event, body, result.info.port, client.token(directory),
                     max(deadline, time.monotonic() + 0.3), directory)
            if start:
                out = _context(result.info.port, client.token(directory),
                               payload.get("cwd"), max(deadline, time.monotonic() + 0.3))
                if out is not None:
                    return out
        except (_Down, ValueError, AttributeError):
            pass  # it is in the spool
    if not start:
        return None
    out = _fallback(directory, payload, budget, f"{down}: spooled, worker starting")
    wait = _session_start_wait()
    if wait == 0 and _before_snapshots(directory):
        wait = UPGRADE_WAIT  # once: the worker it just started writes them at its start
    if wait > 0:
        # The worker's own block when it answers in time: it also holds what is in a
        # database no snapshot covers yet; else what the snapshot and spool gave.
        out = _await_context(directory, port, payload.get("cwd"), started + wait) or out
    return out


UPGRADE_WAIT = 1.0
"""Seconds a worker-down SessionStart waits for the worker it started when the database
predates snapshots (a memlite older than them wrote it, no worker has run since): the
one start after an upgrade. The worker answers in ~0.4-1 s here; every later cold start
is served from the snapshots at once."""


def _before_snapshots(directory: str) -> bool:
    """A database exists but no worker of this version ever ran on it: no ``snapshots/``
    (every worker creates it at start, even with nothing to write)."""
    return (os.path.exists(os.path.join(directory, "memlite.db"))
            and not os.path.isdir(os.path.join(directory, "snapshots")))


UPGRADE_MARKER = "worker.upgrade"
UPGRADE_RETRY_SECONDS = 60.0


def _replace_if_older(directory: str, event: str) -> None:
    """After an upgrade of the plugin, the worker that answered may be an older memlite:
    start its replacement in the background, once, and do not wait for it.

    The check is one small file read (``worker.pid``) per hook. The replacement is
    ``memlite worker start`` run detached with the worker's interpreter: it stops the old
    worker and starts this version's under the spawn lock, exactly once however many hooks
    race (a newer worker is kept: see ``spawn._acceptable``). ``worker.upgrade`` (created
    with O_EXCL) keeps concurrent hooks from starting more than one replacer a minute.
    """
    try:
        with open(os.path.join(directory, "worker.pid"), encoding="utf-8") as f:
            running = json.load(f).get("version")
    except (OSError, ValueError, AttributeError):
        return
    from memlite import __version__

    expected = os.environ.get("MEMLITE_WORKER_VERSION_OVERRIDE", "").strip() or __version__
    if not isinstance(running, str) or running == expected:
        return
    from memlite.spawn import _acceptable, worker_env

    if _acceptable(running, expected):
        return
    marker = os.path.join(directory, UPGRADE_MARKER)
    try:
        if time.time() - os.stat(marker).st_mtime < UPGRADE_RETRY_SECONDS:
            return
        os.unlink(marker)
    except OSError:
        pass
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except OSError:
        return  # another hook is starting the replacement
    from memlite.hooks import bootstrap

    python = bootstrap.worker_python()
    if python is None:
        return
    import subprocess

    env = worker_env({**os.environ, "MEMLITE_DATA_DIR": directory})
    subprocess.Popen([python, "-m", "memlite", "worker", "start"], env=env, cwd=directory,
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, start_new_session=True)
    log_line(directory, event, f"the worker runs memlite {running}, older than {expected}: "
             "replacing it in the background")


def run(argv: list[str]) -> str | None:
    """Handle one event; return what to print (or None). Raises on internal errors."""
    global _event_at_ms  # noqa: PLW0603 - one event per process
    started = time.monotonic()
    directory = client.data_dir()
    event, payload, problem = _read_event(argv)
    _event_at_ms = int(time.time() * 1000)
    if payload is None:
        log_line(directory, event, problem or "bad input")
        return None
    if problem:
        log_line(directory, event, problem)
    settings = client.hook_settings(directory)
    if _skipped(event, payload, settings.skip_tools):
        return None
    cleaned, body = _prepare(payload, directory, event)
    deadline = started + (SESSION_END_DEADLINE if event == "SessionEnd" else DEADLINE)
    if settings.port is None:
        # The worker would refuse these settings too; a guessed port may be another
        # install's worker. Keep the event for when the settings are fixed.
        from memlite.hooks import spool_write

        spool_write.append(directory, event, cleaned, now_ms=_event_at_ms)
        log_line(directory, event, f"spooled, not sent: {settings.error}")
        if event == "SessionStart":  # memory still arrives, from what is on disk
            return _fallback(directory, cleaned, None, "invalid settings")
        return None
    port = settings.port
    bearer = client.token(directory)
    try:
        _deliver(event, body, port, bearer, deadline, directory)
    except _Down as down:
        return _worker_down(event, cleaned, body, down, directory, port, deadline, started,
                            settings.context_max_chars)
    _replace_if_older(directory, event)
    if event == "SessionStart":
        try:
            return _context(port, bearer, cleaned.get("cwd"), deadline)
        except (_Down, ValueError, AttributeError) as exc:
            return _fallback(directory, cleaned, settings.context_max_chars,
                             f"no context from the worker: {exc}")
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the hook; always 0. Internal errors go to hooks.log, never to stdout."""
    try:
        out = run(list(sys.argv[1:] if argv is None else argv))
        if out:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
    except BaseException as exc:  # noqa: BLE001 - fail open, whatever happened
        log_line(client.data_dir(), "", f"internal error: {type(exc).__name__}: {exc}")
    return 0
