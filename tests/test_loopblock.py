"""The event-loop block harness (tests/loopblock.py) itself: it fails a blocking step,
passes the same work on a thread, and does not count the garbage collector."""

from __future__ import annotations

import time

import pytest
import trio
import trio.lowlevel
from loopblock import LIMIT_MS, guarded_run


def spin(ms: float) -> None:
    end = time.thread_time() + ms / 1000
    while time.thread_time() < end:
        pass


def test_a_step_that_computes_past_the_limit_fails():
    async def blocking() -> None:
        await trio.lowlevel.checkpoint()
        spin(LIMIT_MS * 2.5)

    with pytest.raises(AssertionError, match="event loop was blocked"):
        guarded_run("self-test")(blocking)


def test_the_same_work_on_a_thread_passes_and_sleeping_is_not_blocking():
    async def offloaded() -> None:
        await trio.to_thread.run_sync(spin, LIMIT_MS * 2.5)
        await trio.sleep(0.05)

    guarded_run("self-test")(offloaded)
