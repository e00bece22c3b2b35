"""Session supervisor: an actor per session on its first event, graceful end, crash
isolation, idle reaping, counts for idle shutdown. All on virtual time, exact."""

from __future__ import annotations

import logging

import pytest
import trio
import trio.testing

from memlite.actors.core import (
    ChildCrashed,
    ChildRestarted,
    ChildSpec,
    ChildStarted,
    ChildStopped,
    Supervisor,
    spawn,
)
from memlite.actors.session import (
    CountSessions,
    Deliver,
    EndSession,
    ListSessions,
    ReapIdle,
    SessionActor,
    SessionCount,
    SessionEvent,
    SessionInfo,
    SessionSupervisor,
    SupervisorStatistics,
)


class Recording(SessionActor):
    """Takes ``delay`` virtual seconds per event and records what it handled, and when."""

    log: list[tuple[str, int | None, float]] = []

    def __init__(self, session_id: str, *, delay: float = 0.0, crash_on: int | None = None,
                 stuck: bool = False) -> None:
        super().__init__(session_id, mailbox_size=16)
        self.delay, self.crash_on, self.stuck = delay, crash_on, stuck
        self.handled: list[int | None] = []

    async def handle(self, message: SessionEvent) -> None:
        await super().handle(message)
        if self.stuck:
            await trio.sleep_forever()
        await trio.sleep(self.delay)
        if message.event_id == self.crash_on:
            raise RuntimeError(f"boom in {self.session_id}")
        self.handled.append(message.event_id)
        Recording.log.append((self.session_id, message.event_id, trio.current_time()))


@pytest.fixture
def actors():
    """``make(session_id)`` builds (and remembers) each session's actor."""
    made: dict[str, list[Recording]] = {}
    options: dict[str, dict] = {}
    Recording.log = []

    def make(session_id: str) -> Recording:
        actor = Recording(session_id, **options.get(session_id, {}))
        made.setdefault(session_id, []).append(actor)
        return actor

    make.made, make.options = made, options
    return make


def deliver(session_id: str, event_id: int) -> Deliver:
    return Deliver(session_id=session_id, event_id=event_id, event_name="PostToolUse",
                   tool_name="Bash")


async def infos(ref) -> list[SessionInfo]:
    return await ref.ask(lambda reply: ListSessions(reply=reply), timeout=1)


async def count(ref) -> SessionCount:
    return await ref.ask(lambda reply: CountSessions(reply=reply), timeout=1)


async def settle() -> None:
    await trio.testing.wait_all_tasks_blocked()


async def test_an_actor_per_session_on_its_first_event(autojump_clock, hang_guard, actors):
    sup = SessionSupervisor(factory=actors)
    async with spawn(sup.run) as ref:
        assert await infos(ref) == []
        await ref.send(deliver("a", 1))
        await trio.sleep(10)
        await ref.send(deliver("a", 2))
        await ref.send(deliver("b", 3))
        await settle()
        await trio.sleep(5)
        assert await infos(ref) == [
            SessionInfo(session_id="a", idle_seconds=5.0, uptime_seconds=15.0,
                        mailbox_depth=0, events_seen=2),
            SessionInfo(session_id="b", idle_seconds=5.0, uptime_seconds=5.0,
                        mailbox_depth=0, events_seen=1),
        ]
        assert [len(actors.made[s]) for s in "ab"] == [1, 1]
        assert sup.statistics() == SupervisorStatistics(active=2, ending=0, started=2,
                                                        crashed=0, undelivered=0)


async def test_mailbox_depth_and_busy_sessions(autojump_clock, hang_guard, actors):
    actors.options["a"] = {"delay": 10.0}
    async with spawn(SessionSupervisor(factory=actors).run) as ref:
        for i in range(4):
            await ref.send(deliver("a", i))
        await settle()
        (info,) = await infos(ref)
        assert (info.mailbox_depth, info.events_seen) == (3, 1)  # one in hand, three queued


