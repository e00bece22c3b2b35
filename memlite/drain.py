"""The spool drain: ingest what hooks spooled while the worker was down, slow or failing.

The worker drains at start (after the database is open, before it serves), once more
right after it serves, and then every few seconds while it runs (``actors/spooler.py``),
so an event spooled while the worker was up but slow arrives within seconds, not at the
next start. Every spooled line goes through ``ingest_hook_event``, the same path as a
live request, so a line ingested twice (a drain interrupted by a crash, then run again)
is stored once.

Order: each hook is its own process, so one session's events are spread over many files;
all claimed lines are ingested oldest ``spooledAt`` first (ties in file and line order),
which keeps prompts numbered in the order they were typed. Each event is stored with its
own time (``spooledAt``, when the hook ran), not the drain's.

Outcomes per line (nothing one line does can stop the others; issue 13):

* ingested (or already stored): done;
* not a valid record, refused by validation (``InputError``), or failing in a way that
  is not the database's (a bug that this line triggers): quarantined with the reason in
  ``spool/quarantine.jsonl`` (see ``memlite.hooks.spool``), never silently dropped;
* the database is unavailable (``ActorError``, ``StorageError``): if the next line is
  stored, the failure was this line's own: it is retried at later drains and quarantined
  after ``MAX_ATTEMPTS`` such failures (counted in ``spool/attempts.json``). If the next
  line fails too, the database is down: the drain stops and the files stay claimed for
  the next drain. Nothing is lost, the worker still starts.

A file is removed only when every one of its lines was ingested or quarantined.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections import Counter
from functools import partial
from pathlib import Path

import attrs
import trio

from memlite.errors import ActorError, InputError, StorageError
from memlite.hooks import spool
from memlite.ingest import ingest_hook_event
from memlite.services import Services

__all__ = ["ATTEMPTS_FILE", "DrainReport", "MAX_ATTEMPTS", "drain_spool"]

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
ATTEMPTS_FILE = "attempts.json"


@attrs.frozen(kw_only=True)
class DrainReport:
    """What one drain did.

    Attributes:
        files: spool files claimed.
        ingested: lines stored now.
        duplicates: lines that were already stored (replays).
        rejected: lines quarantined (kept in ``spool/quarantine.jsonl`` with the reason).
        deferred: lines whose own storage failed; retried at the next drain.
        complete: False if it stopped early (the database failed); files were kept.
    """

    files: int = 0
    ingested: int = 0
    duplicates: int = 0
    rejected: int = 0
    deferred: int = 0
    complete: bool = True


def _claim_all(data_dir: Path) -> list[tuple[Path, list[spool.SpoolRecord | spool.BadLine]]]:
    return list(spool.iter_spool(data_dir))


def _attempts_path(data_dir: Path) -> Path:
    return spool.spool_dir(data_dir) / ATTEMPTS_FILE


def _load_attempts(data_dir: Path) -> dict[str, int]:
    try:
        value = json.loads(_attempts_path(data_dir).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): int(v) for k, v in value.items() if isinstance(v, int)} \
        if isinstance(value, dict) else {}


def _save_attempts(data_dir: Path, attempts: dict[str, int]) -> None:
    path = _attempts_path(data_dir)
    if not attempts:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        return
    tmp = path.with_name(f".{ATTEMPTS_FILE}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(attempts, f)
    os.replace(tmp, path)


def _key(entry: spool.SpoolRecord) -> str:
    return f"{entry.source}:{entry.line}"


async def drain_spool(services: Services) -> DrainReport:
    """Ingest every spooled line, then remove the files; see the module docstring."""
    data_dir = services.data_dir
    claimed = await trio.to_thread.run_sync(_claim_all, data_dir)
    if not claimed:
        return DrainReport()
    lines = [(path, entry) for path, entries in claimed for entry in entries]
    lines.sort(key=lambda item: (
        item[1].spooled_at or 0 if isinstance(item[1], spool.SpoolRecord) else 0,
        item[1].source, item[1].line,
    ))
    attempts = await trio.to_thread.run_sync(_load_attempts, data_dir)
    left = Counter(path for path, _ in lines)
    counts: Counter[str] = Counter()
    complete = True
    suspect: tuple[Path, spool.SpoolRecord, Exception] | None = None

    async def quarantine(entry: spool.SpoolRecord | spool.BadLine, reason: str) -> None:
        await trio.to_thread.run_sync(partial(spool.reject, data_dir, entry, reason))
        counts["rejected"] += 1

    for path, entry in lines:
        if isinstance(entry, spool.BadLine):
            await quarantine(entry, entry.reason)
            left[path] -= 1
            continue
        try:
            result = await ingest_hook_event(services, spool.storable(entry.payload),
                                             event_name=entry.event, require_session=False,
                                             at_ms=entry.spooled_at)
        except InputError as exc:
            log.warning("spool %s line %d quarantined: %s", entry.source, entry.line, exc)
            await quarantine(entry, f"{type(exc).__name__}: {exc}")
        except (ActorError, StorageError) as exc:
            if suspect is not None:  # two in a row: the database is down, not this line
                log.error("spool drain stopped, files kept for the next drain: %s", exc)
                complete = False
                break
            suspect = (path, entry, exc)
            continue  # the next line tells whether the database is down
        except Exception as exc:  # a bug this line triggers must not jam the spool
            log.exception("spool %s line %d quarantined after an internal error",
                          entry.source, entry.line)
            await quarantine(entry, f"internal error: {type(exc).__name__}: {exc}")
        else:
            counts["ingested" if result.created else "duplicates"] += 1
            attempts.pop(_key(entry), None)
            if suspect is not None:  # the database works: the failure was that line's
                s_path, s_entry, s_exc = suspect
                suspect = None
                tries = attempts.get(_key(s_entry), 0) + 1
                if tries >= MAX_ATTEMPTS:
                    attempts.pop(_key(s_entry), None)
                    await quarantine(s_entry, f"storing it failed {tries} times while the "
                                     f"database worked: {type(s_exc).__name__}: {s_exc}")
                    left[s_path] -= 1
                else:
                    attempts[_key(s_entry)] = tries
                    counts["deferred"] += 1
                    log.warning("spool %s line %d not stored (attempt %d of %d): %s",
                                s_entry.source, s_entry.line, tries, MAX_ATTEMPTS, s_exc)
        left[path] -= 1
    if suspect is not None and complete:  # the last line failed: nothing tells; retry
        complete = False
        log.error("spool drain: the last line was not stored (%s); kept for the next "
                  "drain", suspect[2])
    for path, _ in claimed:
        if left[path] == 0:
            await trio.to_thread.run_sync(spool.finish, path)
    live = {f"{path.name}:" for path, _ in claimed if left[path] > 0}
    attempts = {k: v for k, v in attempts.items() if k.rsplit(":", 1)[0] + ":" in live}
    await trio.to_thread.run_sync(_save_attempts, data_dir, attempts)
    report = DrainReport(files=len(claimed), complete=complete, **counts)
    log.info("spool drained: %d file(s), %d ingested, %d already stored, %d quarantined, "
             "%d deferred%s", report.files, report.ingested, report.duplicates,
             report.rejected, report.deferred, "" if complete else " (stopped early)")
    return report
