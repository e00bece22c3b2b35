"""The registry of observer processes, the start-up reaper, and the CLI wrapper script.

Layout, under the data directory:

* ``observers/<id>.json``: one entry per running observer, written atomically by the
  launcher (``launcher.py``) as soon as it starts: its pid (= its process group id), its
  start time, the CLI's pid, the owning worker's pid and start time, and ``marker``, the
  random ``MEMLITE_OBSERVER_ID`` that every process of that observer carries in its
  environment. The launcher removes its entry when it exits; a :class:`Conversation`
  removes it after its close. An entry that is left means the launcher was SIGKILLed.
* ``observer/bin/launch-<hash>``: the executable wrapper the conversation runs as the CLI
  (``exec python -S launcher.py <real cli> "$@"``).

* ``observers/<id>.lock``: the observer's liveness lock. The launcher takes ``flock`` on
  it with an inheritable descriptor, so the lock is held while the launcher or the CLI
  lives; the kernel drops it when the last of them dies, even by ``kill -9``.

Killing is by proof of ownership, on every platform (``procs.py``): only while an
observer's lock is held is its process group (the launcher's pid) signalled; a group id
is not reused while a member lives. With ``/proc`` (Linux), processes whose environment
holds ``MEMLITE_OBSERVER_ID=<marker>`` are killed too (one that left the group). A pid
that was reused by an unrelated program holds no lock and has no marker, so it is never
signalled, whatever the registry says.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import shlex
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memlite import procs
from memlite.observer.launcher import start_time

__all__ = [
    "LAUNCHER",
    "MARKER_ENV",
    "forget",
    "kill_marked",
    "lock_path",
    "marked_pids",
    "observer_pids",
    "read_entries",
    "reap_stale_observers",
    "reap_with_retry",
    "registry_dir",
    "start_time",
    "write_wrapper",
]

log = logging.getLogger(__name__)

LAUNCHER = Path(__file__).resolve().with_name("launcher.py")
MARKER_ENV = "MEMLITE_OBSERVER_ID"


def registry_dir(data_dir: Path) -> Path:
    """``<data_dir>/observers``, created 0700."""
    path = Path(data_dir) / "observers"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def write_wrapper(data_dir: Path, real_cli: Path) -> Path:
    """The executable ``cli_path`` that starts ``real_cli`` through the launcher."""
    script = (f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -S "
              f"{shlex.quote(str(LAUNCHER))} {shlex.quote(str(real_cli))} \"$@\"\n")
    digest = hashlib.sha256(script.encode()).hexdigest()[:16]
    bin_dir = Path(data_dir) / "observer" / "bin"
    bin_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = bin_dir / f"launch-{digest}"
    if not path.exists():
        tmp = bin_dir / f".launch-{digest}.{os.getpid()}.tmp"
        tmp.write_text(script)
        tmp.chmod(0o700)
        os.replace(tmp, path)
    return path


def _environ_has(pid: int, needle: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return needle in f.read().split(b"\0")
    except OSError:  # gone, a zombie, or not ours to read
        return False


def lock_path(data_dir: Path, marker: str) -> Path:
    """The observer's liveness lock: held while any process of it lives (``launcher.py``)."""
    return Path(data_dir) / "observers" / f"{marker}.lock"


def _entry(data_dir: Path, marker: str) -> dict[str, Any] | None:
    try:
        entry = json.loads((Path(data_dir) / "observers" / f"{marker}.json").read_text())
    except (OSError, ValueError):
        return None
    return entry if isinstance(entry, dict) else None


def _group(data_dir: Path, marker: str) -> int | None:
    """The observer's process group, if its lock proves the group is still the observer's.

    While the lock is held, a process of the observer lives; it is in the group (unless it
    left it, see :func:`marked_pids`), and a group id is not reused while the group has a
    member. So the group may be signalled.
    """
    entry = _entry(data_dir, marker)
    pgid = entry.get("pgid") if entry else None
    if not isinstance(pgid, int) or pgid <= 1 or pgid != entry.get("pid"):
        return None
    return pgid if procs.lock_held(lock_path(data_dir, marker)) else None


def _environ_scan(marker: str) -> list[int]:
    needle = f"{MARKER_ENV}={marker}".encode()
    me = os.getpid()
    return [int(e) for e in os.listdir("/proc")
            if e.isdigit() and int(e) != me and _environ_has(int(e), needle)]


