"""The hook's side of the spool: append one event durably (STANDARD LIBRARY ONLY, light).

Split from ``spool.py`` (the drain's side: claim, read, quarantine) because every hook
that finds the worker down imports this, and ``spool.py``'s logging, dataclasses and
pathlib cost a loaded hook start tens of milliseconds. The format is described in
``spool.py``; ``spool`` re-exports everything here.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time

from memlite.settings_spec import make_private_dir

__all__ = ["QUARANTINE_FILE", "SPOOL_DIR", "SPOOL_VERSION", "append", "is_spool_file"]

SPOOL_DIR = "spool"
SPOOL_VERSION = 1
QUARANTINE_FILE = "quarantine.jsonl"
_LEGACY_REJECTED = "rejected.jsonl"
_NOT_SPOOL = frozenset({QUARANTINE_FILE, _LEGACY_REJECTED})
_LIVE = ".jsonl"
_CLAIMED = ".draining"


def is_spool_file(name: str) -> bool:
    """Whether a file name in ``spool/`` holds events to drain (live or claimed): not the
    quarantine. Readers of the spool (the drain, a context snapshot) go by this."""
    return name.endswith((_LIVE, _CLAIMED)) and name not in _NOT_SPOOL


def ensure_dir(data_dir: str | os.PathLike[str]) -> str:
    """The spool directory, created 0700 together with the data directory (a hook may be
    the first to create it, before any worker ran)."""
    make_private_dir(data_dir)
    directory = os.path.join(os.fspath(data_dir), SPOOL_DIR)
    make_private_dir(directory)
    return directory


def _encode(record: dict[str, object]) -> bytes:
    """One JSON line; ASCII escapes when the text cannot be UTF-8 (lone surrogates)."""
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        data = json.dumps(record, ensure_ascii=True, separators=(",", ":")).encode("ascii")
    return data + b"\n"


def _fsync_dir(directory: str | os.PathLike[str]) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _append_line(path: str, data: bytes) -> bool:
    """Append under ``flock``; False if the file was renamed away (claimed) meanwhile."""
    existed = os.path.exists(path)
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            if os.stat(path).st_ino != os.fstat(fd).st_ino:
                return False
        except FileNotFoundError:
            return False
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            data = b"\n" + data  # an earlier writer died mid-line: do not glue onto it
        os.write(fd, data)  # one write: O_APPEND keeps it in one piece
        os.fsync(fd)
    finally:
        os.close(fd)  # releases the lock
    if not existed:
        _fsync_dir(os.path.dirname(path))
    return True


def append(data_dir: str | os.PathLike[str], event_name: str, payload: dict[str, object],
           *, now_ms: int | None = None) -> str:
    """Spool one hook event durably (written and fsync'd before it returns).

    Any content a hook read from JSON is written (lone surrogates as ASCII escapes).
    Returns the file it went to. Raises ``OSError`` (disk full, permissions) and
    ``TypeError``/``ValueError`` for a payload that is not JSON-serialisable.
    """
    spooled_at = int(time.time() * 1000) if now_ms is None else int(now_ms)
    record = {"v": SPOOL_VERSION, "event": event_name, "payload": dict(payload),
              "spooledAt": spooled_at}
    data = _encode(record)
    directory = ensure_dir(data_dir)
    day = time.strftime("%Y%m%d", time.gmtime(spooled_at / 1000))
    path = os.path.join(directory, f"{day}-{os.getpid()}{_LIVE}")
    for _ in range(5):
        if _append_line(path, data):
            return path
    raise OSError(f"cannot append to {path}: it keeps being claimed")
