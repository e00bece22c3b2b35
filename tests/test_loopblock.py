"""The event-loop block harness (tests/loopblock.py) itself: it fails a blocking step,
passes the same work on a thread, and does not count the garbage collector."""

from __future__ import annotations

import functools
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


def test_an_exempt_task_is_recorded_but_does_not_fail():
    """``EXEMPT``: start-once work (the HTTP tests' app) stalls nobody; another task's
    step of the same length still fails."""
    from loopblock import EXEMPT

    name = next(iter(EXEMPT))

    async def setup_then_block(block: bool) -> None:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(spin_async, name=name)
        if block:
            spin(LIMIT_MS * 2.5)

    async def spin_async() -> None:
        spin(LIMIT_MS * 2.5)

    guarded_run("self-test")(functools.partial(setup_then_block, False))
    with pytest.raises(AssertionError, match="event loop was blocked"):
        guarded_run("self-test")(functools.partial(setup_then_block, True))
