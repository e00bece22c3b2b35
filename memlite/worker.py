"""The worker process, ``memlite worker run``: one per data directory, on 127.0.0.1.

``memlite worker start`` (see ``spawn.py``) runs this in its own session with stdio on
/dev/null; a person may also run it in a terminal. Either way it never writes to stdout
and logs to ``worker.log`` in the data directory, rotated at 5 MB with 3 backups.

Lifecycle
    Load settings, open the log, refuse to run beside a live worker of the same data
    directory, then ``trio.run``: open the signal receiver (SIGTERM, SIGINT, SIGHUP) and
    start the root of the task tree (``memlite.tree.run_root``). Once the root
    reports its port, write ``worker.pid`` and release the spawn lock it was handed:
    that is readiness. Stop when a signal sets ``shutdown`` and the root returns, or when
    the root returns by itself (idle shutdown); then remove the pid file and exit 0.

Failure
    A taken port exits ``EXIT_PORT_IN_USE``, a bad setting ``EXIT_CONFIG``, a second
    worker ``EXIT_ALREADY_RUNNING``, a crash ``EXIT_CRASHED`` (traceback in the log).
    Before readiness the reason is also written to ``worker.start-error`` for the starter.

Timeouts
    After the first signal the root has ``SHUTDOWN_GRACE_SECONDS`` (``ROOT_STOP``, 4.5 s:
    the sum of its children's graces) to stop cleanly before it is cancelled, so the
    process exits within ``STOP_BOUND`` (5 s); a second signal cancels at once.
"""

from __future__ import annotations

import errno
import logging
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from functools import partial
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Any

import trio

from memlite.actors.core import ReportedStatus, lone_error
from memlite.actors.graces import ROOT_STOP
from memlite.config import Settings, default_data_dir, load_settings
from memlite.errors import MemliteError, PortInUse
from memlite.lifecycle import (
    EXIT_ALREADY_RUNNING,
    EXIT_CONFIG,
    EXIT_CRASHED,
    EXIT_OK,
    EXIT_PORT_IN_USE,
    HOST,
    LOG_FILE,
    WorkerInfo,
    alive_lock_pid,
    find_worker,
    hold_alive_lock,
    release_lock_held_by,
    remove_pidfile,
    worker_version,
    write_pidfile,
    write_start_error,
)
from memlite.tree import run_root

__all__ = ["SHUTDOWN_GRACE_SECONDS", "configure_logging", "run", "serve"]

log = logging.getLogger(__name__)

SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
SHUTDOWN_GRACE_SECONDS = ROOT_STOP
"""The root's stop budget: the sum of its children's graces (``memlite.actors.graces``)."""
LOG_MAX_BYTES = 5 * 1024 * 1024
LOG_BACKUPS = 3


