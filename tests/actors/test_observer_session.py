"""Observing session actors over a real storage actor: every claim checked in the database.

Real SQLite work happens in threads, so these run on real time, except the quota test,
which uses a MockClock with a small autojump threshold (STYLE 22) and asserts the exact
virtual time the AI was asked again.
"""

from __future__ import annotations

import datetime

import pytest
import trio
import trio.testing

from memlite.actors.storage import (
    RequeueProcessingEvents,
    SetEventStatus,
    StoreEvent,
    StorePrompt,
)
from memlite.errors import ObserverCrashed
from memlite.observer.backend import QuotaPaused
from memlite.observer.governor import Governor
from memlite.storage import reads
from tests.actors.observer_helpers import (
    PROJECT,
    ScriptedAI,
    add_events,
    db_rows,
    doorbell,
    observing,
)

pytestmark = pytest.mark.loop_guard  # issue 17: fail when the event loop is blocked

QUOTA = QuotaPaused("You've hit your usage limit", kind="quota")


def statuses(data_dir) -> dict[int, str]:
    return dict(db_rows(data_dir, "SELECT id, status FROM events ORDER BY id"))


def observations(data_dir) -> list[tuple]:
    return db_rows(data_dir, "SELECT backend, source_event_ids, superseded_by "
                             "FROM observations ORDER BY id")


async def test_rules_backend_end_to_end_event_in_observation_out(data_dir):
    async with observing(data_dir) as hub:
        ids = await add_events(hub, 3)
        session = hub.factory("s1")
        await session.handle(doorbell())
        assert session.statistics().backend == "rules"
    assert statuses(data_dir) == dict.fromkeys(ids, "done")
    assert observations(data_dir) == [("rules", f"[{i}]", None) for i in ids]
    links = db_rows(data_dir, "SELECT event_id, kind FROM observation_sources ORDER BY 1")
    assert links == [(i, "rules") for i in ids]


async def test_stored_observations_and_summaries_are_announced_once(data_dir):
    """The dashboard's live feed hears of each new row, and of a replayed one not again."""
    heard: list[dict] = []
    async with observing(data_dir, publish=heard.append) as hub:
        await add_events(hub, 2)
        session = hub.factory("s1")
        await session.handle(doorbell())
        await session.handle(doorbell())  # nothing new: nothing announced
        await session.summarize()
    stored = [r[0] for r in db_rows(data_dir, "SELECT id FROM observations ORDER BY id")]
    summaries = [r[0] for r in db_rows(data_dir, "SELECT id FROM summaries")]
    assert [(e["type"], e["id"]) for e in heard] == [
        *(("observation", i) for i in stored), *(("summary", i) for i in summaries)]
    assert len(summaries) == 1
    assert {(e["sessionId"], e["project"]) for e in heard} == {("s1", PROJECT)}


async def test_ai_observations_supersede_provisional_rules_ones(data_dir):
    ai = ScriptedAI()
    async with observing(data_dir, make_ai=lambda sid: ai) as hub:
        (first,) = await add_events(hub, 1)
        # A provisional rules observation (made while the AI was paused) exists.
        session = hub.factory("s1")
        await session._provisional(await hub.read(reads.pending_events), "/work/p")
        await session.handle(doorbell())
    rows = observations(data_dir)
    assert [(b, src) for b, src, _ in rows] == [("rules", f"[{first}]"), ("ai", f"[{first}]")]
    assert rows[0][2] == 2 and rows[1][2] is None  # rules #1 superseded by AI #2
    assert statuses(data_dir) == {first: "done"}


