"""Observer backends: rules, Claude over a scripted conversation, selection, the governor."""

from __future__ import annotations

import datetime
import json
from contextlib import asynccontextmanager

import attrs
import pytest
import trio
import trio.testing

from memlite.errors import ObserverCrashed, ObserverErrorResult
from memlite.observer.backend import (
    BadReply,
    ClaudeBackend,
    QuotaPaused,
    RulesBackend,
    choose_backend,
)
from memlite.observer.governor import Governor
from memlite.storage.records import Event

QUOTA = "You've hit your usage limit · resets 3pm (UTC). /upgrade to increase your limit."
OBS = ("<observation><type>change</type><title>Renamed greet</title>"
       "<files_modified><file>/p/x.py</file></files_modified></observation>")


def event(i: int = 1, tool: str = "Edit", **payload) -> Event:
    data = {"hook_event_name": "PostToolUse", "tool_name": tool, "session_id": "s1",
            "tool_input": {"file_path": "/p/x.py", "old_string": "a", "new_string": "b"},
            **payload}
    return Event(id=i, session_id="s1", event_name="PostToolUse", tool_name=tool,
                 tool_use_id=f"t{i}", payload=json.dumps(data), content_hash="h",
                 status="pending", attempts=0, created_at="2026-01-01T00:00:00.000Z",
                 created_at_epoch=1000 + i)


@attrs.frozen
class FakeReply:
    text: str
    input_tokens: int = 10
    output_tokens: int = 5


class FakeConversations:
    """``connect`` for ClaudeBackend: each conversation answers from one shared script."""

    def __init__(self, *script):
        self.script = list(script)
        self.opened = self.closed = 0
        self.asked: list[str] = []

    @asynccontextmanager
    async def connect(self):
        self.opened += 1
        try:
            yield self
        finally:
            self.closed += 1

    async def ask(self, message, timeout=None):  # noqa: ASYNC109 - the real API's shape
        self.asked.append(message)
        item = self.script.pop(0)
        if isinstance(item, Exception):
            raise item
        return FakeReply(item)


async def test_rules_backend_observes_an_edit_and_skips_low_signal():
    rules = RulesBackend()
    found = await rules.observe([event(1), event(2, tool="TodoWrite")], project="/p")
    assert [(o.type, o.source_event_ids, o.backend) for o in found] == [("change", (1,), "rules")]
    assert rules.tokens_used == 0


async def test_claude_backend_stores_only_valid_xml_with_source_ids():
    convs = FakeConversations(OBS, "<skip/>")
    governor = Governor()
    claude = ClaudeBackend(convs.connect, governor)
    found = await claude.observe([event(7), event(8)], project="/p")
    assert [(o.title, o.source_event_ids, o.backend, o.files_modified) for o in found] == [
        ("Renamed greet", (7,), "ai", ("x.py",))]
    assert 'id="7"' in convs.asked[0]
    assert claude.tokens_used == governor.tokens_today == 30
    assert convs.opened == 1 and governor.limiter.borrowed_tokens == 1
    await claude.aclose()
    assert convs.closed == 1 and governor.limiter.borrowed_tokens == 0


@pytest.mark.parametrize("text", ["", "Sure! I looked at the edit.", "<observation>oops"])
async def test_claude_backend_refuses_what_is_not_our_xml(text):
    claude = ClaudeBackend(FakeConversations(text).connect, Governor())
    with pytest.raises(BadReply):
        await claude.observe([event()], project="/p")
    await claude.aclose()


async def test_quota_reply_raises_quota_paused_and_drops_the_conversation():
    convs = FakeConversations(QUOTA, OBS)
    governor = Governor()
    claude = ClaudeBackend(convs.connect, governor)
    with pytest.raises(QuotaPaused) as caught:
        await claude.observe([event()], project="/p")
    assert caught.value.kind == "quota"
    assert convs.closed == 1 and governor.limiter.borrowed_tokens == 0
    assert len(await claude.observe([event()], project="/p")) == 1
    assert convs.opened == 2  # the retry went to a fresh conversation
    await claude.aclose()


async def test_error_result_with_quota_text_pauses_too():
    error = ObserverErrorResult("turn failed", text=QUOTA, subtype="error")
    claude = ClaudeBackend(FakeConversations(error).connect, Governor())
    with pytest.raises(QuotaPaused):
        await claude.observe([event()], project="/p")


async def test_a_crash_drops_the_conversation_and_the_next_turn_is_fresh():
    convs = FakeConversations(ObserverCrashed("gone"), OBS)
    claude = ClaudeBackend(convs.connect, Governor())
    with pytest.raises(ObserverCrashed):
        await claude.observe([event()], project="/p")
    assert (convs.opened, convs.closed) == (1, 1)
    assert len(await claude.observe([event()], project="/p")) == 1
    assert convs.opened == 2
    await claude.aclose()