async def test_end_session_lets_it_finish_its_mailbox(autojump_clock, hang_guard, actors):
    actors.options["a"] = {"delay": 1.0}
    sup = SessionSupervisor(factory=actors, stop_grace=100)
    async with spawn(sup.run) as ref:
        for i in range(3):
            await ref.send(deliver("a", i))
        await ref.send(EndSession(session_id="a", reason="other"))
        await settle()
        assert await infos(ref) == []  # no longer active...
        assert await count(ref) == SessionCount(active=0, ending=1, empty_since=None)
        await trio.sleep(3)  # ...but it handles what was queued, then stops
        await settle()
        assert actors.made["a"][0].handled == [0, 1, 2]
        assert Recording.log[-1] == ("a", 2, 3.0)
        assert await count(ref) == SessionCount(active=0, ending=0, empty_since=3.0)
        # A later event of the same session starts a fresh actor.
        await ref.send(deliver("a", 9))
        await settle()
        assert len(actors.made["a"]) == 2


async def test_a_session_that_will_not_stop_is_cancelled_after_the_grace(
        autojump_clock, hang_guard, actors, caplog):
    caplog.set_level(logging.INFO, logger="memlite")
    actors.options["a"] = {"stuck": True}
    sup = SessionSupervisor(factory=actors, stop_grace=7, summary_wait=3)
    async with spawn(sup.run) as ref:
        await ref.send(deliver("a", 1))
        await trio.sleep(1)
        await ref.send(EndSession(session_id="a", reason="other"))
        await settle()
        assert actors.made["a"][0].ai_until == 4.0  # its AI is cut 3 s after the stop
        await trio.sleep(9.5)
        assert (await count(ref)).ending == 1
        await trio.sleep(0.5)
        await settle()  # cancelled summary wait + grace (3 + 7 s) after the stop
        assert await count(ref) == SessionCount(active=0, ending=0, empty_since=11.0)
        # The shared supervisor did the stop: its event and its log.
        assert sup.supervisor.events[-1] == ChildStopped(name="session:a", at=11.0,
                                                         how="cancelled")
    assert "sessions: child session:a ignored the stop for 10s and was cancelled" in caplog.text


async def test_end_of_an_unknown_session_is_harmless(autojump_clock, hang_guard, actors):
    async with spawn(SessionSupervisor(factory=actors).run) as ref:
        await ref.send(EndSession(session_id="nobody", reason=None))
        assert await count(ref) == SessionCount(active=0, ending=0, empty_since=0.0)


async def test_a_crash_is_isolated(autojump_clock, hang_guard, actors, caplog):
    actors.options["bad"] = {"crash_on": 2}
    sup = SessionSupervisor(factory=actors)
    async with spawn(sup.run) as ref:
        await ref.send(deliver("good", 1))
        await ref.send(deliver("bad", 1))
        await ref.send(deliver("bad", 2))  # crashes here
        await ref.send(deliver("good", 3))
        await settle()
        assert [i.session_id for i in await infos(ref)] == ["good"]
        assert actors.made["good"][0].handled == [1, 3]
        assert sup.statistics().crashed == 1
        # The crashed session's next event starts a fresh actor.
        await ref.send(deliver("bad", 4))
        await settle()
        assert [i.session_id for i in await infos(ref)] == ["good", "bad"]
        assert actors.made["bad"][1].handled == [4]
    crash = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert [r.getMessage() for r in crash] == ["sessions: child session:bad crashed (attempt 1)"]


async def test_an_actor_that_fails_to_start_is_not_a_supervisor_failure(
        autojump_clock, hang_guard, caplog):
    class Broken(SessionActor):
        async def run(self, *, task_status=trio.TASK_STATUS_IGNORED):
            raise OSError("cannot start")

    sup = SessionSupervisor(factory=Broken)
    async with spawn(sup.run) as ref:
        await ref.send(deliver("a", 1))
        await ref.send(deliver("a", 2))
        assert await infos(ref) == []
        assert sup.statistics().crashed == 2
        assert (await count(ref)).active == 0


