"""The registry of observer processes, the start-up reaper, and the CLI wrapper script.

Layout, under the data directory:

* ``observers/<id>.json``: one entry per running observer, written atomically by the
  launcher (``launcher.py``) as soon as it starts: its pid (= its process group id), its
  start time, the CLI's pid, the owning worker's pid and start time, and ``marker``, the
  random ``MEMLITE_OBSERVER_ID`` that every process of that observer carries in its
  environment. The launcher removes its entry when it exits; a :class:`Conversation`
  removes it after its close. An entry that is left means the launcher was SIGKILLed.
* ``observer/bin/launch-<hash>``: the executable wrapper the SDK runs as ``cli_path``
  (``exec python -S launcher.py <real cli> "$@"``).

Killing is always by marker: a process is ours only if ``/proc/<pid>/environ`` holds
``MEMLITE_OBSERVER_ID=<marker>``. A pid that was reused by an unrelated program has no
such marker, so it is never signalled, whatever the registry says.
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
from pathlib import Path
from typing import Any

from memlite.observer.launcher import start_time

__all__ = [
    "LAUNCHER",
    "MARKER_ENV",
    "forget",
    "kill_marked",
    "marked_pids",
    "observer_pids",
    "read_entries",
    "reap_stale_observers",
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


def marked_pids(marker: str) -> list[int]:
    """Every live process whose environment carries ``MEMLITE_OBSERVER_ID=<marker>``."""
    needle = f"{MARKER_ENV}={marker}".encode()
    me = os.getpid()
    return [int(e) for e in os.listdir("/proc")
            if e.isdigit() and int(e) != me and _environ_has(int(e), needle)]


def kill_marked(marker: str) -> list[int]:
    """SIGKILL every process of the observer ``marker``; return the pids signalled."""
    killed = []
    for pid in marked_pids(marker):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
    return killed


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


def _alive(pid: object, start: object) -> bool:
    """The process ``pid`` exists and is the same one (same start time) as recorded."""
    return isinstance(pid, int) and pid > 0 and start_time(pid) == start is not None


def observer_pids(data_dir: Path) -> list[int]:
    """Pids of the registered observer launchers that are alive and verifiably ours."""
    return sorted(
        e["pid"] for e in read_entries(data_dir)
        if _alive(e.get("pid"), e.get("start"))
        and _environ_has(e["pid"], f"{MARKER_ENV}={e['marker']}".encode())
    )


def reap_stale_observers(data_dir: Path) -> list[int]:
    """Kill the observers whose owning worker is gone, and drop their entries.

    Called by the worker at start-up. An entry is stale when its owner (pid + start time)
    is no longer alive; entries of a live owner are left alone. Only processes carrying the
    entry's marker are killed: a reused pid is never signalled.

    Returns:
        The pids that were sent SIGKILL.
    """
    killed: list[int] = []
    for entry in read_entries(data_dir):
        if _alive(entry.get("owner"), entry.get("owner_start")):
            continue
        pids = kill_marked(entry["marker"])
        if pids:
            log.warning("killed %d stale observer process(es) %s", len(pids), pids)
        killed += pids
        with contextlib.suppress(OSError):
            os.unlink(entry["path"])
    return killed


def forget(data_dir: Path, marker: str) -> None:
    """Remove the entry of ``marker`` (after its processes are known dead)."""
    with contextlib.suppress(OSError):
        (registry_dir(data_dir) / f"{marker}.json").unlink()
