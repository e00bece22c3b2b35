"""Portable process facts: alive, start time, command line, process groups, liveness locks.

STANDARD LIBRARY ONLY: hooks import it through ``lifecycle.py``. Works on Linux with or
without ``/proc`` and on macOS (which has no ``/proc``). Each question is answered by the
best source that exists, and "cannot tell" is never read as "dead":

==================  ================================  ==================  ===================
question            Linux with /proc                  macOS (``ps`` works)  Linux, /proc hidden
==================  ================================  ==================  ===================
alive               ``kill(pid, 0)`` + not a zombie   ``kill`` + ``ps``     ``kill(pid, 0)``
start time          field 22 of ``/proc/<pid>/stat``  ``ps -o lstart=``     unknown (None)
command line        ``/proc/<pid>/cmdline``           ``ps -o command=``    unknown (None)
group members       ``/proc/*/stat`` field 5          ``ps -A -o pid,pgid`` ``killpg(g, 0)``
==================  ================================  ==================  ===================

Why not psutil: it reads ``/proc`` on Linux, so with ``/proc`` hidden (the CI stand-in for
macOS) it answers nothing, and the hooks may not import it anyway. What carries identity
everywhere instead is a **liveness lock**: a process that must be recognisable later (the
worker, an observer) holds ``flock`` on a file of the data directory for its whole life.
The kernel drops the lock when the last holder dies, even after ``kill -9``; nothing can
take it over, and a reused pid holds no lock. "Is X still alive?" is then "is its lock
held?", and it needs no ``/proc``, no ``ps`` and no start times.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess

__all__ = [
    "cmdline",
    "group_alive",
    "group_pids",
    "have_proc",
    "hold_lock",
    "lock_held",
    "kill_group",
    "pid_alive",
    "read_small",
    "start_time",
]

PS_TIMEOUT = 5.0


def have_proc() -> bool:
    """True if a Linux ``/proc`` is mounted (asked each time: a test may hide it)."""
    return os.path.exists("/proc/self/stat")


_ps_broken = False  # ps failed for want of /proc: it will not come back in this process


def _ps(*args: str) -> str | None:
    """``ps`` output, or None where ``ps`` cannot answer (Linux ``ps`` needs ``/proc``)."""
    global _ps_broken
    if _ps_broken:
        return None
    try:
        done = subprocess.run(["ps", *args], capture_output=True, text=True, check=False,
                              timeout=PS_TIMEOUT, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        _ps_broken = True
        return None
    except (OSError, subprocess.SubprocessError):
        return None
    # ps exits 1 when no process matched; with no /proc, Linux ps also exits non-zero but
    # says so on stderr. Only an empty stderr means "asked, and nothing matched".
    if done.returncode != 0 and done.stderr.strip():
        _ps_broken = not os.path.isdir("/proc/self")  # Linux ps without /proc
        return None
    return done.stdout


def _proc_stat(pid: int) -> bytes | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read()
    except OSError:
        return None


def pid_alive(pid: int) -> bool:
    """True if ``pid`` is a live process (a zombie counts as dead where that can be seen)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, owned by someone else
    if have_proc():
        stat = _proc_stat(pid)
        if stat is None:  # gone since kill(), or unreadable: /proc/<pid> tells which
            return os.path.exists(f"/proc/{pid}")
        return stat[stat.rindex(b")") + 2 :][:1] != b"Z"
    out = _ps("-o", "stat=", "-p", str(pid))
    if out is None:
        return True  # kill(pid, 0) succeeded and nothing else can be asked
    return bool(out.strip()) and not out.strip().startswith("Z")


def start_time(pid: int) -> str | None:
    """An opaque token that, with the pid, names one process (None if it cannot be known).

    ``/proc``: clock ticks after boot (field 22 of stat); ``ps``: ``lstart`` (1 s steps).
    Compare tokens only from the same source: a token is ``"t:<ticks>"`` or ``"s:<lstart>"``.
    """
    if pid <= 0:
        return None
    if have_proc():
        stat = _proc_stat(pid)
        if stat is None:
            return None
        return "t:" + stat[stat.rindex(b")") + 2 :].split()[19].decode()
    out = _ps("-o", "lstart=", "-p", str(pid))
    return "s:" + " ".join(out.split()) if out and out.strip() else None


def cmdline(pid: int) -> list[str] | None:
    """The process's arguments, or None if it is gone or cannot be asked.

    From ``ps`` (no ``/proc``) the arguments come back joined by spaces and are split on
    whitespace: good enough to find ``memlite … worker run --data-dir <dir>``.
    """
    if have_proc():
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                raw = f.read()
        except OSError:
            return None
        return [arg.decode("utf-8", "surrogateescape") for arg in raw.split(b"\0") if arg] or None
    out = _ps("-o", "command=", "-p", str(pid))
    return (out.split() or None) if out else None


def group_alive(pgid: int) -> bool:
    """True if the process group ``pgid`` still has a member (zombies included)."""
    if pgid <= 1:
        return False
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def group_pids(pgid: int) -> list[int]:
    """The members of process group ``pgid``; ``[pgid]`` stands for the group where the
    members cannot be listed (Linux without ``/proc``) but the group exists."""
    if pgid <= 1:
        return []
    if have_proc():
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            stat = _proc_stat(int(entry))
            if stat is None:
                continue
            fields = stat[stat.rindex(b")") + 2 :].split()
            if int(fields[2]) == pgid and fields[0] != b"Z":
                found.append(int(entry))
        return sorted(found)
    out = _ps("-A", "-o", "pid=,pgid=,stat=")
    if out is not None:
        found = []
        for line in out.splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[1] == str(pgid) and not parts[2].startswith("Z"):
                found.append(int(parts[0]))
        return sorted(found)
    return [pgid] if group_alive(pgid) else []


def lock_held(path: str | os.PathLike[str]) -> bool:
    """True if some live process holds ``flock`` on ``path`` (False if there is no file).

    Never takes the lock for longer than the test itself; a process cannot see its own
    lock as held through another descriptor of the same open file, so call it from
    another process than the holder, or on a lock opened separately (as here).
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)  # closing drops the lock if we got it
    return False


def hold_lock(path: str | os.PathLike[str], *, content: str = "",
              inheritable: bool = False) -> int | None:
    """Take ``flock`` on ``path`` (created 0600) for as long as the returned fd stays open.

    Returns None if another process holds it. ``content`` (e.g. the pid) is written after
    the lock is taken, so a reader that finds the lock held and reads a pid knows the
    holder wrote it. ``inheritable`` lets the processes we exec hold it too.
    """
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    if content:
        os.ftruncate(fd, 0)
        os.pwrite(fd, content.encode(), 0)
    if inheritable:
        os.set_inheritable(fd, True)
    return fd


def read_small(path: str | os.PathLike[str]) -> str:
    """A small file's text ('' if unreadable)."""
    with contextlib.suppress(OSError), open(path, encoding="utf-8", errors="replace") as f:
        return f.read(4096)
    return ""


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> bool:
    """Signal process group ``pgid``; False if it no longer exists."""
    if pgid <= 1:
        return False
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        return False
    return True
