"""The worker's Python: the plugin's virtual environment, built in the background.

STANDARD LIBRARY ONLY (the hook imports it). The hook runs on a bare interpreter with
``-I -S``; the worker needs trio, quart, apsw... So the worker runs on:

1. ``$MEMLITE_PYTHON`` when set (tests, development);
2. inside Claude Code (``$CLAUDE_PLUGIN_DATA`` set): ``${CLAUDE_PLUGIN_DATA}/venv/bin/python``
   once ``venv/.memlite-ready`` exists. Until then the first hook that finds it missing
   takes ``venv.lock`` (``O_EXCL``, the builder's pid inside) and starts, detached in its
   own session, the build (``memlite.hooks.venv_build.build``). Events are spooled
   meanwhile (a SessionStart prints them out of the spool: ``snapshot.py``); once the venv
   is ready the builder starts the worker, which drains them
   (:func:`start_worker_when_ready`);
3. otherwise the hook's own interpreter if it is a virtual environment's, else none.

The build (issue 16): lean, pinned, and never silently stuck.

* ``python -m venv --clear`` on Python 3.11 or newer (the hook's own if it is new enough,
  else the newest ``python3.1x`` found: macOS's ``/usr/bin/python3`` is 3.9), then
  ``pip install -c constraints.txt --no-binary claude-agent-sdk <plugin>`` (the host's pip
  with ``--python`` when it has pip 22.3+, so the venv holds no pip): runtime
  dependencies only, at the versions CI tested, and the SDK from its sdist, without the
  385 MB Claude Code binary its wheel bundles (the observer runs the user's own ``claude``:
  ``memlite/observer/clipath.py``). ``--no-compile``: bytecode is written when a module is
  first imported instead of for every file of every package up front.
* ``venv-status.json`` says what is happening: ``building`` (pid, start), ``ready``, or
  ``failed`` with the reason (the last lines of pip's output), the attempt number and when
  the next attempt may start. Backoff: 1, 2, 4... minutes, at most 1 hour; a build whose
  process died (a lock naming a dead pid, or older than ``LOCK_STALE_SECONDS``) counts as
  a failed attempt. The full output is in ``venv-install.log``.
* An update of the plugin that changes pyproject.toml or constraints.txt (the ready
  file records their digest) is noticed by the next hook: the worker keeps running on
  the venv in use while ``venv.next`` is built beside it, then the two are swapped; the
  worker of the new version replaces the old one at the next start (``spawn.py``).
* What the user sees: :func:`notice` gives the one line a SessionStart shows
  (``systemMessage``), and ``memlite doctor`` prints :func:`describe`. Both also work
  before any venv exists: ``python3 -m memlite.hooks.bootstrap status``.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
import warnings
from pathlib import Path

__all__ = ["LOCK_STALE_SECONDS", "READY_FILE", "STATUS_FILE", "describe", "ensure_venv",
           "fingerprint", "notice", "read_status", "record_failure", "source_dir",
           "start_worker_when_ready", "worker_python", "write_status"]

VENV_DIR = "venv"
READY_FILE = ".memlite-ready"
LOCK_FILE = "venv.lock"
INSTALL_LOG = "venv-install.log"
STATUS_FILE = "venv-status.json"
CONSTRAINTS = "constraints.txt"
LOCK_STALE_SECONDS = 15 * 60
BACKOFF_SECONDS = 60.0
BACKOFF_MAX_SECONDS = 3600.0
MIN_PYTHON = (3, 11)
PYTHON_ENV = "MEMLITE_BOOTSTRAP_PYTHON"
BACKOFF_ENV = "MEMLITE_BOOTSTRAP_BACKOFF"  # seconds, tests only
PIP_ENV = "MEMLITE_BOOTSTRAP_PIP_ARGS"  # extra pip arguments, tests only (e.g. --no-index)
TYPICAL_SECONDS = 45


def source_dir() -> str:
    """The directory to ``pip install``: the one holding memlite's package and pyproject."""
    package = os.path.dirname(os.path.abspath(__file__))  # .../memlite/hooks
    for candidate in (os.path.dirname(os.path.dirname(package)),
                      os.path.dirname(os.path.dirname(os.path.realpath(package)))):
        if os.path.exists(os.path.join(candidate, "pyproject.toml")):
            return candidate
    return os.path.dirname(os.path.dirname(package))


def _in_venv() -> bool:
    # Under -S, sys.prefix is the base prefix even in a venv: look for pyvenv.cfg.
    home = os.path.dirname(os.path.dirname(sys.executable))
    return os.path.exists(os.path.join(home, "pyvenv.cfg"))


