"""Idle shutdown on virtual time: the exact moment ``shutdown`` is set, and what resets it."""

from __future__ import annotations

import trio
import trio.testing
from session_fakes import FakeSessions

from memlite.actors.core import spawn
from memlite.actors.idle import GetIdleStatus, IdleShutdown, IdleStatus, Touch
from memlite.actors.session import Deliver, EndSession, SessionCount, SessionSupervisor
from memlite.services import Activity

IDLE = 30 * 60.0


async def run_until_shutdown(sessions, activity: Activity, *, script=None,
                             idle=lambda: IDLE) -> tuple[float, IdleShutdown]:
    """Run the idle actor (and ``script(ref)`` beside it); return when shutdown was set."""
    shutdown = trio.Event()
    actor = IdleShutdown(sessions, activity, shutdown, idle_seconds=idle)
    with trio.fail_after(100_000):  # hang guard, in virtual seconds
        return await _run(actor, shutdown, script)


async def _run(actor: IdleShutdown, shutdown: trio.Event, script) -> tuple[float, IdleShutdown]:
    async with trio.open_nursery() as nursery:
        ref = await nursery.start(actor.run)
        if script is not None:
            nursery.start_soon(script, ref)
        await shutdown.wait()
        at = trio.current_time()
        nursery.cancel_scope.cancel()
    return at, actor


async def test_shutdown_after_the_idle_time_with_nothing_going_on(autojump_clock):
    fake = FakeSessions()
    async with spawn(fake.run) as sessions:
        at, _ = await run_until_shutdown(sessions, Activity())
    assert at == IDLE
    assert fake.asked == [("count", IDLE, None)]


async def test_a_request_pushes_it_back(autojump_clock):
    activity = Activity()

    async def requests(ref):
        await trio.sleep(100)
        activity.touch()
        await trio.sleep(1000)
        activity.touch()

    async with spawn(FakeSessions().run) as sessions:
        at, _ = await run_until_shutdown(sessions, activity, script=requests)
    assert at == 1100 + IDLE


async def test_live_sessions_keep_it_up_and_it_counts_from_when_they_went(autojump_clock):
    fake = FakeSessions(count=SessionCount(active=1, ending=0, empty_since=None))

    async def sessions_end(ref):
        await trio.sleep(2000)
        fake.count = SessionCount(active=0, ending=1, empty_since=None)
        await trio.sleep(30)
        fake.count = SessionCount(active=0, ending=0, empty_since=2030.0)

    async with spawn(fake.run) as sessions:
        at, _ = await run_until_shutdown(sessions, Activity(), script=sessions_end)
    # Checks at 1800, then every 60 s while busy (1860, ..., 2040), then 2030 + 1800.
    assert [t for _, t, _ in fake.asked] == [1800.0 + 60 * i for i in range(5)] + [3830.0]
    assert at == 2030 + IDLE


async def test_touch_moves_the_deadline_of_the_entered_timer(autojump_clock):
    seen: list[IdleStatus] = []
    fake = FakeSessions()

    async def touch(ref):
        await trio.sleep(500)
        await ref.send(Touch())
        seen.append(await ref.ask(lambda reply: GetIdleStatus(reply=reply), timeout=1))

    async with spawn(fake.run) as sessions:
        at, _ = await run_until_shutdown(sessions, Activity(), script=touch)
    assert seen == [IdleStatus(deadline=500 + IDLE, quiet_since=500.0, idle_seconds=IDLE)]
    assert at == 500 + IDLE
    assert fake.asked == [("count", 500 + IDLE, None)]  # no early wake-up at 1800


async def test_an_unreachable_supervisor_never_shuts_down_by_mistake(autojump_clock, caplog):
    fake = FakeSessions(broken=True)

    async def repair(ref):
        await trio.sleep(2000)
        fake.broken = False

    async with spawn(fake.run) as sessions:
        at, _ = await run_until_shutdown(sessions, Activity(), script=repair)
    assert [t for _, t, _ in fake.asked] == [1800.0, 1860.0, 1920.0, 1980.0, 2040.0]
    assert at == 2040.0  # quiet since its start: no request, no session ever
    assert "cannot count sessions" in caplog.text


async def test_the_threshold_is_read_at_each_check(autojump_clock):
    minutes = [30]

    async def change(ref):
        await trio.sleep(10)
        minutes[0] = 60

    async with spawn(FakeSessions().run) as sessions:
        at, _ = await run_until_shutdown(sessions, Activity(), script=change,
                                         idle=lambda: minutes[0] * 60)
    assert at == 3600.0  # woke at 1800, saw the new threshold, waited until 3600


async def test_a_closed_mailbox_ends_it_without_shutdown(autojump_clock, hang_guard):
    shutdown = trio.Event()
    async with spawn(FakeSessions().run) as sessions:
        async with trio.open_nursery() as nursery:
            ref = await nursery.start(IdleShutdown(sessions, Activity(), shutdown,
                                                   idle_seconds=lambda: IDLE).run)
            await trio.sleep(10)
            ref._seal()
    assert trio.current_time() == 10.0
    assert not shutdown.is_set()


async def test_with_the_real_session_supervisor(autojump_clock):
    """A session from t=100 to its end at t=700: shutdown exactly IDLE after the end."""
    async with spawn(SessionSupervisor(stop_grace=1).run) as sessions:

        async def session(ref):
            await trio.sleep(100)
            await sessions.send(Deliver(session_id="s", event_id=1, event_name="Stop"))
            await trio.sleep(600)
            await sessions.send(EndSession(session_id="s", reason="other"))

        at, _ = await run_until_shutdown(sessions, Activity(), script=session)
    assert at == 700 + IDLE
