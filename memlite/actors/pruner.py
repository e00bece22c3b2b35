"""The pruner: bounded disk. Periodically drops the raw payloads of old finished events.

Every ``period`` seconds (default 1 h, and once at start) it asks the storage actor to
``PruneEvents`` older than EVENT_RETENTION_DAYS: the payload of each ``done`` or
``skipped`` event last changed before then becomes ``'{}'`` (``pruned_at_epoch`` set), and
``PRAGMA incremental_vacuum`` gives the freed pages back to the file system. Observations,
their links to events, and pending events are never touched.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import attrs
import trio

from memlite.actors.core import ActorRef, Mailbox
from memlite.actors.storage import PruneEvents
from memlite.errors import MemliteError
from memlite.storage.observing import DAY_MS

__all__ = ["PERIOD_SECONDS", "Pruner", "PrunerStatistics"]

log = logging.getLogger(__name__)

PERIOD_SECONDS = 3600.0
ASK_TIMEOUT = 60.0


@attrs.frozen(kw_only=True)
class PrunerStatistics:
    """Rounds run, events pruned in all, rounds that failed."""

    rounds: int
    pruned: int
    failed: int


class Pruner:
    """Prunes old event payloads through the storage actor.

    Args:
        storage: the storage actor.
        retention_days: read at every round (EVENT_RETENTION_DAYS).
        period: seconds between rounds.
        now_ms: the wall clock in epoch ms (stored timestamps are wall clock).

    Mailbox:
        Size 1 and unused (a ref for the supervisor); the work is timer driven.
    Lifecycle:
        Reports its ref, runs a round at once, then one every ``period`` seconds; a
        closed mailbox (the supervisor's graceful stop) ends it between rounds.
    Failure:
        A failed round (storage busy, restarting) is logged and counted; the next round
        tries again. Only a bug ends the actor (its supervisor restarts it).
    Timeouts:
        Each round's ask has ``ASK_TIMEOUT``; between rounds it sleeps on Trio time.
    """

    def __init__(self, storage: ActorRef, *, retention_days: Callable[[], int],
                 period: float = PERIOD_SECONDS,
                 now_ms: Callable[[], int] = lambda: int(time.time() * 1000)) -> None:
        self.storage = storage
        self.retention_days = retention_days
        self.period = period
        self.now_ms = now_ms
        self.rounds = self.pruned = self.failed = 0

    def statistics(self) -> PrunerStatistics:
        return PrunerStatistics(rounds=self.rounds, pruned=self.pruned, failed=self.failed)

    async def run(
        self, *, task_status: trio.TaskStatus[ActorRef] = trio.TASK_STATUS_IGNORED
    ) -> None:
        with Mailbox("pruner", size=1) as mailbox:
            task_status.started(mailbox.ref)
            while True:
                await self.prune_once()
                with trio.move_on_after(self.period):
                    async for _ in mailbox:  # nothing is sent to it; a close stops it
                        pass
                    return

    async def prune_once(self) -> int:
        """One round; returns how many payloads were pruned (0 on failure)."""
        self.rounds += 1
        cutoff = self.now_ms() - self.retention_days() * DAY_MS
        try:
            pruned: int = await self.storage.ask(
                lambda reply: PruneEvents(older_than_ms=cutoff, reply=reply),
                timeout=ASK_TIMEOUT)
        except MemliteError as exc:
            self.failed += 1
            log.warning("pruning event payloads failed (next round retries): %s", exc)
            return 0
        self.pruned += pruned
        if pruned:
            log.info("pruned the payloads of %d events older than %d days", pruned,
                     self.retention_days())
        return int(pruned)
