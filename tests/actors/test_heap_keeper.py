"""The heap keeper on virtual time: one trim after each burst of requests, none meanwhile."""

from __future__ import annotations

import threading

import pytest
import trio
import trio.testing

from memlite.actors.core import spawn
from memlite.actors.heap_keeper import (
    IDLE_POLL_SECONDS,
    QUIET_SECONDS,
    GetHeapStatus,
    HeapKeeper,
    HeapStatus,
)
from memlite.heap import release_free_memory
from memlite.services import Activity


class Trims:
    """A release that counts its calls and the thread each ran on."""

    def __init__(self, fail: bool = False) -> None:
        self.calls = 0
        self.threads: set[int] = set()
        self.fail = fail

    def __call__(self) -> None:
        self.calls += 1
        self.threads.add(threading.get_ident())
        if self.fail:
            raise OSError("no trim today")


async def inline(fn, **_):
    """Runs the trim on the event loop: on virtual time a thread lets the clock jump."""
    return fn()


def keeper(activity: Activity, trims: Trims) -> HeapKeeper:
    return HeapKeeper(activity, release=trims, offload=inline)


async def status(ref) -> HeapStatus:
    return await ref.ask(lambda reply: GetHeapStatus(reply=reply), timeout=5)


async def test_nothing_is_trimmed_while_no_request_came(autojump_clock):
    trims = Trims()
    async with spawn(keeper(Activity(), trims).run):
        await trio.sleep(3600)
    assert trims.calls == 0


async def test_one_trim_quiet_seconds_after_the_last_request_of_a_burst(autojump_clock):
    activity, trims = Activity(), Trims()
    async with spawn(keeper(activity, trims).run) as ref:
        for _ in range(20):  # a burst: a request every 0.5 s for 10 s
            activity.touch()
            await trio.sleep(0.5)
        last = activity.last_request_at
        await trio.sleep(last + QUIET_SECONDS - 0.1 - trio.current_time())
        assert trims.calls == 0  # not yet quiet long enough
        await trio.sleep(IDLE_POLL_SECONDS + 0.2)
        assert trims.calls == 1
        await trio.sleep(600)  # quiet goes on: nothing new to hand back
        assert trims.calls == 1
        assert (await status(ref)) == HeapStatus(releases=1, failures=0,
                                                 requests_at_release=20)


async def test_steady_requests_closer_than_quiet_never_trim_until_they_stop(autojump_clock):
    activity, trims = Activity(), Trims()
    async with spawn(keeper(activity, trims).run):
        for _ in range(100):  # one request every 4 s for 400 s
            activity.touch()
            await trio.sleep(QUIET_SECONDS - 1)
        assert trims.calls == 0
        await trio.sleep(1 + IDLE_POLL_SECONDS + 0.2)
        assert trims.calls == 1


async def test_each_burst_gets_its_own_trim(autojump_clock):
    activity, trims = Activity(), Trims()
    async with spawn(keeper(activity, trims).run):
        for burst in range(3):
            activity.touch()
            await trio.sleep(100)
            assert trims.calls == burst + 1


async def test_a_failing_trim_is_counted_and_the_keeper_goes_on(autojump_clock):
    activity, trims = Activity(), Trims(fail=True)
    async with spawn(keeper(activity, trims).run) as ref:
        activity.touch()
        await trio.sleep(100)
        activity.touch()
        await trio.sleep(100)
        assert trims.calls == 2
        assert (await status(ref)) == HeapStatus(releases=0, failures=2,
                                                 requests_at_release=2)


async def test_the_real_release_runs_on_a_thread():
    """Real time, the process's own allocator call (``memlite.heap``) and the default
    offload: the trim runs on a thread, not the event loop's, and returns."""
    activity, seen, done = Activity(), Trims(), trio.Event()

    def release() -> None:
        seen()
        release_free_memory()
        trio.from_thread.run_sync(done.set)

    async with spawn(HeapKeeper(activity, release=release, quiet=0.05, idle_poll=0.05).run
                     ) as ref:
        activity.touch()
        with trio.fail_after(30):  # generous: a loaded machine
            await done.wait()
        found = await status(ref)
    assert found == HeapStatus(releases=1, failures=0, requests_at_release=1)
    assert threading.get_ident() not in seen.threads


@pytest.mark.parametrize("quiet, idle_poll", [(0, 1), (1, 0), (-1, 1)])
def test_bad_timings_are_refused(quiet, idle_poll):
    with pytest.raises(ValueError, match="positive"):
        HeapKeeper(Activity(), quiet=quiet, idle_poll=idle_poll)