async def test_a_full_session_mailbox_drops_the_doorbell_not_the_event(
        autojump_clock, hang_guard, actors, caplog):
    actors.options["a"] = {"stuck": True}
    sup = SessionSupervisor(factory=actors)
    async with spawn(sup.run) as ref:
        for i in range(20):  # one in hand + 16 queued, 3 over
            await ref.send(deliver("a", i))
        await settle()
        assert sup.statistics().undelivered == 3
        (info,) = await infos(ref)
        assert info.mailbox_depth == 16
    assert "session a: event 19 not delivered (MailboxFull)" in caplog.text


async def test_reap_idle_stops_only_idle_sessions(autojump_clock, hang_guard, actors):
    actors.options["busy"] = {"delay": 1000.0}
    async with spawn(SessionSupervisor(factory=actors).run) as ref:
        await ref.send(deliver("old", 1))
        await ref.send(deliver("busy", 1))
        await trio.sleep(100)
        await ref.send(deliver("new", 1))
        await trio.sleep(50)
        reaped = await ref.ask(lambda reply: ReapIdle(max_idle_seconds=150, reply=reply),
                               timeout=1)
        assert reaped == ["old"]  # idle exactly 150 s; "new" 50 s; "busy" is working
        await settle()
        assert [i.session_id for i in await infos(ref)] == ["busy", "new"]


async def test_stopping_the_supervisor_stops_every_session(autojump_clock, hang_guard, actors):
    actors.options["a"] = {"delay": 2.0}
    async with trio.open_nursery() as nursery:
        sup = SessionSupervisor(factory=actors, stop_grace=10)
        ref = await nursery.start(sup.run)
        await ref.send(deliver("a", 1))
        await ref.send(deliver("a", 2))
        await ref.send(deliver("b", 1))
        await settle()
        ref._seal()  # what the root supervisor does to stop it gracefully
    assert trio.current_time() == 4.0  # "a" finished both events first
    assert actors.made["a"][0].handled == [1, 2]


async def test_a_restarted_supervisor_starts_empty(autojump_clock, hang_guard, actors):
    sup = SessionSupervisor(factory=actors)
    async with spawn(sup.run) as ref:
        await ref.send(deliver("a", 1))
        await settle()
    async with spawn(sup.run) as ref:
        assert await infos(ref) == []


async def test_a_deliver_while_its_actor_stops_never_starts_a_second_one():
    """Deterministic (real clock, nothing sleeps: ``wait_all_tasks_blocked`` only). The
    old code started a second actor beside the stopping one."""
    gate = trio.Event()
    made: list[SessionActor] = []
    live = {"now": 0, "most": 0}

    class Gated(SessionActor):
        handled: list[int | None]

        async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
            live["now"] += 1
            live["most"] = max(live["most"], live["now"])
            try:
                await super().run(task_status=task_status)
            finally:
                live["now"] -= 1

        async def handle(self, message: SessionEvent) -> None:
            await super().handle(message)
            self.handled.append(message.event_id)
            if message.event_id == 1:
                await gate.wait()  # still busy when its session ends

    def factory(session_id: str) -> Gated:
        actor = Gated(session_id)
        actor.handled = []
        made.append(actor)
        return actor

    sup = SessionSupervisor(factory=factory, stop_grace=1000, summary_wait=1000)
    async with spawn(sup.run) as ref:
        await ref.send(deliver("a", 1))
        await ref.send(EndSession(session_id="a", reason="clear"))
        await ref.send(deliver("a", 2))
        await ref.send(deliver("a", 3))
        await settle()
        assert [a.handled for a in made] == [[1]]  # one actor, still stopping
        assert sup.statistics() == SupervisorStatistics(
            active=0, ending=1, started=1, crashed=0, undelivered=0, deferred=1)
        # The held session counts as active: idle shutdown must not stop the worker.
        assert await count(ref) == SessionCount(active=1, ending=1, empty_since=None)
        gate.set()
        await settle()
        # The stopping one finished; then, only then, the session's next actor started
        # and was rung once (it reads every pending event from the database).
        assert [a.handled for a in made] == [[1], [None]]
        assert live["most"] == 1
        assert sup.statistics().started == 2
        assert await count(ref) == SessionCount(active=1, ending=0, empty_since=None)


