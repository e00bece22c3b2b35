"""The hook spool: events written to disk while the worker is down, drained at its start.

Standard library only: the hook imports this module (DESIGN §5).

Format
    ``spool/`` in the data directory (0700) holds ``*.jsonl`` files (0600), one JSON
    object per line::

        {"v": 1, "event": "<hook_event_name>", "payload": {...hook stdin, redacted...},
         "spooledAt": <epoch ms>}

    A writer appends to ``<YYYYMMDD>-<pid>.jsonl`` (one file per writer process and day)
    with ``O_APPEND`` and one ``write`` per line, then fsyncs: a line is either whole or
    torn at the very end of a file, never interleaved with another.

Draining (the worker, before it serves)
    ``claim`` renames every ``*.jsonl`` to ``*.draining``: a hook appending at the same
    time either finishes first (the drain takes the file's ``flock``, which the writer
    holds while it writes) or notices its file was renamed and writes a new one. Files
    already ``*.draining`` are left over from a drain that crashed; they are claimed again
    and re-ingested, which is harmless because ingestion is idempotent. ``read_claimed``
    parses a claimed file into records and bad lines; the worker ingests the records,
    puts the bad lines and the records it cannot ingest in quarantine (``reject``: never
    silently dropped), then ``finish`` removes the file.

    A line without its newline (the writer died mid-write) or that is not a valid record
    is a bad line: it is logged and quarantined, and never stops the drain.

Quarantine
    ``spool/quarantine.jsonl`` (0600): one JSON object per quarantined line with its
    ``reason``, ``source`` file, ``line`` number, ``raw`` text and ``rejectedAt`` time.
    ``quarantined`` counts them for ``memlite doctor`` and the dashboard. (Older versions
    wrote ``rejected.jsonl``: it is read as quarantine too, and never claimed.)

Content
    Whatever an event holds, it is spooled: a payload that cannot be encoded as UTF-8 (a
    lone UTF-16 surrogate from a ``\\ud800`` escape) is written with ASCII escapes, which
    read back the same. ``storable`` turns such values (and NaN/Infinity) into what the
    database accepts, the same way for a live request and a spooled one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memlite.hooks import spool_write
from memlite.hooks.spool_write import (
    _CLAIMED,
    _LEGACY_REJECTED,
    _LIVE,
    _NOT_SPOOL,
    QUARANTINE_FILE,
    SPOOL_DIR,
    SPOOL_VERSION,
    _encode,
    _fsync_dir,
    is_spool_file,
)
from memlite.hooks.storable import storable

__all__ = [
    "BadLine",
    "QUARANTINE_FILE",
    "Quarantine",
    "REJECTED_FILE",
    "SPOOL_DIR",
    "SPOOL_VERSION",
    "SpoolRecord",
    "append",
    "claim",
    "finish",
    "is_spool_file",
    "iter_spool",
    "quarantined",
    "read_claimed",
    "reject",
    "requeue",
    "spool_dir",
    "storable",
]

log = logging.getLogger(__name__)

REJECTED_FILE = QUARANTINE_FILE  # the name callers used before the quarantine
_LOCK_WAIT_S = 2.0


@dataclass(frozen=True)
class SpoolRecord:
    """One spooled hook event, as the drain ingests it."""

    event: str
    payload: dict[str, Any]
    spooled_at: int | None
    source: str  # file name
    line: int  # 1-based
    raw: str


@dataclass(frozen=True)
class BadLine:
    """A line that is not a valid record (torn, not JSON, wrong shape)."""

    reason: str
    source: str
    line: int
    raw: str


def spool_dir(data_dir: str | os.PathLike[str]) -> Path:
    return Path(data_dir) / SPOOL_DIR


def _ensure_dir(data_dir: str | os.PathLike[str]) -> Path:
    return Path(spool_write.ensure_dir(data_dir))


def append(data_dir: str | os.PathLike[str], event_name: str, payload: Mapping[str, Any],
           *, now_ms: int | None = None) -> Path:
    """Spool one hook event durably: ``spool_write.append`` (the hook calls that directly)."""
    return Path(spool_write.append(data_dir, event_name, dict(payload), now_ms=now_ms))


def claim(data_dir: str | os.PathLike[str]) -> list[Path]:
    """Rename every spool file to ``*.draining`` and return all claimed files, oldest first.

    Includes files a previous, interrupted drain had claimed.
    """
    directory = spool_dir(data_dir)
    try:
        names = sorted(os.listdir(directory))
    except FileNotFoundError:
        return []
    claimed: list[Path] = []
    for name in names:
        path = directory / name
        if name in _NOT_SPOOL:
            continue
        if name.endswith(_LIVE):
            # A unique name: a writer may have reused a file name that an interrupted
            # drain still holds claimed, and rename would silently replace it.
            target = path.with_name(f"{name[: -len(_LIVE)]}.{time.time_ns()}{_CLAIMED}")
            while target.exists():
                target = path.with_name(f"{name[: -len(_LIVE)]}.{time.time_ns()}{_CLAIMED}")
            try:
                os.rename(path, target)
            except FileNotFoundError:
                continue
            claimed.append(target)
        elif name.endswith(_CLAIMED):
            claimed.append(path)
    return sorted(set(claimed), key=lambda p: (_mtime(p), p.name))


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def _parse(raw: bytes, source: str, number: int, *, complete: bool) -> SpoolRecord | BadLine:
    text = raw.decode("utf-8", "backslashreplace")
    if not complete:
        return BadLine("torn line (no newline at the end of the file)", source, number, text)
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError) as exc:  # RecursionError: nested too deeply
        return BadLine(f"not JSON: {exc}", source, number, text)
    if not isinstance(value, dict):
        return BadLine("not a JSON object", source, number, text)
    if value.get("v") != SPOOL_VERSION:
        return BadLine(f"unknown spool version {value.get('v')!r}", source, number, text)
    event, payload, at = value.get("event"), value.get("payload"), value.get("spooledAt")
    if not isinstance(event, str) or not event:
        return BadLine("'event' must be a non-empty string", source, number, text)
    if not isinstance(payload, dict):
        return BadLine("'payload' must be a JSON object", source, number, text)
    if at is not None and (isinstance(at, bool) or not isinstance(at, int)):
        return BadLine("'spooledAt' must be epoch milliseconds", source, number, text)
    return SpoolRecord(event, payload, at, source, number, text)


def _wait_for_writer(fd: int) -> None:
    """Wait (bounded) for a writer that still holds the file's lock to finish."""
    deadline = time.monotonic() + _LOCK_WAIT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                log.warning("spool file still locked after %.0f s; reading it anyway",
                            _LOCK_WAIT_S)
                return
            time.sleep(0.01)


