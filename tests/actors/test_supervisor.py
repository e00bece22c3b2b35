"""Supervision: restart policies, intensity, ordered start, graceful-then-hard stop.

Children are scripted fakes (``supervisor_fakes``): incarnation ``n`` of a
:class:`Scripted` child follows ``steps[n-1]`` (then serves forever), and all its timing
is virtual sleeps inside the fake. Tests wait on the fake's own signals, never on wall
time, and compare ``sup.events`` as whole lists with exact virtual times. Bounded events,
optional children and children added while it runs: ``test_supervisor_children.py``.
"""

from __future__ import annotations

import logging

import pytest
import trio
import trio.testing
from supervisor_fakes import (
    Boom,
    Crash,
    Deaf,
    Exit,
    FailStart,
    Linger,
    Ping,
    Scripted,
    Serve,
    crashed,
)

from memlite.actors.core import (
    ChildCrashed,
    ChildExited,
    ChildRestarted,
    ChildSpec,
    ChildStarted,
    ChildStopped,
    MailboxStatistics,
    Restart,
    Supervisor,
    SupervisorEscalated,
    spawn,
)
from memlite.errors import ActorDied, RestartIntensityExceeded


async def test_permanent_child_is_restarted_after_a_crash_and_after_exiting(
    autojump_clock, hang_guard
):
    a = Scripted("a", Crash(after=1), Exit(after=2))
    async with spawn(Supervisor([a.spec()]).run) as sup:
        await a.wait_for("started", 3)
        assert trio.current_time() == 3
        assert await sup.ref("a").ask(Ping, timeout=1) == "a#3"
        await sup.stop()
    assert sup.events == [
        ChildStarted(name="a", attempt=1, at=0),
        crashed("a", at=1, attempt=1),
        ChildRestarted(name="a", attempt=2, at=1),
        ChildStarted(name="a", attempt=2, at=1),
        ChildExited(name="a", at=3),
        ChildRestarted(name="a", attempt=3, at=3),
        ChildStarted(name="a", attempt=3, at=3),
        ChildStopped(name="a", at=3, how="graceful"),
    ]


async def test_transient_child_is_restarted_after_a_crash_only(autojump_clock, hang_guard):
    done = Scripted("done", Exit(after=1))
    flaky = Scripted("flaky", Crash(after=2))
    specs = [done.spec(restart=Restart.TRANSIENT), flaky.spec(restart=Restart.TRANSIENT)]
    async with spawn(Supervisor(specs).run) as sup:
        await flaky.wait_for("started", 2)
        await trio.testing.wait_all_tasks_blocked()
        with pytest.raises(ActorDied):
            await sup.ref("done").send(Boom(reply=None))
        await sup.stop()
    assert done.attempts == 1
    assert sup.events == [
        ChildStarted(name="done", attempt=1, at=0),
        ChildStarted(name="flaky", attempt=1, at=0),
        ChildExited(name="done", at=1),
        crashed("flaky", at=2, attempt=1),
        ChildRestarted(name="flaky", attempt=2, at=2),
        ChildStarted(name="flaky", attempt=2, at=2),
        ChildStopped(name="flaky", at=2, how="graceful"),
    ]


@pytest.mark.parametrize(
    ("step", "ending"),
    [(Crash(after=1), crashed("t", at=1, attempt=1)), (Exit(after=1), ChildExited(name="t", at=1))],
    ids=["crash", "exit"],
)
async def test_temporary_child_is_never_restarted(autojump_clock, hang_guard, step, ending):
    t = Scripted("t", step)
    async with spawn(Supervisor([t.spec(restart=Restart.TEMPORARY)]).run) as sup:
        await t.wait_for("ended", 1)
        await trio.testing.wait_all_tasks_blocked()
        ref = sup.ref("t")
        with pytest.raises(ActorDied):
            await ref.ask(Ping, timeout=5)
        with pytest.raises(ActorDied):
            await ref.send(Boom(reply=None))
        await sup.stop()
    assert t.attempts == 1
    assert sup.events == [ChildStarted(name="t", attempt=1, at=0), ending]


async def test_too_many_restarts_stop_the_rest_in_reverse_and_escalate(autojump_clock, hang_guard):
    a, b, c = Scripted("a"), Scripted("b", *[Crash(after=1)] * 5), Scripted("c", Serve(cleanup=0.5))
    sup = Supervisor([a.spec(), b.spec(), c.spec()], intensity=2, period=5)
    with pytest.raises(RestartIntensityExceeded) as raised:
        await sup.run()
    assert trio.current_time() == 3.5
    error = (
        "supervisor 'root' escalates: restarting 'b' would make 3 restarts within 5s (intensity 2)"
    )
    assert str(raised.value) == error
    assert sup.error is raised.value
    assert isinstance(raised.value.__cause__, ValueError)
    assert sup.events == [
        ChildStarted(name="a", attempt=1, at=0),
        ChildStarted(name="b", attempt=1, at=0),
        ChildStarted(name="c", attempt=1, at=0),
        crashed("b", at=1, attempt=1),
        ChildRestarted(name="b", attempt=2, at=1),
        ChildStarted(name="b", attempt=2, at=1),
        crashed("b", at=2, attempt=2),
        ChildRestarted(name="b", attempt=3, at=2),
        ChildStarted(name="b", attempt=3, at=2),
        crashed("b", at=3, attempt=3),
        SupervisorEscalated(name="root", at=3, error=error),
        ChildStopped(name="c", at=3.5, how="graceful"),
        ChildStopped(name="a", at=3.5, how="graceful"),
    ]