def worker_python() -> str | None:
    """The interpreter for the worker, or None while the plugin's venv is being built."""
    explicit = os.environ.get("MEMLITE_PYTHON", "").strip()
    if explicit:
        return explicit
    data = os.environ.get("CLAUDE_PLUGIN_DATA", "").strip()
    if data:
        ready = os.path.join(data, VENV_DIR, READY_FILE)
        if os.path.exists(ready):
            if _stale(ready):  # the plugin was updated: rebuild beside it, keep using it
                ensure_venv(data)
            return os.path.join(data, VENV_DIR, "bin", "python")
        ensure_venv(data)
        return None
    return sys.executable if _in_venv() else None


# --- what the venv was built from ---------------------------------------------------------


def fingerprint(source: str | None = None) -> str:
    """A digest of what a build installs: pyproject.toml and constraints.txt of ``source``."""
    digest = hashlib.sha256()
    source = source or source_dir()
    for name in ("pyproject.toml", CONSTRAINTS):
        try:
            with open(os.path.join(source, name), "rb") as f:
                digest.update(f.read())
        except OSError:
            digest.update(b"-")
    return digest.hexdigest()[:16]


def _stale(ready: str) -> bool:
    """True if the ready venv was built from other pins than this plugin's (an update).

    A ready file without a fingerprint (an older build, or a hand-made venv) is kept.
    """
    try:
        with open(ready, encoding="ascii", errors="replace") as f:
            lines = f.read().split()
    except OSError:
        return False
    built = next((w[len("fingerprint="):] for w in lines if w.startswith("fingerprint=")), None)
    return built is not None and built != fingerprint()


# --- status ---------------------------------------------------------------------------------


def read_status(data: str) -> dict[str, object]:
    """``venv-status.json`` (empty if none or unreadable)."""
    try:
        with open(os.path.join(data, STATUS_FILE), encoding="utf-8") as f:
            status = json.load(f)
    except (OSError, ValueError):
        return {}
    return status if isinstance(status, dict) else {}


def write_status(data: str, **status: object) -> None:
    """Replace ``venv-status.json`` with ``status`` (atomically; an error is ignored: the
    status only informs)."""
    path = os.path.join(data, STATUS_FILE)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(status, f)
        os.replace(tmp, path)
    except OSError:
        pass


def _attempt(status: dict[str, object], default: int) -> int:
    """``int(status["attempt"] or default)``: the status file is ours (an int there), but it
    is read back from disk, so a hand-edited value still goes through ``int()``."""
    value = status.get("attempt") or default
    if not isinstance(value, (int, float, str)):
        raise TypeError(f"attempt: expected a number, got {type(value).__name__}")
    return int(value)


def _backoff(attempt: int) -> float:
    base = float(os.environ.get(BACKOFF_ENV, "") or BACKOFF_SECONDS)
    return min(base * float(2 ** max(0, attempt - 1)), BACKOFF_MAX_SECONDS)


def record_failure(data: str, attempt: int, reason: str) -> None:
    """Attempt ``attempt`` failed for ``reason``: the next may start after its backoff."""
    now = time.time()
    write_status(data, state="failed", attempt=attempt, error=reason, time=now,
                 retry_at=now + _backoff(attempt))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


# --- starting a build -----------------------------------------------------------------------


def _lock_holder(path: str) -> int | None:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            text = f.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _take_lock(data: str) -> bool:
    """Create ``venv.lock``; a lock whose builder died is cleared as a failed attempt."""
    path = os.path.join(data, LOCK_FILE)
    for _ in range(2):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            try:
                age = time.time() - os.stat(path).st_mtime
            except FileNotFoundError:
                continue
            holder = _lock_holder(path)
            dead = holder is not None and not _alive(holder)
            if not dead and age < LOCK_STALE_SECONDS and (holder is not None or age < 5):
                return False
            status = read_status(data)
            if status.get("state") == "building":
                attempt = _attempt(status, 1)
                record_failure(data, attempt, "the build stopped before it finished (its "
                               f"process {holder} is gone)" if dead else
                               f"the build took more than {LOCK_STALE_SECONDS // 60} minutes")
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
            continue
        os.close(fd)
        return True
    return False


def ensure_venv(data: str) -> int | None:
    """Start building the venv in the background unless it is ready, being built, or
    waiting out the backoff after a failed attempt.

    Returns the builder's pid when this call started it.
    """
    os.makedirs(data, mode=0o700, exist_ok=True)
    ready = os.path.join(data, VENV_DIR, READY_FILE)
    if os.path.exists(ready) and not _stale(ready):
        return None
    lock = os.path.join(data, LOCK_FILE)
    if not _take_lock(data):
        return None
    status = read_status(data)
    retry_at = status.get("retry_at")
    if status.get("state") == "failed" and isinstance(retry_at, (int, float)) \
            and time.time() < retry_at:
        os.unlink(lock)
        return None
    attempt = _attempt(status, 0) + 1 if status.get("state") == "failed" else 1
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "from memlite.hooks.venv_build import build; sys.exit(build(sys.argv[2], "
            "int(sys.argv[3])))")
    root = _import_root()
    # Before the start: a build that fails at once writes "failed" after this, not before.
    write_status(data, state="building", attempt=attempt, time=time.time())
    with open(os.path.join(data, INSTALL_LOG), "ab") as out:
        child = subprocess.Popen([sys.executable, "-I", "-S", "-c", code, root, data,
                                  str(attempt)],
                                 stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                 start_new_session=True, close_fds=True, cwd=data)
    with open(lock, "w") as f:
        f.write(f"{child.pid}\n")
    # Detached, and meant to outlive us: hand it to subprocess's own list of children to
    # reap, without a ResourceWarning (a long-lived caller, e.g. a test, reaps it there).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        child.__del__()
    return child.pid