def read_claimed(path: Path) -> list[SpoolRecord | BadLine]:
    """Parse a claimed file: one entry per line, in order."""
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        _wait_for_writer(fd)
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read()
    finally:
        os.close(fd)
    entries: list[SpoolRecord | BadLine] = []
    lines = data.split(b"\n")
    for number, raw in enumerate(lines, start=1):
        last = number == len(lines)
        if last and not raw:
            break  # the file ended with a newline, as it should
        if not last and not raw.strip():
            continue
        entry = _parse(raw, path.name, number, complete=not last)
        if isinstance(entry, BadLine):
            log.warning("spool %s line %d skipped: %s", path.name, number, entry.reason)
        entries.append(entry)
    return entries


def iter_spool(
    data_dir: str | os.PathLike[str],
) -> Iterator[tuple[Path, list[SpoolRecord | BadLine]]]:
    """Claim the spool and yield ``(file, entries)`` per claimed file.

    The caller ingests the entries, then calls ``finish(file)``; a file not finished
    stays claimed and is drained again next time.
    """
    for path in claim(data_dir):
        try:
            entries = read_claimed(path)
        except OSError as exc:
            log.warning("cannot read spool file %s: %s", path, exc)
            continue
        yield path, entries


def reject(data_dir: str | os.PathLike[str], entry: SpoolRecord | BadLine, reason: str,
           *, now_ms: int | None = None) -> None:
    """Quarantine a line the drain could not ingest: append it with its reason to
    ``spool/quarantine.jsonl`` (0600, fsync'd)."""
    record = {"v": SPOOL_VERSION, "rejectedAt": int(time.time() * 1000) if now_ms is None
              else now_ms, "reason": reason, "source": entry.source, "line": entry.line,
              "event": entry.event if isinstance(entry, SpoolRecord) else None,
              "raw": entry.raw}
    data = _encode(record)
    path = _ensure_dir(data_dir) / QUARANTINE_FILE
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # ``requeue`` rewrites the file under this lock
        os.write(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def finish(path: Path) -> None:
    """Remove a drained file (every line ingested or rejected)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    _fsync_dir(path.parent)


@dataclass(frozen=True)
class Quarantine:
    """What the quarantine holds: ``count`` lines, the newest ``latest`` (newest first,
    each ``{"reason", "source", "line", "event", "rejectedAt"}``), and its files."""

    count: int
    latest: tuple[dict[str, Any], ...]
    files: tuple[str, ...]


_SUMMARY_KEYS = ("reason", "source", "line", "event", "rejectedAt")
_read_cache: dict[str, tuple[tuple[int, int, int], list[dict[str, Any]]]] = {}


def _summaries(path: Path) -> list[dict[str, Any]] | None:
    """The quarantine file's lines without their ``raw`` text (None if it is missing).

    Cached by inode, size and mtime: the dashboard asks on every page, and a quarantined
    line keeps its payload (up to 1 MiB)."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    stamp = (info.st_ino, info.st_size, info.st_mtime_ns)
    cached = _read_cache.get(str(path))
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        data = path.read_bytes()
    except OSError:
        return None
    entries = []
    for raw in data.splitlines():
        try:
            value = json.loads(raw)
        except ValueError:
            value = {"reason": "unreadable quarantine line"}
        if isinstance(value, dict):
            entries.append({key: value.get(key) for key in _SUMMARY_KEYS})
    _read_cache[str(path)] = (stamp, entries)
    return entries


def quarantined(data_dir: str | os.PathLike[str], *, latest: int = 5) -> Quarantine:
    """Count the quarantined lines and return the newest ``latest`` (without payloads)."""
    entries: list[dict[str, Any]] = []
    files = []
    for name in (_LEGACY_REJECTED, QUARANTINE_FILE):
        path = spool_dir(data_dir) / name
        found = _summaries(path)
        if found is None:
            continue
        files.append(str(path))
        entries.extend(found)
    newest = sorted(entries, key=lambda e: e.get("rejectedAt") or 0, reverse=True)[:latest]
    return Quarantine(count=len(entries), latest=tuple(newest), files=tuple(files))


def requeue(data_dir: str | os.PathLike[str], *, now_ms: int | None = None) -> tuple[int, int]:
    """Put quarantined records back in the spool, for the next drain to try again (after
    an upgrade that fixed what refused them). Returns ``(requeued, kept)``.

    Only lines that are whole spool records go back; the rest (torn or garbled lines)
    stay in quarantine. The quarantine file is rewritten in place under its lock, after
    the requeued lines are fsync'd in the spool: a crash in between only duplicates
    lines, which ingestion stores once.
    """
    count = 0
    for name in (_LEGACY_REJECTED, QUARANTINE_FILE):
        path = spool_dir(data_dir) / name
        try:
            fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            with os.fdopen(os.dup(fd), "rb") as f:
                lines = f.read().splitlines()
            kept, requeued = [], []
            for line in lines:
                try:
                    raw = json.loads(line).get("raw")
                except (ValueError, AttributeError):
                    raw = None
                entry = _parse(raw.encode("utf-8", "surrogatepass"), name, 0, complete=True) \
                    if isinstance(raw, str) else None
                if isinstance(entry, SpoolRecord):
                    requeued.append(_encode({"v": SPOOL_VERSION, "event": entry.event,
                                             "payload": entry.payload,
                                             "spooledAt": entry.spooled_at}))
                else:
                    kept.append(line + b"\n")
            if len(kept) == len(lines):
                continue
            _write_requeued(data_dir, requeued, now_ms)
            count += len(requeued)
            os.ftruncate(fd, 0)
            os.pwrite(fd, b"".join(kept), 0)
            os.fsync(fd)
        finally:
            os.close(fd)
    return count, quarantined(data_dir).count


def _write_requeued(data_dir: str | os.PathLike[str], lines: list[bytes],
                    now_ms: int | None) -> None:
    stamp = time.time_ns() if now_ms is None else now_ms
    path = _ensure_dir(data_dir) / f"requeued-{stamp}-{os.getpid()}{_LIVE}"
    while path.exists():
        stamp += 1
        path = path.with_name(f"requeued-{stamp}-{os.getpid()}{_LIVE}")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, b"".join(lines))
        os.fsync(fd)
    finally:
        os.close(fd)
    _fsync_dir(path.parent)
