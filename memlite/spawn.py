"""Starting and stopping the worker: the protocol, in the standard library only.

``memlite worker start|stop|restart`` use it, and hooks will (DESIGN §5: a hook that finds
the worker down spools its event, starts the worker with ``wait=False`` and exits), so
there is one protocol over the files described in ``lifecycle.py``.

Start (:func:`start_worker`)
    1. A live worker of this data directory, of the expected version or a newer one, that
       answers ``GET /api/readiness``: use it.
    2. Otherwise try to take the spawn lock. Not taken: someone else is starting one; wait
       for it to be ready (or for its start error), breaking the lock if it goes stale.
    3. Under the lock, look again. A worker of an older (or unordered) version is stopped,
       once: SIGTERM, at most ``STOP_GRACE_SECONDS``, then SIGKILL. A stale pid file is
       removed. Spawn ``memlite worker run`` in its own session with stdio on /dev/null,
       hand it the lock, and wait until its pid file names it and it answers, or until it
       exits (then its ``worker.start-error`` says why: ``PortInUse`` or ``WorkerError``).

Stop (:func:`stop_worker`)
    SIGTERM to the pid in the pid file once it is verified to be our worker, wait at most
    the grace period, then SIGKILL. Each signal is preceded by that check, because a pid
    can be reused at any moment.

Versions: a worker of a strictly newer release is kept, not replaced, so two installed
versions (two Claude Code sessions mid-upgrade) cannot replace each other forever.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import subprocess
import sys
import sysconfig
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from memlite.errors import WorkerError
from memlite.lifecycle import (
    LOCK_FILE,
    LOG_FILE,
    WorkerInfo,
    clear_stale_pidfile,
    find_worker,
    hand_lock_to,
    is_our_worker,
    lock_holder,
    pid_alive,
    probe_ready,
    read_pidfile,
    read_start_error,
    release_lock_held_by,
    remove_pidfile,
    try_lock,
    worker_version,
)

__all__ = [
    "KILL_WAIT_SECONDS",
    "READY_TIMEOUT_SECONDS",
    "START_BACKOFF_SECONDS",
    "STOP_GRACE_SECONDS",
    "StartResult",
    "start_worker",
    "stop_worker",
    "worker_command",
    "worker_env",
]

log = logging.getLogger(__name__)

READY_TIMEOUT_SECONDS = 20.0  # below STALE_LOCK_SECONDS: a slow start never has its lock broken
STOP_GRACE_SECONDS = 5.0
KILL_WAIT_SECONDS = 2.0
POLL_SECONDS = 0.02
START_BACKOFF_SECONDS = 30.0
"""After a worker failed to start (a damaged database, a taken port), a hook does not
spawn another for this long: each would fail the same way, one per hook. Hooks spool
meanwhile; an explicit ``memlite worker start`` always tries."""


@dataclass(frozen=True)  # no kw_only: the hook imports this on Python 3.9 (macOS)
class StartResult:
    """What :func:`start_worker` found or did. ``info`` is None only when not waiting."""

    info: WorkerInfo | None
    started: bool  # this call spawned the worker
    replaced: WorkerInfo | None = None  # the worker of another version it stopped first


def _wait_exit(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while pid_alive(pid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_SECONDS)
    return True


def _terminate(pid: int, data_dir: Path, grace: float) -> bool:
    """SIGTERM our worker ``pid``, wait up to ``grace`` seconds, then SIGKILL it.

    Returns True once it is gone. Each signal is sent only after checking, again, that
    ``pid`` is our worker: a pid can be reused by an unrelated process at any moment.
    """
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, KILL_WAIT_SECONDS)):
        if not is_our_worker(pid, data_dir):
            return True  # gone, or the pid now belongs to someone else: ours is gone either way
        log.info("sending %s to worker pid %d", sig.name, pid)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        if _wait_exit(pid, wait):
            return True
    return False


def _release(parts: str) -> tuple[int, ...]:
    match = re.match(r"\d+(?:\.\d+)*", parts)
    return tuple(int(p) for p in match[0].split(".")) if match else ()


def _acceptable(running: str, expected: str) -> bool:
    """Keep a worker of the expected version, or of a strictly newer release.

    Replacing newer workers too would make two installed versions replace each other
    forever; an older starter keeps using the newer worker instead.
    """
    return running == expected or _release(running) > _release(expected)


def worker_command(data_dir: Path, python: str | None = None) -> list[str]:
    """The command line of a worker for ``data_dir`` (what the daemon execs).

    ``python`` defaults to this interpreter. A hook passes the worker's own (``$MEMLITE_PYTHON``
    or the plugin's venv: ``memlite.hooks.bootstrap.worker_python``), never its bare one.
    """
    return [python or sys.executable, "-m", "memlite", "worker", "run",
            "--data-dir", os.path.realpath(data_dir)]


def worker_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The worker's environment: ours, plus this memlite's location when it is not installed.

    From a source tree (or a plugin directory whose venv holds only the dependencies)
    ``python -m memlite`` finds the package only through ``PYTHONPATH``.
    """
    env = dict(os.environ if base is None else base)
    root = str(Path(__file__).resolve().parent.parent)
    site_dirs = {os.path.realpath(sysconfig.get_paths()[k]) for k in ("purelib", "platlib")}
    if os.path.realpath(root) not in site_dirs:
        current = env.get("PYTHONPATH", "")
        if root not in current.split(os.pathsep):
            env["PYTHONPATH"] = root + (os.pathsep + current if current else "")
    return env


