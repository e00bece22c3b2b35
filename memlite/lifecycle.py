"""The worker's lifecycle files, in the standard library only.

Hooks import this module (they may not import trio or attrs: DESIGN §5), and so do
``memlite worker`` and the worker itself, so every program reads and writes these files
the same way. The start/stop protocol built on them is in ``spawn.py``.

Files in the data directory
---------------------------
``worker.pid``
    JSON ``{"pid", "port", "startedAt", "version"}`` (``startedAt`` is ISO 8601 UTC),
    written atomically (temporary file, fsync, rename; mode 0600) by the worker once it
    serves HTTP, removed by the worker when it exits cleanly. A pid file whose pid is
    dead, or alive but not a memlite worker of this data directory, is stale.
``worker.spawn.lock``
    Created with ``O_CREAT | O_EXCL`` (0600) by whoever starts a worker; JSON
    ``{"pid", "time"}`` (``time`` is Unix seconds). The starter hands it to the worker
    it spawned by rewriting ``pid`` to the child's pid; the worker removes it once its pid
    file is written (or when it fails to start), so a starter that exits early (a hook)
    never leaves it behind. A lock whose holder is dead, or that is older than
    ``STALE_LOCK_SECONDS``, is stale and is broken.
``worker.start-error``
    JSON ``{"pid", "code", "error", "message", "time"}``: why a worker exited before it
    was ready, written by that worker so that its starter (and starters waiting on the
    lock) can tell a person, e.g. that the port is taken.

Removing the lock or the pid file is a compare-and-delete done under ``flock`` on the
data directory, so a process never deletes a file another process has just (re)created.

``worker.alive``
    Held with ``flock`` by the running worker for its whole life (its pid inside). The
    kernel releases it when the worker dies, even by ``kill -9``, so "held, and naming
    pid" proves pid is our worker on every platform, with or without ``/proc``
    (``procs.py``). A second worker of the same data directory cannot take it and exits
    ``EXIT_ALREADY_RUNNING``.

A process is "our worker" only if it holds ``worker.alive``, or (a worker without the lock)
its command line reads ``memlite … worker run`` with our ``--data-dir``; nothing else is
ever signalled.

Exit statuses of ``memlite worker run``: ``EXIT_OK`` 0 (clean stop), ``EXIT_CRASHED`` 1,
``EXIT_CONFIG`` 2 (a ``MemliteError`` such as a bad setting), ``EXIT_PORT_IN_USE`` 3,
``EXIT_ALREADY_RUNNING`` 4 (another worker of this data directory is alive).

``MEMLITE_WORKER_VERSION_OVERRIDE`` is for tests only: it replaces ``memlite.__version__``
as the version a worker reports and a starter expects, so version replacement can be
tested with one installed memlite.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import re
import socket
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from memlite import __version__, procs
from memlite.errors import PortInUse, WorkerError

__all__ = [
    "ALIVE_FILE",
    "EXIT_ALREADY_RUNNING",
    "EXIT_CONFIG",
    "EXIT_CRASHED",
    "EXIT_OK",
    "EXIT_PORT_IN_USE",
    "HOST",
    "LOCK_FILE",
    "LOG_FILE",
    "PID_FILE",
    "STALE_LOCK_SECONDS",
    "START_ERROR_FILE",
    "VERSION_OVERRIDE_ENV",
    "WorkerInfo",
    "alive_lock_pid",
    "clear_stale_pidfile",
    "find_worker",
    "hand_lock_to",
    "hold_alive_lock",
    "is_our_worker",
    "lock_holder",
    "pid_alive",
    "probe_ready",
    "read_pidfile",
    "read_start_error",
    "release_lock_held_by",
    "remove_pidfile",
    "try_lock",
    "worker_version",
    "write_pidfile",
    "write_start_error",
]

log = logging.getLogger(__name__)

PID_FILE = "worker.pid"
ALIVE_FILE = "worker.alive"
LOCK_FILE = "worker.spawn.lock"
START_ERROR_FILE = "worker.start-error"
LOG_FILE = "worker.log"
VERSION_OVERRIDE_ENV = "MEMLITE_WORKER_VERSION_OVERRIDE"
HOST = "127.0.0.1"

EXIT_OK = 0
EXIT_CRASHED = 1
EXIT_CONFIG = 2
EXIT_PORT_IN_USE = 3
EXIT_ALREADY_RUNNING = 4

STALE_LOCK_SECONDS = 30.0
UNWRITTEN_LOCK_SECONDS = 5.0  # a lock file still empty this long lost its writer


def worker_version(env: Mapping[str, str] | None = None) -> str:
    """The version a worker reports and a starter expects (the override is test-only)."""
    env = os.environ if env is None else env
    return env.get(VERSION_OVERRIDE_ENV, "").strip() or __version__


@dataclass(frozen=True)  # no kw_only: the hook imports this on Python 3.9 (macOS)
class WorkerInfo:
    """The contents of ``worker.pid``."""

    pid: int
    port: int
    started_at: str
    version: str

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}/"

    def uptime(self, now: datetime | None = None) -> float:
        """Seconds since ``started_at`` (0 if it cannot be parsed)."""
        try:
            started = datetime.fromisoformat(self.started_at)
        except ValueError:
            return 0.0
        now = now or datetime.now(timezone.utc)  # noqa: UP017 - imported by the hook on 3.9
        return max(0.0, (now - started).total_seconds())

    def to_json(self) -> dict[str, object]:
        return {"pid": self.pid, "port": self.port, "startedAt": self.started_at,
                "version": self.version}


# --- small file helpers -------------------------------------------------------------------


@contextlib.contextmanager
def _dir_locked(data_dir: Path) -> Iterator[None]:
    """Hold ``flock`` on the data directory: serializes compare-and-delete of our files."""
    fd = os.open(data_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the flock


def _read_json(path: Path) -> dict[str, object] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _write_json_atomic(path: Path, data: Mapping[str, object]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# --- processes ------------------------------------------------------------------------------


def pid_alive(pid: int) -> bool:
    """True if ``pid`` is a live process (a zombie counts as dead where that can be seen)."""
    return procs.pid_alive(pid)


def _cmdline(pid: int) -> list[str] | None:
    return procs.cmdline(pid)


def hold_alive_lock(data_dir: Path) -> int | None:
    """Take ``worker.alive`` for this process's lifetime; None if another worker holds it.

    The returned descriptor must stay open (closing it, or dying, releases the lock).
    """
    return procs.hold_lock(Path(data_dir) / ALIVE_FILE, content=f"{os.getpid()}\n")


def alive_lock_pid(data_dir: Path) -> int | None:
    """The pid of the worker holding ``worker.alive``, or None if no live worker holds it."""
    path = Path(data_dir) / ALIVE_FILE
    if not procs.lock_held(path):
        return None
    text = procs.read_small(path).strip()
    return int(text) if text.isdigit() else None


def is_our_worker(pid: int, data_dir: Path) -> bool:
    """True if ``pid`` is alive and is the memlite worker of ``data_dir``.

    First by the liveness lock (``worker.alive`` held, naming ``pid``): that works with no
    ``/proc`` and no ``ps``. Then, for a worker without the lock (an older version), by its
    command line, ``memlite … worker run`` with our ``--data-dir``; a worker started
    without ``--data-dir`` (by hand, in a terminal) cannot be told apart and is accepted.
    """
    if pid <= 0:
        return False
    if alive_lock_pid(data_dir) == pid:  # held: alive, without asking ps (hook latency)
        return True
    if not pid_alive(pid):
        return False
    args = _cmdline(pid)
    if not args or not any("memlite" in arg for arg in args):
        return False
    try:
        at = args.index("worker")
    except ValueError:
        return False
    if args[at + 1 : at + 2] != ["run"]:
        return False
    if "--data-dir" in args[at:]:
        given = args[args.index("--data-dir", at) + 1 :][:1]
        return bool(given) and _same_dir(given[0], data_dir)
    return True


def _same_dir(a: str | Path, b: str | Path) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


# --- the pid file ---------------------------------------------------------------------------


def read_pidfile(data_dir: Path) -> WorkerInfo | None:
    """The pid file's contents, or None if it is missing or malformed."""
    data = _read_json(Path(data_dir) / PID_FILE)
    if data is None:
        return None
    pid, port = _int(data.get("pid")), _int(data.get("port"))
    started, version = data.get("startedAt"), data.get("version")
    if pid is None or port is None or not isinstance(started, str) or not isinstance(version, str):
        return None
    return WorkerInfo(pid=pid, port=port, started_at=started, version=version)


