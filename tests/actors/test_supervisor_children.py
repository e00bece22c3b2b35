"""Supervision, continued: bounded events, optional children given up alone, a nested
supervisor's ordered stop, and children added while it runs (the session supervisor's
actors). The fakes and their rules: ``supervisor_fakes``.
"""

from __future__ import annotations

import pytest
import trio
import trio.testing
from supervisor_fakes import Crash, Deaf, FailStart, Ping, Scripted, Serve

from memlite.actors.core import (
    ChildCrashed,
    ChildSpec,
    ChildStarted,
    ChildStopped,
    Restart,
    Supervisor,
    spawn,
)
from memlite.errors import ActorDied

# --- issue 17: bounded events, optional children given up alone, nested stop ----------------


async def test_events_keep_only_the_newest_and_count_the_dropped(autojump_clock, hang_guard):
    from memlite.actors.supervisor_events import EVENTS_KEPT

    a = Scripted("a", *[Crash(after=1)] * (EVENTS_KEPT + 10))  # never two within the period
    async with spawn(Supervisor([a.spec()], intensity=1, period=0.5).run) as sup:
        await a.wait_for("started", EVENTS_KEPT + 5)
        assert len(sup.events) == EVENTS_KEPT
        assert sup.events.dropped > 0
        assert sup.events[-1] == ChildStarted(name="a", attempt=EVENTS_KEPT + 5,
                                              at=EVENTS_KEPT + 4)
        await sup.stop()


async def test_without_escalation_a_failing_child_is_given_up_and_its_siblings_run_on(
        autojump_clock, hang_guard):
    from memlite.actors.core import ChildGaveUp

    a, bad = Scripted("a"), Scripted("bad", *[Crash(after=1)] * 10)
    async with spawn(Supervisor([a.spec(), bad.spec()], intensity=2, period=60,
                                escalate=False, name="optional").run) as sup:
        await bad.wait_for("ended", 3)
        await trio.sleep(5)
        assert bad.attempts == 3  # two restarts allowed, the third given up
        assert sup.given_up == {"bad": "ValueError: bad crashed in attempt 3"}
        assert ChildGaveUp(name="bad", at=3, error=sup.given_up["bad"]) in sup.events
        assert sup.error is None
        assert await sup.ref("a").ask(Ping, timeout=1) == "a#1"  # the sibling still serves
        with pytest.raises(ActorDied):
            await sup.ref("bad").ask(Ping, timeout=1)
        await sup.stop()
    assert sup.error is None


async def test_a_nested_supervisor_is_asked_to_stop_its_children_in_order(
        autojump_clock, hang_guard):
    a, b = Scripted("a", Serve(cleanup=0.5)), Scripted("b", Serve(cleanup=0.5))
    inner = Supervisor([a.spec(shutdown=1), b.spec(shutdown=1)], name="inner")
    async with spawn(Supervisor([ChildSpec(name="inner", start=inner.run, shutdown=3,
                                           restart=Restart.TEMPORARY)]).run) as sup:
        await b.wait_for("started", 1)
        await sup.stop()
    # Stopped gracefully (a mailbox sealed, its cleanup done), not cancelled at 3 s.
    assert [e for e in inner.events if isinstance(e, ChildStopped)] == [
        ChildStopped(name="b", at=0.5, how="graceful"),
        ChildStopped(name="a", at=1.0, how="graceful"),
    ]
    assert ChildStopped(name="inner", at=1.0, how="graceful") in sup.events


# --- children added while it runs (the session supervisor's actors) ----------------------


async def test_start_child_adds_a_child_that_stops_in_reverse_order_with_the_rest(
        autojump_clock, hang_guard):
    a, d = Scripted("a", Serve(cleanup=1)), Scripted("d", Serve(cleanup=2))
    async with spawn(Supervisor([a.spec(shutdown=5)]).run) as sup:
        await trio.sleep(1)
        ref = await sup.start_child(d.spec(shutdown=5, restart=Restart.TEMPORARY))
        assert ref is not None and await ref.ask(Ping, timeout=1) == "d#1"
        assert await sup.ref("d").ask(Ping, timeout=1) == "d#1"
        with pytest.raises(ValueError, match="already has a child 'd'"):
            await sup.start_child(d.spec())
        await sup.stop()
        with pytest.raises(ActorDied, match="not running"):
            await sup.start_child(Scripted("late").spec())
    assert sup.events == [
        ChildStarted(name="a", attempt=1, at=0),
        ChildStarted(name="d", attempt=1, at=1),
        ChildStopped(name="d", at=3, how="graceful"),  # the newest child stops first
        ChildStopped(name="a", at=4, how="graceful"),
    ]


async def test_stop_child_uses_the_callers_grace_and_frees_the_name(autojump_clock, hang_guard):
    deaf, calm = Scripted("x", Deaf()), Scripted("y", Serve(cleanup=1))
    async with spawn(Supervisor([]).run) as sup:
        await sup.start_child(deaf.spec(shutdown=100, restart=Restart.TEMPORARY))
        await sup.start_child(calm.spec(shutdown=100, restart=Restart.TEMPORARY))
        assert sup.stop_child("x", grace=3) and sup.stop_child("y", grace=3)
        assert not sup.stop_child("nobody")
        await deaf.wait_for("ended", 1)
        await calm.wait_for("ended", 1)
        assert trio.current_time() == 3
        assert calm.stop_deadline == 3
        # A later, shorter stop brings the deadline nearer, never further.
        again = Scripted("x", Deaf())
        await sup.start_child(again.spec(shutdown=100, restart=Restart.TEMPORARY))
        assert sup.stop_child("x", grace=10) and sup.stop_child("x", grace=2)
        assert not sup.stop_child("nobody", grace=1)
        await again.wait_for("ended", 1)
        assert trio.current_time() == 5
        await sup.stop()
    assert sup.events == [
        ChildStarted(name="x", attempt=1, at=0),
        ChildStarted(name="y", attempt=1, at=0),
        ChildStopped(name="y", at=1, how="graceful"),
        ChildStopped(name="x", at=3, how="cancelled"),
        ChildStarted(name="x", attempt=1, at=3),
        ChildStopped(name="x", at=5, how="cancelled"),
    ]


async def test_a_dynamic_child_that_fails_to_start_returns_none(autojump_clock, hang_guard):
    broken = Scripted("b", FailStart(after=1))
    async with spawn(Supervisor([], escalate=False).run) as sup:
        assert await sup.start_child(broken.spec(restart=Restart.TEMPORARY)) is None
        assert sup.events == [ChildCrashed(name="b", at=1, error="ValueError: b failed to start")]
        with pytest.raises(KeyError):
            sup.ref("b")  # gone for good: forgotten
        await sup.stop()
