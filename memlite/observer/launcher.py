"""Run the Claude Code CLI as a child that cannot outlive the memlite worker.

Run as ``python -S launcher.py <real cli> <args...>`` (the conversation starts it
through the small wrapper script :func:`memlite.observer.registry.write_wrapper` makes).
Standard library only, and it imports nothing from memlite, so it starts in about 10 ms.
The same code runs on Linux (with or without ``/proc``) and macOS.

Why a launcher that *stays* instead of ``prctl`` + ``exec``: the parent-death signal
fires when the parent **thread** exits, and Trio spawns processes from a thread of its
thread cache, which exits after 10 s idle. Measured: a child with ``PR_SET_PDEATHSIG``
spawned through ``trio.lowlevel.open_process`` was SIGKILLed exactly 10.0 s later with
its parent alive. So:

1. The launcher checks its parent is still the worker (``MEMLITE_OBSERVER_PARENT``),
   makes its own process group (``setpgid(0, 0)``: the CLI and anything it starts are in
   it), takes ``flock`` on ``<registry>/<id>.lock`` with an inheritable descriptor (the
   CLI holds it too: the lock is held while any process of this observer lives, on every
   platform) and writes its registry entry ``<registry>/<id>.json`` atomically.
2. It forks the CLI so that the CLI dies with the launcher: on Linux with
   ``PR_SET_PDEATHSIG(SIGKILL)`` (its parent is this single-threaded launcher, so the
   signal means exactly "the launcher died"); where there is no ``prctl`` (macOS) a
   forked **watchdog** blocks reading a pipe whose only write end is the launcher's; the
   read returns EOF when the launcher dies, however it dies, and the watchdog SIGKILLs
   the whole process group. ``MEMLITE_LAUNCHER_WATCHDOG=1`` uses the watchdog on Linux
   too (tests).
3. It forwards SIGTERM/SIGINT/SIGHUP to the CLI and exits with the CLI's exit status. It
   waits with ``select`` on a self-pipe fed by ``signal.set_wakeup_fd`` (SIGCHLD and the
   forwarded signals wake it at once; POSIX everywhere, unlike ``sigtimedwait``), and
   every 0.2 s checks that its own parent is still the worker (``getppid()``). When the
   worker is gone (even after ``kill -9``) it SIGKILLs its whole process group, itself
   included.

Environment: ``MEMLITE_OBSERVER_ID`` (a random marker every process of this observer
carries), ``MEMLITE_OBSERVER_REGISTRY`` (the registry directory) and
``MEMLITE_OBSERVER_PARENT`` (the worker's pid).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import select
import signal
import subprocess
import sys

PR_SET_PDEATHSIG = 1
POLL_SECONDS = 0.2
EXIT_PARENT_GONE = 70
EXIT_EXEC_FAILED = 127
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
WATCHDOG_ENV = "MEMLITE_LAUNCHER_WATCHDOG"

_child = 0  # the CLI's pid, once forked (read by the signal handler)
_me = 0


def start_time(pid: int) -> str | None:
    """The start-time token of ``memlite.procs.start_time`` (same format, stdlib, no import)."""
    if os.path.exists("/proc/self/stat"):
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            return None
        return "t:" + stat[stat.rindex(b")") + 2 :].split()[19].decode()
    try:
        out = subprocess.run(["ps", "-o", "lstart=", "-p", str(pid)], capture_output=True,
                             text=True, check=False, timeout=5).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return "s:" + " ".join(out.split()) if out.strip() else None


def write_entry(registry: str, marker: str, entry: dict[str, object]) -> str:
    """Write ``<registry>/<marker>.json`` atomically (temp file, then rename)."""
    path = os.path.join(registry, f"{marker}.json")
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(entry, f)
    os.replace(tmp, path)
    return path


def hold_observer_lock(registry: str, marker: str) -> int | None:
    """``flock`` on ``<registry>/<marker>.lock``, inheritable so the CLI holds it too."""
    try:
        fd = os.open(os.path.join(registry, f"{marker}.lock"), os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return None
    os.set_inheritable(fd, True)
    return fd


def _use_prctl() -> bool:
    return sys.platform.startswith("linux") and os.environ.get(WATCHDOG_ENV) != "1"


def exec_child(argv: list[str], launcher_pid: int) -> None:
    """In the forked child: die with the launcher, then become the CLI."""
    try:
        for sig in (signal.SIGCHLD, *FORWARDED):
            signal.signal(sig, signal.SIG_DFL)
        signal.set_wakeup_fd(-1)
        if _use_prctl():
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != launcher_pid:  # the launcher died before we could tell
            os._exit(EXIT_PARENT_GONE)
        os.execv(argv[0], argv)
    except BaseException as exc:  # noqa: BLE001 - nothing may escape a forked child
        with contextlib.suppress(Exception):
            os.write(2, f"memlite launcher: cannot run {argv[0]}: {exc}\n".encode())
    os._exit(EXIT_EXEC_FAILED)


def start_watchdog() -> int:
    """Fork the watchdog (no ``prctl``): it kills our group when the launcher dies.

    Returns the write end of the pipe, which the launcher keeps open (not inheritable,
    so the CLI never holds it) until it exits.
    """
    read, write = os.pipe()
    if os.fork() == 0:
        try:
            os.close(write)
            # Let go of the worker's pipes, or it would wait for our EOF as well as the CLI's.
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            for sig in FORWARDED:
                signal.signal(sig, signal.SIG_IGN)
            while True:
                try:
                    if not os.read(read, 1):
                        break
                except InterruptedError:
                    continue
                except OSError:
                    break
            if os.getpgid(0) == _me:  # our own group, never the worker's
                os.killpg(_me, signal.SIGKILL)
        finally:
            os._exit(0)
    os.close(read)
    return write


def _forward(signum: int, _frame: object) -> None:
    if _child > 0 and os.getpid() == _me:  # never from a forked child before its exec
        with contextlib.suppress(ProcessLookupError):
            os.kill(_child, signum)


def supervise(child: int, parent: int, wake: int) -> int:
    """Wait for the CLI; signals are forwarded by ``_forward``; kill the group if the
    worker goes away."""
    while True:
        with contextlib.suppress(InterruptedError):
            select.select([wake], [], [], POLL_SECONDS)
        with contextlib.suppress(BlockingIOError, InterruptedError):
            os.read(wake, 4096)
        pid, status = os.waitpid(child, os.WNOHANG)
        if pid == child:
            return os.waitstatus_to_exitcode(status)
        if os.getppid() != parent:  # reparented: the worker died
            if os.getpgid(0) == os.getpid():  # never the worker's group, only our own
                os.killpg(0, signal.SIGKILL)
            os.kill(child, signal.SIGKILL)
            os._exit(EXIT_PARENT_GONE)


def main(argv: list[str]) -> int:
    global _child, _me
    if len(argv) < 2:
        os.write(2, b"usage: launcher.py <cli> [args...]\n")
        return 2
    parent = os.getppid()
    expected = os.environ.get("MEMLITE_OBSERVER_PARENT")
    if expected and int(expected) != parent:
        return EXIT_PARENT_GONE
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    _me = os.getpid()
    registry, marker = (os.environ.get("MEMLITE_OBSERVER_REGISTRY"),
                        os.environ.get("MEMLITE_OBSERVER_ID"))
    lock = hold_observer_lock(registry, marker) if registry and marker else None
    watchdog = None if _use_prctl() else start_watchdog()
    # Signals arrive on a self-pipe, so that select() wakes at once on SIGCHLD.
    wake_read, wake_write = os.pipe()
    for fd in (wake_read, wake_write):
        os.set_blocking(fd, False)
    signal.set_wakeup_fd(wake_write, warn_on_full_buffer=False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    for sig in FORWARDED:
        signal.signal(sig, _forward)
    child = os.fork()  # first: the CLI's start is on the connect deadline
    if child == 0:
        exec_child(argv[1:], _me)
    _child = child
    entry_path = None
    if registry and marker:
        with contextlib.suppress(OSError):
            entry_path = write_entry(registry, marker, {
                "pid": _me, "pgid": os.getpgid(0), "start": start_time(_me), "cli_pid": child,
                "owner": parent, "owner_start": start_time(parent), "marker": marker,
                "cli": argv[1], "locked": lock is not None})
    # The CLI owns stdin/stdout now: our copies would hide its EOF from the worker.
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    code = supervise(child, parent, wake_read)
    if entry_path:
        with contextlib.suppress(OSError):
            os.unlink(entry_path)
    if lock is not None:
        os.close(lock)
    # The watchdog's pipe closes as this process exits (its status is set by then):
    # the watchdog sees EOF and SIGKILLs whatever the CLI left in our group, and itself.
    del watchdog
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