def configure_logging(data_dir: Path) -> logging.Handler:
    """Send every logger of this process to the rotating ``worker.log``."""
    handler = RotatingFileHandler(Path(data_dir) / LOG_FILE, maxBytes=LOG_MAX_BYTES,
                                  backupCount=LOG_BACKUPS, encoding="utf-8")
    handler.setFormatter(logging.Formatter(
        "%(asctime)s %(process)d %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    logging.captureWarnings(True)
    return handler


async def _run_root(settings: Settings, shutdown: trio.Event, scope: trio.CancelScope,
                    done: trio.Event, *,
                    task_status: trio.TaskStatus[int | None] = trio.TASK_STATUS_IGNORED) -> None:
    status = ReportedStatus(task_status)
    try:
        with scope:
            await run_root(settings, shutdown=shutdown, task_status=status)  # type: ignore[arg-type]
        if scope.cancelled_caught:
            log.warning("the root did not stop in time and was cancelled")
        elif not shutdown.is_set():
            log.info("the root stopped by itself")
    finally:
        done.set()
    if not status.called:
        task_status.started(None)  # stopped by a signal before it was ready


async def _stop_on_signal(signals: AsyncIterator[int], shutdown: trio.Event,
                          root: trio.CancelScope) -> None:
    async for signum in signals:
        name = signal.Signals(signum).name
        if shutdown.is_set():
            log.warning("%s again: stopping now", name)
            root.cancel(reason=f"second {name}")
        else:
            log.info("%s: shutting down (at most %.1f s)", name, SHUTDOWN_GRACE_SECONDS)
            shutdown.set()
            root.deadline = trio.current_time() + SHUTDOWN_GRACE_SECONDS


def _address_in_use(group: BaseExceptionGroup[OSError]) -> OSError | None:
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            if (found := _address_in_use(exc)) is not None:
                return found
        elif exc.errno == errno.EADDRINUSE:
            return exc
    return None


async def serve(settings: Settings, *, on_ready: Callable[[int], Any]) -> None:
    """Run the root until it returns or a signal stops it; ``on_ready(port)`` runs in a thread.

    Raises:
        PortInUse: the root could not bind ``settings.worker_port``.
    """
    shutdown = trio.Event()
    root_scope = trio.CancelScope()
    root_done = trio.Event()
    with trio.open_signal_receiver(*SIGNALS) as signals:
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_stop_on_signal, signals, shutdown, root_scope,
                                   name="worker:signals")
                port = await nursery.start(_run_root, settings, shutdown, root_scope, root_done,
                                           name="worker:root")
                if port is not None:
                    await trio.to_thread.run_sync(on_ready, port)
                await root_done.wait()
                nursery.cancel_scope.cancel(reason="the root stopped")
        except* OSError as group:
            if _address_in_use(group) is None:
                raise
            raise PortInUse(
                f"port {settings.worker_port} on {HOST} is in use by another program; "
                "set MEMLITE_WORKER_PORT to a free port") from None


def _announce(data_dir: Path, version: str, port: int) -> None:
    started = datetime.now(UTC).isoformat(timespec="milliseconds")
    write_pidfile(data_dir, WorkerInfo(pid=os.getpid(), port=port, started_at=started,
                                       version=version))
    release_lock_held_by(data_dir, os.getpid())
    log.info("ready: http://%s:%d/ (pid %d, version %s)", HOST, port, os.getpid(), version)


def _fail(data_dir: Path, code: int, error: str, message: str) -> int:
    print(f"memlite: {message}", file=sys.stderr)  # a terminal sees it; a daemon's is /dev/null
    try:
        write_start_error(data_dir, code=code, error=error, message=message)
    except OSError as exc:
        log.warning("cannot record the start error: %s", exc)
    return code


def run(data_dir: Path | None = None) -> int:
    """Run the worker in the foreground until it is stopped; returns the exit status."""
    os.umask(0o077)  # the log, pid file and database are the user's alone
    data_dir = default_data_dir() if data_dir is None else Path(data_dir)
    try:
        settings = load_settings(data_dir)
    except MemliteError as exc:
        return _fail(data_dir, EXIT_CONFIG, type(exc).__name__, str(exc))
    handler = configure_logging(data_dir)
    pid, version = os.getpid(), worker_version()
    ready: list[int] = []
    alive: int | None = None

    def on_ready(port: int) -> None:
        _announce(data_dir, version, port)
        ready.append(port)

    log.info("starting: pid %d, version %s, port %d, data directory %s",
             pid, version, settings.worker_port, data_dir)
    try:
        other = find_worker(data_dir)
        alive = hold_alive_lock(data_dir) if other is None or other.pid == pid else None
        if alive is None:
            holder = other.pid if other is not None else alive_lock_pid(data_dir)
            return _fail(data_dir, EXIT_ALREADY_RUNNING, "WorkerError",
                         f"a worker of {data_dir} is already running (pid {holder}"
                         + (f", port {other.port}" if other is not None else "")
                         + "); use `memlite worker stop` first")
        trio.run(partial(serve, settings, on_ready=on_ready))
    except PortInUse as exc:
        log.error("%s", exc)
        return _fail(data_dir, EXIT_PORT_IN_USE, "PortInUse", str(exc))
    except Exception as exc:
        log.exception("the worker crashed")
        if ready:
            return EXIT_CRASHED
        cause = lone_error(exc)  # e.g. NotADatabaseError, not "Exceptions from Trio nursery"
        return _fail(data_dir, EXIT_CRASHED, type(cause).__name__,
                     f"the worker crashed while starting ({cause}); see {data_dir / LOG_FILE}")
    finally:
        remove_pidfile(data_dir, pid=pid)
        release_lock_held_by(data_dir, pid)
        if alive is not None:
            os.close(alive)  # last: until now, a starter sees this worker as ours
        log.info("exited")
        logging.getLogger().removeHandler(handler)
        logging.captureWarnings(False)
        handler.close()
    return EXIT_OK