async def test_held_doorbells_are_dropped_when_the_supervisor_stops():
    gate = trio.Event()

    class Stuck(SessionActor):
        async def handle(self, message: SessionEvent) -> None:
            await super().handle(message)
            await gate.wait()

    made: list[SessionActor] = []

    def factory(session_id: str) -> SessionActor:
        made.append(Stuck(session_id))
        return made[-1]

    async with trio.open_nursery() as nursery:
        sup = SessionSupervisor(factory=factory, stop_grace=1000, summary_wait=1000)
        ref = await nursery.start(sup.run)
        await ref.send(deliver("a", 1))
        await ref.send(EndSession(session_id="a", reason="clear"))
        await ref.send(deliver("a", 2))
        await settle()
        ref._seal()  # the worker stops: no new actor for the held doorbell
        await settle()
        gate.set()
    assert len(made) == 1 and sup.statistics().started == 1


# --- issue 17: one supervisor implementation, the session supervisor built on it ----------


async def test_session_actors_are_children_of_the_shared_supervisor(
        autojump_clock, hang_guard, actors):
    """Start, graceful stop, crash and the worker's stop of session actors are the shared
    ``Supervisor``'s: its events record each, with the session's grace."""
    actors.options["bad"] = {"crash_on": 2}
    actors.options["stuck"] = {"stuck": True}
    sup = SessionSupervisor(factory=actors, stop_grace=2, summary_wait=3,
                            shutdown_summary_wait=1)
    root = Supervisor([ChildSpec(name="sessions", start=sup.run, shutdown=100)])
    async with spawn(root.run):
        ref = root.ref("sessions")
        await ref.send(deliver("a", 1))
        await ref.send(deliver("bad", 1))
        await ref.send(deliver("stuck", 1))
        await settle()
        assert sorted(e.name for e in sup.supervisor.events if isinstance(e, ChildStarted)) \
            == ["session:a", "session:bad", "session:stuck"]
        await ref.send(EndSession(session_id="a", reason="other"))
        await ref.send(deliver("bad", 2))  # crashes: recorded, never restarted
        await settle()
        assert ChildStopped(name="session:a", at=0.0, how="graceful") in sup.supervisor.events
        assert ChildCrashed(name="session:bad", at=0.0, error="RuntimeError: boom in bad") \
            in sup.supervisor.events
        assert not [e for e in sup.supervisor.events if isinstance(e, ChildRestarted)]
        # A session's next actor is a new child under the same name.
        await ref.send(deliver("a", 3))
        await settle()
        assert [e for e in sup.supervisor.events if isinstance(e, ChildStarted)
                and e.name == "session:a"] == [ChildStarted(name="session:a", attempt=1, at=0.0),
                                               ChildStarted(name="session:a", attempt=1, at=0.0)]
        assert sup.supervisor.ref("session:a").statistics().name == "session:a"
        await trio.sleep(5)
        # The worker's stop: the shared supervisor stops the rest with the shutdown grace
        # (shutdown_summary_wait + stop_grace = 3 s); the stuck one is cancelled then.
        await root.stop()
    events = sup.supervisor.events
    assert ChildStopped(name="session:a", at=5.0, how="graceful") in events
    assert ChildStopped(name="session:stuck", at=8.0, how="cancelled") in events
    assert root.events[-1] == ChildStopped(name="sessions", at=8.0, how="graceful")


async def test_the_session_supervisor_restarts_with_a_fresh_shared_supervisor(
        autojump_clock, hang_guard, actors):
    sup = SessionSupervisor(factory=actors)
    async with spawn(sup.run) as ref:
        await ref.send(deliver("a", 1))
        await settle()
        first = sup.supervisor
    async with spawn(sup.run) as ref:
        await ref.send(deliver("b", 1))
        await settle()
        assert sup.supervisor is not first
        assert [e.name for e in sup.supervisor.events] == ["session:b"]
    assert [e.name for e in first.events] == ["session:a"]  # started (then cancelled with it)
