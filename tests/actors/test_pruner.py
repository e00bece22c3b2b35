"""The pruner: a round at start and every period, on virtual time; cutoff from settings."""

from __future__ import annotations

import trio

from memlite.actors.core import spawn
from memlite.actors.pruner import Pruner
from memlite.actors.storage import PruneEvents
from memlite.errors import AskTimeout
from memlite.storage.observing import DAY_MS


class FakeStorage:
    def __init__(self, fail_first: bool = False):
        self.asked: list[tuple[float, PruneEvents]] = []
        self.fail_first = fail_first

    async def ask(self, make, timeout):  # noqa: ASYNC109 - the ActorRef shape
        message = make(None)
        self.asked.append((trio.current_time(), message))
        if self.fail_first and len(self.asked) == 1:
            raise AskTimeout("busy")
        return 4


async def test_rounds_at_start_and_every_period_with_the_retention_cutoff(autojump_clock):
    storage = FakeStorage(fail_first=True)
    pruner = Pruner(storage, retention_days=lambda: 7, period=3600, now_ms=lambda: 30 * DAY_MS)
    async with spawn(pruner.run):
        await trio.sleep(7200.5)
    assert [t for t, _ in storage.asked] == [0, 3600, 7200]
    assert {m.older_than_ms for _, m in storage.asked} == {23 * DAY_MS}
    stats = pruner.statistics()
    assert (stats.rounds, stats.pruned, stats.failed) == (3, 8, 1)
