"""The reaper: a round every 60 virtual seconds, on a fixed schedule, exact."""

from __future__ import annotations

import trio
import trio.testing
from session_fakes import FakeSessions

from memlite.actors.core import Mailbox, spawn
from memlite.actors.reaper import PERIOD_SECONDS, Reaper, ReaperStatistics, ReapNow
from memlite.actors.session import Deliver, ListSessions, SessionSupervisor


async def test_a_round_every_period(autojump_clock, hang_guard):
    fake = FakeSessions(reaped=[[], ["s1"], []])
    async with spawn(fake.run) as sessions:
        reaper = Reaper(sessions, max_idle_seconds=lambda: 1800.0)
        async with spawn(reaper.run):
            await trio.sleep(200)
    assert PERIOD_SECONDS == 60
    assert fake.asked == [("reap", 60.0, 1800.0), ("reap", 120.0, 1800.0),
                          ("reap", 180.0, 1800.0)]
    assert reaper.statistics() == ReaperStatistics(rounds=3, reaped=1, failed=0)


async def test_the_threshold_is_read_at_every_round(autojump_clock, hang_guard):
    minutes = [30]
    fake = FakeSessions()
    async with spawn(fake.run) as sessions:
        async with spawn(Reaper(sessions, max_idle_seconds=lambda: minutes[0] * 60,
                                period=10).run):
            await trio.sleep(15)
            minutes[0] = 5
            await trio.sleep(10)
    assert fake.asked == [("reap", 10.0, 1800), ("reap", 20.0, 300)]


async def test_reap_now_does_not_move_the_schedule(autojump_clock, hang_guard):
    fake = FakeSessions(reaped=[["x"]])
    async with spawn(fake.run) as sessions:
        async with spawn(Reaper(sessions, max_idle_seconds=lambda: 5.0).run) as reaper:
            await trio.sleep(25)
            assert await reaper.ask(lambda reply: ReapNow(reply=reply), timeout=1) == ["x"]
            await trio.sleep(40)
    assert fake.asked == [("reap", 25.0, 5.0), ("reap", 60.0, 5.0)]


async def test_a_failed_round_is_logged_and_the_next_one_runs(autojump_clock, hang_guard,
                                                              caplog):
    fake = FakeSessions(broken=True)
    async with spawn(fake.run) as sessions:
        reaper = Reaper(sessions, max_idle_seconds=lambda: 1.0)
        async with spawn(reaper.run):
            await trio.sleep(130)
    assert [t for _, t, _ in fake.asked] == [60.0, 120.0]
    assert reaper.statistics() == ReaperStatistics(rounds=2, reaped=0, failed=2)
    assert "reaper: round failed" in caplog.text


async def test_a_stuck_supervisor_times_the_round_out(autojump_clock, hang_guard):
    async def stuck(*, task_status=trio.TASK_STATUS_IGNORED):
        with Mailbox("stuck", size=4) as mailbox:
            task_status.started(mailbox.ref)
            await trio.sleep_forever()

    async with spawn(stuck) as stuck_ref:
        reaper = Reaper(stuck_ref, max_idle_seconds=lambda: 1.0)
        async with spawn(reaper.run):
            await trio.sleep(60 + 5 + 1)
        assert reaper.statistics() == ReaperStatistics(rounds=1, reaped=0, failed=1)


async def test_idle_session_actors_are_stopped_on_the_first_round_past_the_threshold(
        autojump_clock):
    """With the real session supervisor: idle 30 min, rounds every minute."""
    with trio.fail_after(5000):  # hang guard: this test runs 2400 virtual seconds
        await _reap_real_sessions()


async def _reap_real_sessions() -> None:
    async with spawn(SessionSupervisor(stop_grace=1).run) as sessions:
        async with spawn(Reaper(sessions, max_idle_seconds=lambda: 30 * 60).run):
            await sessions.send(Deliver(session_id="quiet", event_id=1, event_name="Stop"))
            await trio.sleep(600)
            await sessions.send(Deliver(session_id="chatty", event_id=2, event_name="Stop"))
            await trio.sleep(1799 - 600)
            alive = await sessions.ask(lambda reply: ListSessions(reply=reply), timeout=1)
            assert [s.session_id for s in alive] == ["quiet", "chatty"]
            await trio.sleep(1)  # t = 1800: the round that finds "quiet" idle for 30 min
            await trio.testing.wait_all_tasks_blocked()
            alive = await sessions.ask(lambda reply: ListSessions(reply=reply), timeout=1)
            assert [s.session_id for s in alive] == ["chatty"]
            await trio.sleep(600)  # t = 2400: "chatty" idle since 600
            await trio.testing.wait_all_tasks_blocked()
            alive = await sessions.ask(lambda reply: ListSessions(reply=reply), timeout=1)
            assert alive == []