def write_pidfile(data_dir: Path, info: WorkerInfo) -> None:
    """Write ``worker.pid`` atomically, mode 0600."""
    data_dir = Path(data_dir)
    with _dir_locked(data_dir):
        _write_json_atomic(data_dir / PID_FILE, info.to_json())


def remove_pidfile(data_dir: Path, *, pid: int | None) -> bool:
    """Delete ``worker.pid`` if it still names ``pid`` (or, with None, if it is malformed)."""
    data_dir = Path(data_dir)
    path = data_dir / PID_FILE
    with _dir_locked(data_dir):
        if not path.exists():
            return False
        info = read_pidfile(data_dir)
        if (info.pid if info else None) != pid:
            return False
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return True


def find_worker(data_dir: Path) -> WorkerInfo | None:
    """The running worker of ``data_dir`` per its pid file, or None (a stale file is left)."""
    info = read_pidfile(data_dir)
    if info is not None and is_our_worker(info.pid, data_dir):
        return info
    return None


def clear_stale_pidfile(data_dir: Path) -> None:
    """Remove ``worker.pid`` if it is malformed or names a process that is not our worker."""
    path = Path(data_dir) / PID_FILE
    if not path.exists():
        return
    info = read_pidfile(data_dir)
    if info is None:
        log.info("removing malformed pid file %s", path)
        remove_pidfile(data_dir, pid=None)
    elif not is_our_worker(info.pid, data_dir):
        log.info("removing stale pid file %s (pid %d is not a memlite worker)", path, info.pid)
        remove_pidfile(data_dir, pid=info.pid)