def marked_pids(marker: str, data_dir: Path) -> list[int]:
    """The live processes of the observer ``marker``.

    With ``/proc`` (Linux): every process whose environment carries
    ``MEMLITE_OBSERVER_ID=<marker>`` (one pass, as cheap as it gets; finds a process that
    left the group too). Without: the members of its process group while its lock is held
    (from ``ps``; ``[pgid]`` stands for the group where even ``ps`` cannot answer).
    """
    if procs.have_proc():
        return sorted(_environ_scan(marker))
    pgid = _group(data_dir, marker)
    found = set(procs.group_pids(pgid)) if pgid is not None else set()
    found.discard(os.getpid())
    return sorted(found)


def kill_marked(marker: str, data_dir: Path) -> list[int]:
    """SIGKILL every process of the observer ``marker``; return the pids signalled.

    Its process group first, while its lock proves the group is the observer's (every
    platform); then, with ``/proc``, every process carrying the marker.
    """
    killed: set[int] = set()
    pgid = _group(data_dir, marker)
    if pgid is not None and pgid != os.getpgid(0):
        members = [] if procs.have_proc() else procs.group_pids(pgid)
        if procs.kill_group(pgid):
            killed.update(members or [pgid])
    if procs.have_proc():
        found = _environ_scan(marker)
        for pid in found:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if found:
            killed.discard(pgid)  # listed by pid instead
            killed.update(found)
    return sorted(killed)


def read_entries(data_dir: Path) -> list[dict[str, Any]]:
    """Every readable registry entry (unreadable or half-written files are skipped)."""
    entries = []
    for path in sorted(registry_dir(data_dir).glob("*.json")):
        try:
            entry = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(entry, dict) and isinstance(entry.get("marker"), str):
            entry["path"] = str(path)
            entries.append(entry)
    return entries


def _owner_alive(pid: object, start: object) -> bool:
    """The owning worker ``pid`` is alive and, where start times can be read, the same one.

    Where they cannot (no ``/proc`` and no ``ps``) a live pid counts as the owner: the
    mistake can only leave an orphan for its launcher's own parent check to kill, never
    kill an observer of a live worker.
    """
    if not isinstance(pid, int) or pid <= 0 or not procs.pid_alive(pid):
        return False
    now = procs.start_time(pid)
    return start is None or now is None or now == start


def observer_pids(data_dir: Path) -> list[int]:
    """Pids of the registered observer launchers that are alive and verifiably ours."""
    return sorted(
        e["pid"] for e in read_entries(data_dir)
        if isinstance(e.get("pid"), int) and procs.pid_alive(e["pid"])
        and procs.lock_held(lock_path(data_dir, e["marker"]))
    )


def reap_stale_observers(data_dir: Path) -> list[int]:
    """Kill the observers whose owning worker is gone, and drop their entries.

    Called by the worker at start-up. An entry is stale when its owner (pid + start time)
    is no longer alive; entries of a live owner are left alone. Only an observer whose
    lock is still held is signalled, by its process group (and, with ``/proc``, by its
    marker): a reused pid is never signalled. One bad entry is logged and skipped; it
    does not stop the others.

    Returns:
        The pids that were sent SIGKILL.
    """
    killed: list[int] = []
    for entry in read_entries(data_dir):
        try:
            if _owner_alive(entry.get("owner"), entry.get("owner_start")):
                continue
            pids = kill_marked(entry["marker"], data_dir)
            if pids:
                log.warning("killed %d stale observer process(es) %s", len(pids), pids)
            killed += pids
            forget(data_dir, entry["marker"])
        except Exception:  # noqa: BLE001 - one entry must not stop the reaper
            log.warning("cannot reap observer entry %s", entry.get("path"), exc_info=True)
    return killed


def reap_with_retry(data_dir: Path, *, attempts: int = 3, backoff: float = 0.5,
                    sleep: Callable[[float], None] = time.sleep) -> list[int]:
    """:func:`reap_stale_observers` that never raises: an error is logged and retried
    (``backoff``, doubling) ``attempts`` times, then given up on with an error in the log.

    The session supervisor calls this at its start: a failure here must not crash it
    (the root would restart it, then escalate, and the worker would never start).
    """
    for attempt in range(1, attempts + 1):
        try:
            return reap_stale_observers(data_dir)
        except Exception:  # noqa: BLE001 - see the docstring
            log.warning("reaping stale observers failed (attempt %d of %d)", attempt,
                        attempts, exc_info=True)
            if attempt < attempts:
                sleep(backoff * 2 ** (attempt - 1))
    log.error("gave up reaping stale observers; their processes may linger until they "
              "notice their worker is gone")
    return []


def forget(data_dir: Path, marker: str) -> None:
    """Remove the entry and lock of ``marker`` (after its processes are known dead)."""
    for suffix in (".json", ".lock"):
        with contextlib.suppress(OSError):
            (registry_dir(data_dir) / f"{marker}{suffix}").unlink()
