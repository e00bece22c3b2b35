"""Stored timestamps: wall-clock milliseconds since the epoch, and their ISO 8601 form.

Only stored timestamps use the wall clock; anything that measures durations or deadlines
uses ``trio.current_time()``. Both forms are UTC so rows written on different days,
machines or time zones sort and compare correctly.
"""

from __future__ import annotations

import functools
import time
from datetime import UTC, datetime

__all__ = ["now_ms", "to_iso"]


def now_ms() -> int:
    """Milliseconds since the Unix epoch, from the wall clock."""
    return time.time_ns() // 1_000_000


# Writes come in bursts within the same millisecond (a group commit stamps dozens of
# rows); formatting a datetime costs more than the insert's Python side, so remember a few.
@functools.lru_cache(maxsize=256)
def to_iso(epoch_ms: int) -> str:
    """``2026-11-30T04:31:00.123Z`` for an epoch in milliseconds."""
    moment = datetime.fromtimestamp(epoch_ms / 1000, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