async def test_replay_after_a_crash_gives_exactly_one_observation_per_event(data_dir):
    ai = ScriptedAI()
    async with observing(data_dir, make_ai=lambda sid: ai) as hub:
        ids = await add_events(hub, 6)
        await hub.factory("s1").handle(doorbell())
        # A worker died mid-batch: the last 3 events were sent but their answers lost.
        # Simulate exactly that: their statuses go back to processing.
        await hub.ask(lambda reply: SetEventStatus(event_ids=ids[3:], status="processing",
                                                   reply=reply))
        # The next worker: requeue, then a fresh actor (a fresh conversation) replays.
        assert await hub.ask(lambda reply: RequeueProcessingEvents(reply=reply)) == 3
        await hub.factory("s1").handle(doorbell())
    per_event = db_rows(data_dir, "SELECT event_id, count(*) FROM observation_sources "
                                  "WHERE kind = 'ai' GROUP BY event_id ORDER BY event_id")
    assert per_event == [(i, 1) for i in ids]
    assert len(observations(data_dir)) == 6
    assert statuses(data_dir) == dict.fromkeys(ids, "done")
    assert len(ai.calls) == 9  # the 3 replayed events were asked again, stored once


async def test_an_actor_requeues_its_own_processing_events(data_dir):
    async with observing(data_dir) as hub:
        ids = await add_events(hub, 2)
        await hub.ask(lambda reply: SetEventStatus(event_ids=ids, status="processing",
                                                   reply=reply))
        await hub.factory("s1").handle(doorbell())
    assert statuses(data_dir) == dict.fromkeys(ids, "done")


def test_quota_pauses_keeps_events_pending_and_resumes_after_backoff(data_dir):
    clock = trio.testing.MockClock(autojump_threshold=0.25)  # > a loaded CI's DB thread hop
    ai = ScriptedAI(QUOTA, QUOTA)
    record: dict[str, object] = {}
    paused: trio.Event | None = None

    class Watched(Governor):
        def pause(self, reason):
            paused.set()
            return super().pause(reason)

    async def scenario():
        nonlocal paused
        paused = trio.Event()
        async with observing(data_dir, make_ai=lambda sid: ai, governor=Watched()) as hub:
            ids = await add_events(hub, 2)
            session = hub.factory("s1")
            async with trio.open_nursery() as nursery:
                nursery.start_soon(session.handle, doorbell())
                await paused.wait()
                record["paused_at"] = trio.current_time()
                await trio.sleep(1)
                record["during"] = (statuses(data_dir), observations(data_dir))
                record["health"] = hub.health_line()
            record["ids"] = ids

    trio.run(scenario, clock=clock)
    ids, paused_at = record["ids"], record["paused_at"]
    during_status, during_obs = record["during"]
    assert during_status == dict.fromkeys(ids, "pending")  # nothing lost, nothing done
    assert [(b, s) for b, s, _ in during_obs] == [("rules", f"[{i}]") for i in ids]
    assert "paused" in record["health"]
    times = [t for t, _ in ai.calls]
    # Asked at t, paused 60 s, asked again (quota), paused 120 s, then it answered.
    assert times[1] - times[0] == pytest.approx(60, abs=0.01)
    assert times[2] - times[1] == pytest.approx(120, abs=0.01)
    assert times[0] == pytest.approx(paused_at, abs=0.01)
    assert statuses(data_dir) == dict.fromkeys(ids, "done")
    final = observations(data_dir)
    assert [b for b, _, _ in final] == ["rules", "rules", "ai", "ai"]
    assert [sup for _, _, sup in final[:2]] == [3, 4]


async def test_daily_budget_spent_switches_to_rules_until_the_next_day(data_dir):
    day = [datetime.date(2026, 1, 1)]
    governor = Governor(daily_tokens=100, today=lambda: day[0])
    ai = ScriptedAI(tokens=60, governor=governor)
    async with observing(data_dir, make_ai=lambda sid: ai, governor=governor) as hub:
        await add_events(hub, 4)
        session = hub.factory("s1")
        await session.handle(doorbell())
        assert session.statistics().backend == "rules"
        day[0] = datetime.date(2026, 1, 2)
        await add_events(hub, 1, start=10)
        await session.handle(doorbell())
        assert session.statistics().backend == "claude"
    assert [b for b, _, _ in observations(data_dir)] == ["ai", "ai", "rules", "rules", "ai"]
    assert len(ai.calls) == 3