@pytest.mark.parametrize("spacing", [4.0, 4.5], ids=["exactly-period", "beyond-period"])
async def test_restarts_spaced_a_period_apart_never_escalate(autojump_clock, hang_guard, spacing):
    a = Scripted("a", *[Crash(after=spacing)] * 6)
    async with spawn(Supervisor([a.spec()], intensity=1, period=4).run) as sup:
        await a.wait_for("started", 7)
        assert trio.current_time() == 6 * spacing
        await sup.stop()
    restarts = [event.at for event in sup.events if isinstance(event, ChildRestarted)]
    assert restarts == [spacing * n for n in range(1, 7)]
    assert not any(isinstance(event, SupervisorEscalated) for event in sup.events)


async def test_restarts_closer_than_period_escalate(autojump_clock, hang_guard):
    a = Scripted("a", *[Crash(after=3.5)] * 6)
    sup = Supervisor([a.spec()], intensity=1, period=4)
    with pytest.raises(RestartIntensityExceeded):
        await sup.run()
    assert trio.current_time() == 7
    assert [type(event) for event in sup.events][-2:] == [ChildCrashed, SupervisorEscalated]


async def test_graceful_stop_lets_the_child_finish_within_its_grace(autojump_clock, hang_guard):
    a = Scripted("a", Serve(cleanup=2))
    async with spawn(Supervisor([a.spec(shutdown=5)]).run) as sup:
        await sup.stop()
        assert trio.current_time() == 2
    assert a.stop_deadline == 5  # the child can see its grace as its deadline
    assert sup.events == [
        ChildStarted(name="a", attempt=1, at=0),
        ChildStopped(name="a", at=2, how="graceful"),
    ]


@pytest.mark.parametrize("step", [Deaf(), Serve(cleanup=10)], ids=["ignores-close", "too-slow"])
async def test_hard_stop_cancels_the_child_when_its_grace_ends(autojump_clock, hang_guard, step):
    a, b = Scripted("a", step), Scripted("b", Serve(cleanup=1.5))
    async with spawn(Supervisor([a.spec(shutdown=3), b.spec()]).run) as sup:
        await sup.stop()  # b stops first, by itself at 1.5; only then a's 3 s grace starts
        assert trio.current_time() == 4.5
    assert sup.events[2:] == [
        ChildStopped(name="b", at=1.5, how="graceful"),
        ChildStopped(name="a", at=4.5, how="cancelled"),
    ]


async def test_children_stop_one_by_one_in_reverse_order(autojump_clock, hang_guard):
    a, b, c = Scripted("a", Serve(cleanup=1)), Scripted("b", Deaf()), Scripted("c")
    sup = Supervisor([a.spec(), b.spec(shutdown=2), c.spec()])
    async with spawn(sup.run):
        await sup.stop()
    assert sup.events == [
        ChildStarted(name="a", attempt=1, at=0),
        ChildStarted(name="b", attempt=1, at=0),
        ChildStarted(name="c", attempt=1, at=0),
        ChildStopped(name="c", at=0, how="graceful"),
        ChildStopped(name="b", at=2, how="cancelled"),
        ChildStopped(name="a", at=3, how="graceful"),
    ]


async def test_children_start_in_order(autojump_clock, hang_guard):
    a, b = Scripted("a", Serve(start_delay=3)), Scripted("b")
    async with spawn(Supervisor([a.spec(), b.spec()]).run) as sup:
        assert trio.current_time() == 3  # run() reports started once every child is up
        await sup.stop()
    assert a.history[:2] == [("entered", 1, 0), ("started", 1, 3)]
    assert b.history[0] == ("entered", 1, 3)  # not entered before a was up
    assert sup.events[:2] == [
        ChildStarted(name="a", attempt=1, at=3),
        ChildStarted(name="b", attempt=1, at=3),
    ]


async def test_stable_ref_follows_the_child_across_a_restart(autojump_clock, hang_guard):
    a = Scripted("a", Serve(), Serve(start_delay=2))
    async with spawn(Supervisor([a.spec()]).run) as sup:
        ref = sup.ref("a")
        assert ref is sup.ref("a")
        assert ref.name == "a"
        assert await ref.ask(Ping, timeout=1) == "a#1"
        with pytest.raises(ActorDied):
            await ref.ask(Boom, timeout=5)  # crashes while holding it
        assert trio.current_time() == 0
        await trio.testing.wait_all_tasks_blocked()  # attempt 2 is starting, slowly
        with pytest.raises(ActorDied):
            await ref.ask(Ping, timeout=1)  # down: ask fails fast
        with pytest.raises(ActorDied):
            ref.send_nowait(Boom(reply=None))
        reply, answers = trio.open_memory_channel(1)
        await ref.send(Ping(reply=reply))  # down: send waits for the next incarnation
        assert trio.current_time() == 2
        assert await answers.receive() == "a#2"
        assert ref.statistics() == MailboxStatistics(name="a", queued=0, size=4, blocked_senders=0)
        await sup.stop()


