"""Run the Claude Code CLI as a child that cannot outlive the memlite worker.

Run as ``python -S launcher.py <real cli> <args...>`` (the SDK starts it through the
small wrapper script :func:`memlite.observer.registry.write_wrapper` makes, as its
``cli_path``). Standard library only, and it imports nothing from memlite, so it starts
in about 10 ms.

Why a launcher that *stays* instead of ``prctl`` + ``exec``: the parent-death signal
fires when the parent **thread** exits, and Trio spawns processes from a thread of its
thread cache, which exits after 10 s idle. Measured: a child with ``PR_SET_PDEATHSIG``
spawned through ``trio.lowlevel.open_process`` was SIGKILLed exactly 10.0 s later with
its parent alive. So:

1. The launcher checks its parent is still the worker (``MEMLITE_OBSERVER_PARENT``),
   makes its own process group (``setpgid(0, 0)``: the CLI and anything it starts are in
   it), and writes its registry entry ``<registry>/<id>.json`` atomically.
2. It forks the CLI with ``PR_SET_PDEATHSIG(SIGKILL)``: its parent is this
   single-threaded launcher, so the signal means exactly "the launcher died".
3. It forwards SIGTERM/SIGINT/SIGHUP to the CLI, exits with the CLI's exit status, and
   every 0.2 s checks that its own parent is still the worker. When the worker is gone
   (even after ``kill -9``) it SIGKILLs its whole process group, itself included.

Environment: ``MEMLITE_OBSERVER_ID`` (a random marker every process of this observer
carries; the reaper only kills processes that have it), ``MEMLITE_OBSERVER_REGISTRY``
(the registry directory) and ``MEMLITE_OBSERVER_PARENT`` (the worker's pid).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import sys

PR_SET_PDEATHSIG = 1
POLL_SECONDS = 0.2
EXIT_PARENT_GONE = 70
EXIT_EXEC_FAILED = 127
FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
WATCHED = {signal.SIGCHLD, *FORWARDED}


def start_time(pid: int) -> int | None:
    """Field 22 of /proc/<pid>/stat (clock ticks after boot): a pid plus this is unique."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    return int(stat[stat.rindex(b")") + 2 :].split()[19])


def write_entry(registry: str, marker: str, entry: dict[str, object]) -> str:
    """Write ``<registry>/<marker>.json`` atomically (temp file, then rename)."""
    path = os.path.join(registry, f"{marker}.json")
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(entry, f)
    os.replace(tmp, path)
    return path


def exec_child(argv: list[str], launcher_pid: int, old_mask: set[int]) -> None:
    """In the forked child: die with the launcher, then become the CLI."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != launcher_pid:  # the launcher died before prctl took effect
            os._exit(EXIT_PARENT_GONE)
        signal.pthread_sigmask(signal.SIG_SETMASK, old_mask)
        os.execv(argv[0], argv)
    except BaseException as exc:  # noqa: BLE001 - nothing may escape a forked child
        with contextlib.suppress(Exception):
            os.write(2, f"memlite launcher: cannot run {argv[0]}: {exc}\n".encode())
    os._exit(EXIT_EXEC_FAILED)


def supervise(child: int, parent: int) -> int:
    """Wait for the CLI; forward signals; kill the group if the worker goes away."""
    while True:
        info = signal.sigtimedwait(WATCHED, POLL_SECONDS)
        if info is not None and info.si_signo in FORWARDED:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, info.si_signo)
        pid, status = os.waitpid(child, os.WNOHANG)
        if pid == child:
            return os.waitstatus_to_exitcode(status)
        if os.getppid() != parent:  # reparented: the worker died
            if os.getpgid(0) == os.getpid():  # never the worker's group, only our own
                os.killpg(0, signal.SIGKILL)
            os.kill(child, signal.SIGKILL)
            os._exit(EXIT_PARENT_GONE)


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        os.write(2, b"usage: launcher.py <cli> [args...]\n")
        return 2
    parent = os.getppid()
    expected = os.environ.get("MEMLITE_OBSERVER_PARENT")
    if expected and int(expected) != parent:
        return EXIT_PARENT_GONE
    with contextlib.suppress(OSError):
        os.setpgid(0, 0)
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, WATCHED)
    me = os.getpid()
    child = os.fork()
    if child == 0:
        exec_child(argv[1:], me, old_mask)
    registry, marker = (os.environ.get("MEMLITE_OBSERVER_REGISTRY"),
                        os.environ.get("MEMLITE_OBSERVER_ID"))
    entry_path = None
    if registry and marker:
        with contextlib.suppress(OSError):
            entry_path = write_entry(registry, marker, {
                "pid": me, "pgid": os.getpgid(0), "start": start_time(me), "cli_pid": child,
                "owner": parent, "owner_start": start_time(parent), "marker": marker,
                "cli": argv[1]})
    # The CLI owns stdin/stdout now: our copies would hide its EOF from the SDK.
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    code = supervise(child, parent)
    if entry_path:
        with contextlib.suppress(OSError):
            os.unlink(entry_path)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