async def test_health_line_after_three_failures_in_a_row(data_dir):
    ai = ScriptedAI(*[ObserverCrashed("exit 3")] * 3, "obs")
    async with observing(data_dir, make_ai=lambda sid: ai) as hub:
        await add_events(hub, 2)
        session = hub.factory("s1")
        await session.handle(doorbell())
        assert session.failures == 0  # the 4th turn answered
        assert hub.health_line() is None
    # The first event got its rules observation as final; the second the AI's.
    assert [b for b, _, _ in observations(data_dir)] == ["rules", "ai"]
    # The failure streak was recorded, then cleared by the success.
    assert db_rows(data_dir, "SELECT observer_failures FROM sessions") == [(0,)]


async def test_health_is_reported_while_failing(data_dir):
    from memlite.context import build_context
    from memlite.storage import connect

    ai = ScriptedAI(default=ObserverCrashed("exit 3"))
    async with observing(data_dir, make_ai=lambda sid: ai) as hub:
        await add_events(hub, 1)
        session = hub.factory("s1")
        await session.handle(doorbell())
        line = hub.health_line()
    assert line is not None and "3 failures in a row" in line
    assert db_rows(data_dir, "SELECT observer_failures, observer_error FROM sessions") == [
        (3, "ObserverCrashed: exit 3")]
    conn = connect(data_dir, writer=False)
    try:
        block = build_context(conn, "/work/p")
    finally:
        conn.close()
    first = block.text.splitlines()[1]
    assert first.startswith("memlite: the AI observer failed 3 times in a row")


async def test_stop_stores_a_summary(data_dir):
    async with observing(data_dir) as hub:
        await add_events(hub, 2)
        await hub.ask(lambda reply: StorePrompt(session_id="s1", prompt_text="bump a",
                                                reply=reply))
        await hub.ask(lambda reply: StoreEvent(
            session_id="s1", event_name="Stop", reply=reply,
            payload={"hook_event_name": "Stop", "last_assistant_message": "Bumped a."}))
        await hub.factory("s1").handle(doorbell("Stop"))
    [(request, completed)] = db_rows(data_dir, "SELECT request, completed FROM summaries")
    assert request == "bump a" and "Bumped a." in completed
    assert set(statuses(data_dir).values()) == {"done"}  # the Stop too, with its summary


async def test_a_session_that_ends_while_failing_leaves_no_health_entry(data_dir):
    from memlite.actors.core import spawn

    ai = ScriptedAI(default=ObserverCrashed("exit 3"))
    async with observing(data_dir, make_ai=lambda sid: ai) as hub:
        await add_events(hub, 1)
        session = hub.factory("s1")
        async with spawn(session.run) as ref:
            await ref.send(doorbell())
            for _ in range(1000):  # the 3 attempts on the event, then it idles
                if session.failures >= 3:
                    break
                await trio.sleep(0.01)
            assert "s1" in hub.failing
        assert "s1" not in hub.failing and hub.health_line() is None
        assert ai.closed


async def test_provisioned_ids_stay_within_the_pending_events(data_dir):
    """Issue 17: the set of events given a rules observation during a pause only grew.
    Ids of events no longer pending are forgotten; the still pending ones are not redone."""
    async with observing(data_dir) as hub:
        first = await add_events(hub, 3)
        session = hub.factory("s1")
        await session._provisional(await hub.read(reads.pending_events), PROJECT)
        assert session._provisioned == set(first)
        await hub.ask(lambda reply: SetEventStatus(event_ids=first[:2], status="done",
                                                   reply=reply))
        later = await add_events(hub, 2, start=3)
        await session._provisional(await hub.read(reads.pending_events), PROJECT)
        assert session._provisioned == {first[2], *later}
    rules = db_rows(data_dir, "SELECT source_event_ids FROM observations WHERE backend = "
                              "'rules' ORDER BY id")
    assert [r[0] for r in rules] == [f"[{i}]" for i in (*first, *later)]  # none redone