def _import_root() -> str:
    """The sys.path entry this memlite was imported from."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def start_worker_when_ready(python: str) -> None:
    """First run: the venv is ready, so start the worker now (it drains the spool: the
    events of the sessions that ran while the venv was being built), rather than wait for
    some later hook to find it down. Never raises: a failure leaves that to the next hook.
    """
    try:
        from memlite.hooks import client
        from memlite.spawn import start_worker, worker_command

        directory = client.data_dir()
        result = start_worker(Path(directory), argv=worker_command(Path(directory), python=python),
                              wait=False)
        print(f"worker {'already running' if result.info else 'starting'} for {directory}",
              flush=True)
    except Exception as exc:  # noqa: BLE001 - the build itself succeeded
        print(f"could not start the worker: {type(exc).__name__}: {exc}", flush=True)


# --- what the user sees ---------------------------------------------------------------------


def describe(data: str) -> tuple[str, str]:
    """``(level, text)`` for ``memlite doctor``: level is ok, warn or FAIL."""
    status = read_status(data)
    if os.path.exists(os.path.join(data, VENV_DIR, READY_FILE)):
        where = os.path.join(data, VENV_DIR)
        if status.get("state") == "failed":  # an update's build; the venv in use still works
            return "warn", (f"plugin Python environment {where} works, but rebuilding it "
                            f"for this plugin version failed: {status.get('error')}")
        if status.get("state") == "building":
            return "ok", f"plugin Python environment {where} ready; an update is being built"
        took = status.get("seconds")
        extra = f", built in {took:.0f} s" if isinstance(took, (int, float)) else ""
        return "ok", f"plugin Python environment ready ({where}{extra})"
    log = os.path.join(data, INSTALL_LOG)
    if status.get("state") == "building":
        since = time.time() - float(status.get("time") or time.time())  # type: ignore[arg-type]
        return "warn", (f"plugin Python environment is being built ({since:.0f} s so far, "
                        f"usually under {TYPICAL_SECONDS} s; log: {log})")
    if status.get("state") == "failed":
        wait = float(status.get("retry_at") or 0) - time.time()  # type: ignore[arg-type]
        when = f"retry in {wait / 60:.0f} min" if wait > 0 else "retry at the next session"
        return "FAIL", (f"plugin Python environment: attempt {status.get('attempt')} failed: "
                        f"{status.get('error')} ({when}; log: {log})")
    return "warn", "plugin Python environment not built yet (the next session starts it)"


def notice(data: str | None = None) -> str | None:
    """The SessionStart hook's reply while memory is unavailable because the venv is not
    ready: ``{"systemMessage": <one line>}`` as JSON, or None when there is nothing to say.

    For ``memlite/hooks/main.py``: print it (it is the whole stdout) when the worker
    cannot start because :func:`worker_python` is None.
    """
    data = data if data is not None else os.environ.get("CLAUDE_PLUGIN_DATA", "").strip()
    if not data or os.path.exists(os.path.join(data, VENV_DIR, READY_FILE)):
        return None
    level, text = describe(data)
    if level == "FAIL":
        line = f"memlite: memory is off: {text}"
    else:
        line = (f"memlite: setting up on first use (about {TYPICAL_SECONDS} s); this "
                "session is being recorded, memory is available from the next one")
    return json.dumps({"systemMessage": line[:600]})


def main(argv: list[str]) -> int:
    """``python3 -m memlite.hooks.bootstrap status [<plugin data dir>]``."""
    if len(argv) < 2 or argv[1] != "status":
        print("usage: python3 -m memlite.hooks.bootstrap status [<plugin data dir>]",
              file=sys.stderr)
        return 2
    data = argv[2] if len(argv) > 2 else os.environ.get("CLAUDE_PLUGIN_DATA", "").strip()
    if not data:
        print("no plugin data directory (give one, or set CLAUDE_PLUGIN_DATA)", file=sys.stderr)
        return 2
    level, text = describe(data)
    print(f"{level:>4}  {text}")
    return 1 if level == "FAIL" else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