def _spawn(data_dir: Path, argv: Sequence[str], env: Mapping[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(list(argv), cwd=data_dir, env=dict(env), start_new_session=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, close_fds=True)


def _wait_ready(data_dir: Path, child: subprocess.Popen[bytes], deadline: float) -> WorkerInfo:
    while True:
        code = child.poll()
        if code is not None:
            release_lock_held_by(data_dir, child.pid)
            error = read_start_error(data_dir, pid=child.pid)
            if error is not None:
                raise error
            raise WorkerError(
                f"the worker exited with status {code} before it was ready; see "
                f"{data_dir / LOG_FILE}, or run `memlite worker run` in a terminal to see why")
        info = read_pidfile(data_dir)
        if info is not None and info.pid == child.pid and probe_ready(info.port, pid=child.pid):
            return info
        if time.monotonic() >= deadline:
            child.kill()  # our own child, by its Popen handle: never a stranger
            child.wait()
            release_lock_held_by(data_dir, child.pid)
            raise WorkerError(f"the worker (pid {child.pid}) was not ready in time and was "
                              f"stopped; see {data_dir / LOG_FILE}")
        time.sleep(POLL_SECONDS)


def _answers_or_exits(info: WorkerInfo, deadline: float) -> bool:
    """Wait for a live worker to answer (True) or to exit (False), e.g. one shutting down."""
    while not probe_ready(info.port, pid=info.pid):
        if not pid_alive(info.pid):
            return False
        if time.monotonic() >= deadline:
            raise WorkerError(f"the worker (pid {info.pid}) does not answer on port "
                              f"{info.port}; try `memlite worker restart`")
        time.sleep(POLL_SECONDS)
    return True


def _forget(child: subprocess.Popen[bytes]) -> None:
    """Drop our handle on a worker that is meant to outlive us, without a ResourceWarning.

    ``subprocess`` keeps it on its list and reaps it later if this process lives on.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        child.__del__()  # puts it on subprocess's own list of children to reap


def _start_locked(data_dir: Path, argv: Sequence[str], env: Mapping[str, str], version: str,
                  wait: bool, deadline: float) -> StartResult:
    child: subprocess.Popen[bytes] | None = None
    try:
        info = find_worker(data_dir)
        if info is not None and _acceptable(info.version, version):
            if not wait or _answers_or_exits(info, deadline):
                return StartResult(info=info, started=False)
            info = None  # it was on its way out: start a new one
        if info is not None:
            log.info("replacing worker pid %d (version %s) with version %s",
                     info.pid, info.version, version)
            if not _terminate(info.pid, data_dir, STOP_GRACE_SECONDS):
                raise WorkerError(f"the old worker (pid {info.pid}) did not exit")
            remove_pidfile(data_dir, pid=info.pid)
        clear_stale_pidfile(data_dir)
        child = _spawn(data_dir, argv, env)
        hand_lock_to(data_dir, child.pid)
        if not wait:
            return StartResult(info=None, started=True, replaced=info)
        return StartResult(info=_wait_ready(data_dir, child, deadline), started=True,
                           replaced=info)
    finally:
        release_lock_held_by(data_dir, os.getpid())
        if child is not None:
            if wait:
                release_lock_held_by(data_dir, child.pid)
            _forget(child)


def start_worker(data_dir: Path, *, argv: Sequence[str] | None = None,
                 env: Mapping[str, str] | None = None, version: str | None = None,
                 wait: bool = True, timeout: float = READY_TIMEOUT_SECONDS) -> StartResult:
    """Make sure one worker of ``data_dir`` runs; see the module docstring for the protocol.

    Args:
        data_dir: the data directory (created 0700 if missing).
        argv: the worker's command line; :func:`worker_command` by default.
        env: the worker's environment; :func:`worker_env` by default.
        version: the version to expect; :func:`worker_version` by default.
        wait: wait until the worker is ready. A hook passes False: it spawns (or sees that
            someone else is spawning) and leaves; ``info`` is then None if not yet ready.
        timeout: seconds to wait for readiness, including waiting for another starter.

    Raises:
        PortInUse: the worker's port is taken by another program.
        WorkerError: the worker failed to start, or did not become ready in time.
    """
    data_dir = Path(data_dir)
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    env = worker_env() if env is None else env
    argv = worker_command(data_dir) if argv is None else argv
    version = worker_version(env) if version is None else version
    deadline = time.monotonic() + timeout
    began = time.time()
    while True:
        info = find_worker(data_dir)
        if (info is not None and _acceptable(info.version, version)
                and probe_ready(info.port, pid=info.pid)):
            return StartResult(info=info, started=False)
        # A start that failed while we waited on its lock fails us too, with its reason.
        error = read_start_error(data_dir, since=began)
        if error is not None and not (data_dir / LOCK_FILE).exists():
            raise error
        if not wait and read_start_error(
                data_dir, since=time.time() - START_BACKOFF_SECONDS) is not None:
            return StartResult(info=None, started=False)  # back off: see the constant
        if try_lock(data_dir):
            return _start_locked(data_dir, argv, env, version, wait, deadline)
        if not wait:
            return StartResult(info=None, started=False)
        if time.monotonic() >= deadline:
            holder = lock_holder(data_dir)
            raise WorkerError(f"timed out waiting for another start of the worker (spawn lock "
                              f"held by pid {holder.get('pid', '?')}: {data_dir / LOCK_FILE})")
        time.sleep(POLL_SECONDS)


def stop_worker(data_dir: Path, *, grace: float = STOP_GRACE_SECONDS) -> WorkerInfo | None:
    """Stop the worker of ``data_dir``: SIGTERM, wait ``grace`` s, then SIGKILL.

    Returns the stopped worker's info, or None if none was running (a stale pid file is
    removed; its pid, not being our worker, is never signalled).

    Raises:
        WorkerError: the worker survived SIGKILL.
    """
    data_dir = Path(data_dir)
    info = find_worker(data_dir)
    if info is None:
        if data_dir.is_dir():
            clear_stale_pidfile(data_dir)
        return None
    if not _terminate(info.pid, data_dir, grace):
        raise WorkerError(f"the worker (pid {info.pid}) did not exit after SIGKILL")
    remove_pidfile(data_dir, pid=info.pid)  # left behind only if it was killed
    return info
