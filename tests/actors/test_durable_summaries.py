"""Durable summaries (issue 13, item 3): a Stop is done only with its summary; a stopping
session waits for a summary in progress within a bound, then stores the rules one; a
summary cut off is made by the session's next actor; one actor per session at a time.

Real storage actor and SQLite threads, so real time; every wait is for a condition (the
AI fakes block on events or sleep a set time, never the test).
"""

from __future__ import annotations

import math

import attrs
import trio

from memlite.actors.core import spawn
from memlite.actors.session import CountSessions, Deliver, EndSession, SessionSupervisor
from memlite.actors.storage import StoreEvent, StorePrompt
from memlite.storage.records import NewSummary
from tests.actors.observer_helpers import (
    PROJECT,
    ScriptedAI,
    add_events,
    db_rows,
    doorbell,
    observing,
)


class SummaryAI(ScriptedAI):
    """Observes as ``ScriptedAI``; its summary takes ``delay`` seconds (math.inf: never
    answers). ``summarizing`` is set when a summary turn starts."""

    def __init__(self, *script, delay: float = 0.0, **kw) -> None:
        super().__init__(*script, **kw)
        self.delay = delay
        self.summarizing = trio.Event()
        self.summaries = 0

    async def summarize(self, events, prompts, *, project, session_id):
        self.summaries += 1
        self.summarizing.set()
        if math.isinf(self.delay):
            await trio.sleep_forever()
        await trio.sleep(self.delay)
        return NewSummary(session_id=session_id, project=project, request="AI summary",
                          completed=f"{len(events)} events")


async def stop_event(hub, session_id: str = "s1") -> int:
    await hub.ask(lambda reply: StorePrompt(session_id=session_id, prompt_text="bump a",
                                            reply=reply))
    result = await hub.ask(lambda reply: StoreEvent(
        session_id=session_id, event_name="Stop", reply=reply,
        payload={"hook_event_name": "Stop", "last_assistant_message": "Bumped a."}))
    return result.id


async def session_end(hub, session_id: str = "s1") -> int:
    result = await hub.ask(lambda reply: StoreEvent(
        session_id=session_id, event_name="SessionEnd", reply=reply,
        payload={"hook_event_name": "SessionEnd", "reason": "prompt_input_exit"}))
    return result.id


def summaries(data_dir) -> list[str]:
    return [r[0] for r in db_rows(data_dir, "SELECT request FROM summaries ORDER BY id")]


def status(data_dir, event_id: int) -> str:
    return db_rows(data_dir, "SELECT status FROM events WHERE id = ?", (event_id,))[0][0]


async def until(predicate, what: str, timeout: float = 30.0) -> None:  # noqa: ASYNC109
    with trio.move_on_after(timeout):
        while not predicate():  # noqa: ASYNC110 - polls the database
            await trio.sleep(0.01)
        return
    raise AssertionError(f"timed out after {timeout} s: {what}")


async def gone(sup: SessionSupervisor, ref) -> bool:
    counted = await ref.ask(lambda reply: CountSessions(reply=reply), timeout=5)
    return counted.active == 0 and counted.ending == 0


async def quick_exit(ref, session_id: str = "s1") -> None:
    """What ``claude -p`` or a quick /exit sends: Stop and SessionEnd back to back."""
    await ref.send(Deliver(session_id=session_id, event_id=None, event_name="Stop"))
    await ref.send(Deliver(session_id=session_id, event_id=None, event_name="SessionEnd"))
    await ref.send(EndSession(session_id=session_id, reason="prompt_input_exit"))


async def run_until_gone(sup: SessionSupervisor, ref,
                         timeout: float = 30.0) -> None:  # noqa: ASYNC109
    with trio.fail_after(timeout):
        while not await gone(sup, ref):  # noqa: ASYNC110 - polls the supervisor
            await trio.sleep(0.01)


async def test_stop_is_pending_until_its_summary_is_stored_with_it(data_dir):
    """The Stop is ``processing`` while its summary is being made, ``done`` with it."""
    ai = SummaryAI(delay=math.inf)
    async with observing(data_dir, make_ai=lambda sid: ai) as hub:
        await add_events(hub, 1)
        stop = await stop_event(hub)
        session = hub.factory("s1")
        async with trio.open_nursery() as nursery:
            nursery.start_soon(session.handle, doorbell("Stop"))
            await ai.summarizing.wait()
            assert status(data_dir, stop) == "processing"
            assert summaries(data_dir) == []
            nursery.cancel_scope.cancel()  # the actor is cut off mid-summary
    assert status(data_dir, stop) == "processing"  # not skipped: it will be made again
    assert summaries(data_dir) == []