async def test_stable_send_retries_on_the_next_incarnation(autojump_clock, hang_guard):
    a = Scripted("a", Linger(after=1))
    async with spawn(Supervisor([a.spec()]).run) as sup:
        await trio.testing.wait_all_tasks_blocked()  # attempt 1 closed its mailbox, still runs
        reply, answers = trio.open_memory_channel(1)
        await sup.ref("a").send(Ping(reply=reply))
        assert trio.current_time() == 1
        assert await answers.receive() == "a#2"
        await sup.stop()


async def test_ref_raises_key_error_for_unknown_and_refless_children(autojump_clock, hang_guard):
    async def plain(*, task_status=trio.TASK_STATUS_IGNORED):
        task_status.started()
        await trio.sleep_forever()

    async with spawn(Supervisor([ChildSpec(name="plain", start=plain, shutdown=0)]).run) as sup:
        with pytest.raises(KeyError):
            sup.ref("plain")
        with pytest.raises(KeyError):
            sup.ref("nope")
        await sup.stop()
    assert sup.events == [
        ChildStarted(name="plain", attempt=1, at=0),
        ChildStopped(name="plain", at=0, how="cancelled"),
    ]


async def test_a_crash_while_starting_is_restarted_like_any_crash(autojump_clock, hang_guard):
    a = Scripted("a", FailStart(after=1), FailStart(after=1))
    async with spawn(Supervisor([a.spec()]).run) as sup:
        assert trio.current_time() == 2  # run() waited for attempt 3 to come up
        await sup.stop()
    failed = "ValueError: a failed to start"
    assert sup.events == [
        ChildCrashed(name="a", at=1, error=failed),
        ChildRestarted(name="a", attempt=2, at=1),
        ChildCrashed(name="a", at=2, error=failed),
        ChildRestarted(name="a", attempt=3, at=2),
        ChildStarted(name="a", attempt=3, at=2),
        ChildStopped(name="a", at=2, how="graceful"),
    ]


async def test_escalation_while_starting_stops_the_started_and_skips_the_rest(
    autojump_clock, hang_guard
):
    first, never = Scripted("first"), Scripted("never")
    broken = Scripted("broken", *[FailStart(after=1)] * 3)
    sup = Supervisor([first.spec(), broken.spec(), never.spec()], intensity=1)
    with pytest.raises(RestartIntensityExceeded):
        await sup.run()
    assert trio.current_time() == 2
    assert never.attempts == 0
    with pytest.raises(ActorDied):
        await sup.ref("never").send(Boom(reply=None))
    failed = "ValueError: broken failed to start"
    assert sup.events == [
        ChildStarted(name="first", attempt=1, at=0),
        ChildCrashed(name="broken", at=1, error=failed),
        ChildRestarted(name="broken", attempt=2, at=1),
        ChildCrashed(name="broken", at=2, error=failed),
        SupervisorEscalated(name="root", at=2, error=str(sup.error)),
        ChildStopped(name="first", at=2, how="graceful"),
    ]


async def test_no_restarts_once_stopping_has_begun(autojump_clock, hang_guard):
    a, b = Scripted("a", Crash(after=1)), Scripted("b", Deaf())
    async with spawn(Supervisor([a.spec(), b.spec(shutdown=4)]).run) as sup:
        await sup.stop()
    assert a.attempts == 1
    assert sup.events == [
        ChildStarted(name="a", attempt=1, at=0),
        ChildStarted(name="b", attempt=1, at=0),
        crashed("a", at=1, attempt=1),
        ChildStopped(name="b", at=4, how="cancelled"),
    ]


async def test_crashes_are_logged_with_the_child_name(autojump_clock, hang_guard, caplog):
    a = Scripted("a", Crash(after=1))
    async with spawn(Supervisor([a.spec()], name="workers").run) as sup:
        await a.wait_for("started", 2)
        await sup.stop()
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert record.getMessage() == "workers: child a crashed (attempt 1)"
    assert record.exc_info is not None and record.exc_info[0] is ValueError


async def test_escalation_can_be_awaited_from_outside(autojump_clock, hang_guard):
    b = Scripted("b", Crash(after=1))
    sup = Supervisor([b.spec()], intensity=0, name="inner")
    escalations: list[RestartIntensityExceeded] = []

    async def parent():
        try:
            await sup.run()
        except RestartIntensityExceeded as exc:
            escalations.append(exc)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(parent)
        await sup.wait_stopped()
        assert trio.current_time() == 1
    assert escalations == [sup.error]
    assert sup.events[-1] == SupervisorEscalated(name="inner", at=1, error=str(sup.error))