# --- the spawn lock -------------------------------------------------------------------------


def _lock_is_stale(path: Path) -> bool:
    try:
        mtime = path.stat().st_mtime
    except FileNotFoundError:
        return True
    data = _read_json(path)
    holder = _int(data.get("pid")) if data else None
    stamp = data.get("time") if data else None
    if holder is None or not isinstance(stamp, (int, float)):
        return time.time() - mtime > UNWRITTEN_LOCK_SECONDS
    return not pid_alive(holder) or time.time() - stamp > STALE_LOCK_SECONDS


def try_lock(data_dir: Path) -> bool:
    """Create the spawn lock for this process; on a stale lock, break it and try once more."""
    data_dir = Path(data_dir)
    path = data_dir / LOCK_FILE
    for _ in range(2):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            with _dir_locked(data_dir):
                if not _lock_is_stale(path):
                    return False
                log.info("breaking stale spawn lock %s: %s", path, _read_json(path))
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"pid": os.getpid(), "time": time.time()}, f)
        return True
    return False


def hand_lock_to(data_dir: Path, child: int) -> None:
    """Make the worker we spawned the lock's holder, so the lock outlives a starter that exits."""
    data_dir = Path(data_dir)
    path = data_dir / LOCK_FILE
    with _dir_locked(data_dir):
        data = _read_json(path)
        if data and data.get("pid") == os.getpid():
            _write_json_atomic(path, {"pid": child, "time": time.time(), "by": os.getpid()})


def lock_holder(data_dir: Path) -> dict[str, object]:
    """The spawn lock's contents (empty if there is none or it is unreadable)."""
    return _read_json(Path(data_dir) / LOCK_FILE) or {}


def release_lock_held_by(data_dir: Path, pid: int) -> bool:
    """Delete the spawn lock if it names ``pid`` (the worker calls this once it is ready)."""
    data_dir = Path(data_dir)
    path = data_dir / LOCK_FILE
    with _dir_locked(data_dir):
        data = _read_json(path)
        if not data or data.get("pid") != pid:
            return False
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return True


# --- start errors and readiness -------------------------------------------------------------


def write_start_error(data_dir: Path, *, code: int, error: str, message: str) -> None:
    """Record why this process, a worker, exits before it was ready."""
    _write_json_atomic(Path(data_dir) / START_ERROR_FILE,
                       {"pid": os.getpid(), "code": code, "error": error, "message": message,
                        "time": time.time()})


def read_start_error(data_dir: Path, *, pid: int | None = None, since: float | None = None
                     ) -> WorkerError | None:
    """The recorded start error, as the exception to raise (None if none matches)."""
    data = _read_json(data_dir / START_ERROR_FILE)
    if not data:
        return None
    stamp = data.get("time")
    if pid is not None and data.get("pid") != pid:
        return None
    if since is not None and not (isinstance(stamp, (int, float)) and stamp >= since):
        return None
    message = str(data.get("message") or "the worker failed to start")
    return PortInUse(message) if data.get("code") == EXIT_PORT_IN_USE else WorkerError(message)


def probe_ready(port: int, *, pid: int | None = None, timeout: float = 0.5) -> bool:
    """True if a server on 127.0.0.1:``port`` answers ``GET /api/readiness``.

    Any answer below 500 counts (401/403 once the API needs a token; 404 from a root
    without the route, as the pid file already proves the port is bound), except a 200
    whose JSON names a pid other than ``pid``.
    """
    request = (f"GET /api/readiness HTTP/1.1\r\nHost: {HOST}:{port}\r\n"
               "Connection: close\r\n\r\n").encode()
    data = b""
    try:
        with socket.create_connection((HOST, port), timeout=timeout) as sock:
            sock.sendall(request)
            # Read the head, then Content-Length bytes: Hypercorn keeps the socket open
            # after a "Connection: close" reply until the client closes it.
            while len(data) < 65536:
                head, sep, body = data.partition(b"\r\n\r\n")
                length = re.search(rb"(?im)^content-length:\s*(\d+)", head) if sep else None
                if length and len(body) >= int(length[1]):
                    break
                chunk = sock.recv(8192)
                if not chunk:
                    break
                data += chunk
    except OSError:
        return False
    head, _, body = data.partition(b"\r\n\r\n")
    match = re.match(rb"HTTP/1\.[01] (\d{3})", head)
    if not match or int(match[1]) >= 500:
        return False
    if int(match[1]) == 200 and pid is not None:
        try:
            reported = json.loads(body).get("pid")
        except (ValueError, AttributeError):
            reported = None
        return reported in (None, pid)
    return True