async def test_a_summary_cut_off_is_made_by_the_sessions_next_actor(data_dir):
    """Fails on the old code: the Stop was ``skipped`` before its summary existed."""
    ai = SummaryAI(delay=math.inf)
    async with observing(data_dir, make_ai=lambda sid: ai) as hub:
        await add_events(hub, 2)
        stop = await stop_event(hub)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(hub.factory("s1").handle, doorbell("Stop"))
            await ai.summarizing.wait()
            nursery.cancel_scope.cancel()
        ai.delay = 0.0
        # The next actor of the session (a later event, or the worker's start-up resume).
        await hub.factory("s1").handle(doorbell("Resume"))
    assert summaries(data_dir) == ["AI summary"]
    assert status(data_dir, stop) == "done"
    assert ai.summaries == 2


async def test_several_pending_stops_get_one_summary(data_dir):
    async with observing(data_dir) as hub:
        await add_events(hub, 1)
        first = await stop_event(hub)
        await add_events(hub, 1, start=5)
        second = await hub.ask(lambda reply: StoreEvent(
            session_id="s1", event_name="Stop", reply=reply,
            payload={"hook_event_name": "Stop", "last_assistant_message": "Again."}))
        await hub.factory("s1").handle(doorbell("Resume"))
    assert len(summaries(data_dir)) == 1
    assert (status(data_dir, first), status(data_dir, second.id)) == ("done", "done")


async def test_a_stop_with_nothing_to_summarize_is_skipped_not_left_processing(data_dir):
    async with observing(data_dir) as hub:
        stop = await hub.ask(lambda reply: StoreEvent(
            session_id="s1", event_name="Stop", payload={"hook_event_name": "Stop"},
            reply=reply))
        await hub.factory("s1").handle(doorbell("Stop"))
    assert summaries(data_dir) == []
    assert status(data_dir, stop.id) == "skipped"


async def test_quick_exit_waits_for_a_slow_ai_summary(data_dir):
    """Stop and SessionEnd back to back, a 2 s AI summary, a 1 s stop grace: the
    session's end waits for the summary (old code: cancelled after the grace, the Stop
    already ``skipped``, ``summaries: []``)."""
    ai = SummaryAI(delay=2.0)
    async with observing(data_dir, make_ai=lambda sid: ai) as hub:
        await add_events(hub, 1)
        stop = await stop_event(hub)
        end = await session_end(hub)
        sup = SessionSupervisor(factory=hub.factory, stop_grace=1.0)
        async with spawn(sup.run) as ref:
            await quick_exit(ref)
            await run_until_gone(sup, ref)
    assert summaries(data_dir) == ["AI summary"]
    assert (status(data_dir, stop), status(data_dir, end)) == ("done", "skipped")


async def test_past_the_summary_wait_the_rules_summary_is_stored(data_dir):
    ai = SummaryAI(delay=math.inf)
    async with observing(data_dir, make_ai=lambda sid: ai) as hub:
        await add_events(hub, 1)
        stop = await stop_event(hub)
        sup = SessionSupervisor(factory=hub.factory, stop_grace=30.0, summary_wait=0.5)
        async with spawn(sup.run) as ref:
            await quick_exit(ref)
            started = trio.current_time()
            await run_until_gone(sup, ref)
            took = trio.current_time() - started
    [(request, completed)] = db_rows(data_dir, "SELECT request, completed FROM summaries")
    assert request == "bump a" and "Bumped a." in completed  # the rules summary
    assert status(data_dir, stop) == "done"
    assert took < 30.0  # well before the grace: the wait was cut, not the actor cancelled
    assert ai.closed


async def test_worker_shutdown_waits_then_stores_the_rules_summary(data_dir):
    """The supervisor's mailbox sealed (what the root does at shutdown): the summary in
    progress gets ``shutdown_summary_wait``, then the rules summary is stored."""
    ai = SummaryAI(delay=math.inf)
    async with observing(data_dir, make_ai=lambda sid: ai) as hub:
        await add_events(hub, 1)
        stop = await stop_event(hub)
        sup = SessionSupervisor(factory=hub.factory, stop_grace=30.0, summary_wait=60.0,
                                shutdown_summary_wait=0.3)
        async with trio.open_nursery() as nursery:
            ref = await nursery.start(sup.run)
            await ref.send(Deliver(session_id="s1", event_id=None, event_name="Stop"))
            await ai.summarizing.wait()
            ref._seal()
    assert [r[0] for r in db_rows(data_dir, "SELECT request FROM summaries")] == ["bump a"]
    assert status(data_dir, stop) == "done"


