"""The spool drain: ingest what hooks spooled while the worker was down.

The worker runs ``drain_spool`` after the database is open and before it serves (and once
more right after, for events spooled while it was starting). Every spooled line goes
through ``ingest_hook_event``, the same path as a live request, so a line ingested twice
(a drain interrupted by a crash, then run again) is stored once.

Order: each hook is its own process, so one session's events are spread over many files;
all claimed lines are ingested oldest ``spooledAt`` first (ties in file and line order),
which keeps prompts numbered in the order they were typed.

Outcomes per line:

* ingested (or already stored): done;
* not a valid record, or refused by validation (``InputError``): appended to
  ``spool/rejected.jsonl`` with the reason, never silently dropped;
* the database is unavailable (``ActorError``, ``StorageError``): the drain stops and the
  files stay claimed for the next start. Nothing is lost, the worker still starts.

A file is removed only when every one of its lines was ingested or rejected.
"""

from __future__ import annotations

import logging
from collections import Counter
from functools import partial
from pathlib import Path

import attrs
import trio

from memlite.errors import ActorError, InputError, StorageError
from memlite.hooks import spool
from memlite.ingest import ingest_hook_event
from memlite.services import Services

__all__ = ["DrainReport", "drain_spool"]

log = logging.getLogger(__name__)


@attrs.frozen(kw_only=True)
class DrainReport:
    """What one drain did.

    Attributes:
        files: spool files claimed.
        ingested: lines stored now.
        duplicates: lines that were already stored (replays).
        rejected: lines kept in ``rejected.jsonl``.
        complete: False if it stopped early (the database failed); files were kept.
    """

    files: int = 0
    ingested: int = 0
    duplicates: int = 0
    rejected: int = 0
    complete: bool = True


def _claim_all(data_dir: Path) -> list[tuple[Path, list[spool.SpoolRecord | spool.BadLine]]]:
    return list(spool.iter_spool(data_dir))


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
    left = Counter(path for path, _ in lines)
    counts: Counter[str] = Counter()
    complete = True
    for path, entry in lines:
        if isinstance(entry, spool.BadLine):
            await trio.to_thread.run_sync(spool.reject, data_dir, entry, entry.reason)
            counts["rejected"] += 1
        else:
            try:
                result = await ingest_hook_event(services, entry.payload, event_name=entry.event,
                                                 require_session=False,
                                                 at_ms=entry.spooled_at)
            except InputError as exc:
                log.warning("spool %s line %d rejected: %s", entry.source, entry.line, exc)
                await trio.to_thread.run_sync(
                    partial(spool.reject, data_dir, entry, f"{type(exc).__name__}: {exc}"))
                counts["rejected"] += 1
            except (ActorError, StorageError) as exc:
                log.error("spool drain stopped, files kept for the next start: %s", exc)
                complete = False
                break
            else:
                counts["ingested" if result.created else "duplicates"] += 1
        left[path] -= 1
    for path, _ in claimed:
        if left[path] == 0:
            await trio.to_thread.run_sync(spool.finish, path)
    report = DrainReport(files=len(claimed), complete=complete, **counts)
    log.info("spool drained: %d file(s), %d ingested, %d already stored, %d rejected%s",
             report.files, report.ingested, report.duplicates, report.rejected,
             "" if complete else " (stopped early)")
    return report