async def test_summary_reply_becomes_a_summary():
    xml = ("<summary><request>rename</request><investigated>x.py</investigated>"
           "<learned>l</learned><completed>done</completed><next_steps>n</next_steps>"
           "</summary>")
    claude = ClaudeBackend(FakeConversations(xml).connect, Governor())
    summary = await claude.summarize([event(1), event(7)], ["rename greet"], project="/p",
                                     session_id="s1")
    assert (summary.request, summary.completed, summary.session_id) == ("rename", "done", "s1")
    assert summary.at_ms == 1007  # dated by its last event, not by when it was made
    await claude.aclose()


async def test_concurrency_cap_holds_a_third_conversation_until_one_is_idle():
    governor = Governor(concurrency=2)
    backends = [ClaudeBackend(FakeConversations(OBS, OBS).connect, governor) for _ in range(3)]
    done = []

    async def observe(i):
        await backends[i].observe([event(i)], project="/p")
        done.append(i)

    async with trio.open_nursery() as nursery:
        for i in range(3):
            nursery.start_soon(observe, i)
        await trio.testing.wait_all_tasks_blocked()
        assert len(done) == 2 and governor.statistics().conversations == 2
        assert governor.statistics().waiting == 1
        await backends[done[0]].idle()  # someone waits: the idle conversation is given back
    assert sorted(done) == [0, 1, 2] and governor.statistics().conversations == 2
    for backend in backends:
        await backend.aclose()
    assert governor.statistics().conversations == 0


def test_choose_backend():
    assert choose_backend("rules", True) == "rules"
    assert choose_backend("claude", False) == "claude"
    assert choose_backend("auto", True) == "claude"
    assert choose_backend("auto", lambda: False) == "rules"


async def test_backoff_doubles_to_an_hour_and_resets_on_success(autojump_clock):
    governor = Governor()
    start = trio.current_time()
    waits = []
    for _ in range(8):
        before = trio.current_time()
        governor.pause("quota")
        governor.pause("quota from another session")  # does not extend or double
        await governor.wait_resumed()
        waits.append(trio.current_time() - before)
    assert waits == [60, 120, 240, 480, 960, 1920, 3600, 3600]
    assert trio.current_time() - start == sum(waits)
    governor.succeeded()
    assert governor.paused_for() == 0 and governor.backoff == 60


def test_daily_budget_rolls_over_at_the_next_utc_day():
    day = [datetime.date(2026, 1, 1)]
    governor = Governor(daily_tokens=100, today=lambda: day[0])
    governor.spend(60)
    assert governor.budget_left()
    governor.spend(40)
    assert not governor.budget_left()
    day[0] = datetime.date(2026, 1, 2)
    assert governor.budget_left() and governor.tokens_today == 0


async def test_an_unused_conversation_is_closed_after_the_idle_time(autojump_clock):
    convs = FakeConversations(OBS, OBS)
    governor = Governor()
    claude = ClaudeBackend(convs.connect, governor)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(claude.close_when_idle, 300)
        await trio.sleep(10)
        await claude.observe([event()], project="/p")  # opened at t=10
        await trio.sleep(299)
        assert convs.closed == 0 and governor.limiter.borrowed_tokens == 1
        await trio.sleep(1)  # t=310: 300 s unused
        await trio.testing.wait_all_tasks_blocked()
        assert convs.closed == 1 and governor.limiter.borrowed_tokens == 0
        assert trio.current_time() == 310
        await claude.observe([event()], project="/p")  # a fresh one on demand
        assert convs.opened == 2
        nursery.cancel_scope.cancel()
    await claude.aclose()


async def test_single_turn_fallback_after_two_broken_conversations_then_multi_turn_again(
        autojump_clock):
    convs = FakeConversations(ObserverCrashed("gone"), ObserverCrashed("gone again"), OBS,
                              OBS, OBS)
    governor = Governor()
    claude = ClaudeBackend(convs.connect, governor, fallback_after=2, retry_multi_after=600)
    with pytest.raises(ObserverCrashed):
        await claude.observe([event(1)], project="/p")
    assert not claude.single_turn
    # The second break turns the fallback on; this batch goes to a one-turn conversation.
    found = await claude.observe([event(1), event(2)], project="/p")
    assert [o.source_event_ids for o in found] == [(1, 2)]
    assert claude.single_turn and claude.single_turns == 1
    assert convs.asked[-1].startswith("Observe each of these events")
    assert convs.opened == convs.closed == 3 and governor.limiter.borrowed_tokens == 0
    await claude.observe([event(3)], project="/p")
    assert claude.single_turns == 2 and convs.opened == convs.closed == 4
    await trio.sleep(600)  # ten minutes later: multi-turn again, held open
    await claude.observe([event(4)], project="/p")
    assert not claude.single_turn and claude.single_turns == 2
    assert convs.opened == 5 and convs.closed == 4 and governor.limiter.borrowed_tokens == 1
    await claude.aclose()