class GatedAI(ScriptedAI):
    """Its first ``observe`` waits for ``gate``; ``asked`` is set when it starts."""

    def __init__(self, *script, **kw) -> None:
        super().__init__(*script, **kw)
        self.gate, self.asked = trio.Event(), trio.Event()

    async def observe(self, events, *, project):
        if not self.asked.is_set():
            self.asked.set()
            await self.gate.wait()
        return await super().observe(events, project=project)


async def test_an_event_while_the_actor_stops_does_not_start_a_second_one(data_dir):
    """Old code: a second actor started, put the first one's ``processing`` event back to
    pending and asked the AI about it again."""
    ai = GatedAI()
    made = []

    def factory(session_id):
        made.append(hub.factory(session_id))
        return made[-1]

    async with observing(data_dir, make_ai=lambda sid: ai) as hub:
        (first,) = await add_events(hub, 1)
        sup = SessionSupervisor(factory=factory)
        async with spawn(sup.run) as ref:
            await ref.send(Deliver(session_id="s1", event_id=first, event_name="PostToolUse"))
            await ai.asked.wait()  # the first event is processing, its AI turn open
            await ref.send(EndSession(session_id="s1", reason="clear"))
            (second,) = await add_events(hub, 1, start=1)
            await ref.send(Deliver(session_id="s1", event_id=second,
                                   event_name="PostToolUse"))
            await until(lambda: sup.deferred == 1, "the new event held")
            assert len(made) == 1
            assert db_rows(data_dir, "SELECT status FROM events WHERE id = ?",
                           (first,)) == [("processing",)]
            ai.gate.set()
            await until(lambda: sup.started == 2, "the session's next actor")
            await until(lambda: all(s == "done" for (s,) in db_rows(
                data_dir, "SELECT status FROM events")), "both events observed")
    per_event = [e for _, e in ai.calls]
    assert sorted(per_event) == [(first,), (second,)]  # each asked once
    assert attrs.asdict(sup.statistics())["deferred"] == 1


async def test_the_shutdown_wait_counts_from_the_workers_signal(data_dir):
    """The root stops the HTTP front and other children before the sessions: the summary
    wait must not start only when the session supervisor's turn comes."""
    ai = SummaryAI(delay=math.inf)
    shutdown = trio.Event()
    async with observing(data_dir, make_ai=lambda sid: ai) as hub:
        await add_events(hub, 1)
        stop = await stop_event(hub)
        sup = SessionSupervisor(factory=hub.factory, shutdown=shutdown,
                                shutdown_summary_wait=0.2)
        async with spawn(sup.run) as ref:
            await ref.send(Deliver(session_id="s1", event_id=None, event_name="Stop"))
            await ai.summarizing.wait()
            shutdown.set()  # the signal; the supervisor itself is not stopped yet
            await until(lambda: status(data_dir, stop) == "done", "the rules summary")
            assert (await ref.ask(lambda reply: CountSessions(reply=reply),
                                  timeout=5)).active == 1  # still running meanwhile
    assert summaries(data_dir) == ["bump a"]


async def test_a_session_ending_during_a_quota_pause_gets_its_rules_summary(data_dir):
    """The AI is paused for a minute (quota); the session ends: after the summary wait the
    actor stops sitting out the pause; the Stop is done with the rules summary, the events
    keep their provisional rules observations and stay pending for the AI."""
    from memlite.observer.backend import QuotaPaused

    ai = SummaryAI(QuotaPaused("You've hit your usage limit", kind="quota"))
    async with observing(data_dir, make_ai=lambda sid: ai) as hub:
        ids = await add_events(hub, 2)
        stop = await stop_event(hub)
        sup = SessionSupervisor(factory=hub.factory, stop_grace=60.0, summary_wait=0.3)
        async with spawn(sup.run) as ref:
            await quick_exit(ref)
            with trio.fail_after(20):  # the pause lasts 60 s: the wait was cut, not waited
                await run_until_gone(sup, ref)
        assert hub.governor.paused_for() > 30
    assert summaries(data_dir) == ["bump a"]
    assert [status(data_dir, i) for i in (*ids, stop)] == ["pending", "pending", "done"]
    assert db_rows(data_dir, "SELECT backend, source_event_ids FROM observations "
                             "ORDER BY id") == [("rules", f"[{i}]") for i in ids]
    assert ai.summaries == 0


async def test_an_actor_started_after_the_shutdown_signal_has_the_shutdown_bound(data_dir):
    ai = SummaryAI(delay=math.inf)
    shutdown = trio.Event()
    shutdown.set()
    async with observing(data_dir, make_ai=lambda sid: ai) as hub:
        await add_events(hub, 1)
        stop = await stop_event(hub)
        sup = SessionSupervisor(factory=hub.factory, shutdown=shutdown,
                                shutdown_summary_wait=0.2)
        async with spawn(sup.run) as ref:
            await ref.send(Deliver(session_id="s1", event_id=None, event_name="Stop"))
            await until(lambda: status(data_dir, stop) == "done", "the rules summary")
    assert summaries(data_dir) == ["bump a"]


async def test_events_cut_off_by_the_stop_stay_pending_for_the_ai(data_dir):
    """A backlog the AI cannot finish within the summary wait: the turn in progress is cut,
    every event not observed gets a provisional rules observation and stays pending (the
    next start's AI observes them); the Stop gets the rules summary, done."""
    ai = GatedAI()  # its first turn never ends (the gate stays shut)
    async with observing(data_dir, make_ai=lambda sid: ai) as hub:
        ids = await add_events(hub, 3)
        stop = await stop_event(hub)
        sup = SessionSupervisor(factory=hub.factory, stop_grace=60.0, summary_wait=0.3)
        async with spawn(sup.run) as ref:
            await ref.send(Deliver(session_id="s1", event_id=None, event_name="PostToolUse"))
            await ai.asked.wait()
            await quick_exit(ref)
            with trio.fail_after(20):
                await run_until_gone(sup, ref)
    assert [status(data_dir, i) for i in ids] == ["pending"] * 3
    assert db_rows(data_dir, "SELECT backend, source_event_ids FROM observations "
                             "ORDER BY id") == [("rules", f"[{i}]") for i in ids]
    assert status(data_dir, stop) == "done" and summaries(data_dir) == ["bump a"]
    assert len(ai.calls) == 0  # the one turn asked was cut before it answered


async def test_at_shutdown_observation_turns_are_cut_at_once(data_dir):
    """Only a summary is worth delaying the worker's exit: an observation turn in progress
    is cut at the signal (its event stays pending for the next start), even with a long
    summary wait."""
    ai = GatedAI()
    shutdown = trio.Event()
    async with observing(data_dir, make_ai=lambda sid: ai) as hub:
        (first,) = await add_events(hub, 1)
        sup = SessionSupervisor(factory=hub.factory, shutdown=shutdown,
                                shutdown_summary_wait=600.0)
        async with spawn(sup.run) as ref:
            await ref.send(Deliver(session_id="s1", event_id=first, event_name="PostToolUse"))
            await ai.asked.wait()
            shutdown.set()
            with trio.fail_after(20):  # not the 600 s summary wait
                await until(lambda: db_rows(data_dir, "SELECT count(*) FROM observations")
                            == [(1,)], "the provisional observation")
    assert status(data_dir, first) == "pending"
    assert db_rows(data_dir, "SELECT backend FROM observations") == [("rules",)]


async def test_a_failed_summary_store_leaves_its_stop_not_done(data_dir):
    """The summary and the Stop's ``done`` are one savepoint: a summary the database
    refuses (here a NULL project) leaves the Stop as it was, for the next attempt."""
    from memlite.actors.storage import StoreSummary
    from memlite.errors import StorageError

    async with observing(data_dir) as hub:
        stop = await stop_event(hub)
        bad = NewSummary(session_id="s1", project=None, request="x")  # type: ignore[arg-type]
        outcome = None
        try:
            outcome = await hub.ask(lambda reply: StoreSummary(
                summary=bad, done_event_ids=(stop,), reply=reply))
        except StorageError as exc:
            outcome = exc
        good = NewSummary(session_id="s1", project=PROJECT, request="y")
        await hub.ask(lambda reply: StoreSummary(summary=good, done_event_ids=(),
                                                 reply=reply))
    assert isinstance(outcome, StorageError), outcome
    assert status(data_dir, stop) == "pending"
    assert summaries(data_dir) == ["y"]
