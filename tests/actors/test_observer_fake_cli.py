"""ClaudeBackend over colleague B's fake CLI (real subprocesses, real time, no network):
events in, AI observations stored, events done, no process left."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
import trio

from memlite.config import load_settings
from memlite.observer import registry
from memlite.observer.backend import ClaudeBackend, claude_factory
from memlite.observer.conversation import ConversationConfig, open_conversation
from memlite.observer.governor import Governor
from memlite.observer.prompts import SYSTEM_PROMPT
from tests.actors.observer_helpers import add_events, db_rows, doorbell, observing

pytestmark = pytest.mark.loop_guard  # issue 17: /proc scans and file writes off the loop

FAKE = Path(__file__).resolve().parent.parent / "observer" / "fake_claude.py"
REPLY = ("<observation><type>change</type><title>AI saw edit {n}</title>"
         "<facts><fact>a changed</fact></facts></observation>")


async def test_claude_backend_over_the_fake_cli_stores_ai_observations(data_dir, tmp_path):
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([REPLY.format(n=n) for n in range(3)] + ["<skip/>"]))
    env = {"FAKE_CLAUDE_MODE": "ok", "FAKE_CLAUDE_SCRIPT": str(script)}
    governor = Governor()
    make_ai = claude_factory(load_settings(), governor, cli_path=FAKE, env=env,
                             turn_timeout=10.0, connect_timeout=10.0)
    async with observing(data_dir, make_ai=make_ai, governor=governor) as hub:
        ids = await add_events(hub, 4)
        session = hub.factory("s1")
        try:
            await session.handle(doorbell())
            assert session.statistics().backend == "claude"
            assert session.statistics().tokens_used == governor.tokens_today
        finally:
            await session.ai.aclose()
    rows = db_rows(data_dir, "SELECT backend, title, source_event_ids FROM observations "
                             "ORDER BY id")
    assert rows == [("ai", f"AI saw edit {n}", f"[{ids[n]}]") for n in range(3)]
    assert db_rows(data_dir, "SELECT status FROM events ORDER BY id") == [
        ("done",), ("done",), ("done",), ("skipped",)]
    assert governor.statistics().conversations == 0
    assert registry.observer_pids(data_dir) == []
    # The conversation's SDK session id is recorded (for diagnosis; never resumed).
    [(sdk_session_id,)] = db_rows(data_dir, "SELECT sdk_session_id FROM sessions")
    assert sdk_session_id


async def test_a_quota_reply_from_the_fake_cli_pauses_and_loses_nothing(data_dir, tmp_path):
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([REPLY.format(n=n) for n in range(3)]))
    settings = load_settings()

    def config(mode: str) -> ConversationConfig:
        return ConversationConfig.from_settings(
            settings, "s1", SYSTEM_PROMPT, cli_path=FAKE, turn_timeout=10.0,
            connect_timeout=10.0, env={"FAKE_CLAUDE_MODE": mode,
                                       "FAKE_CLAUDE_SCRIPT": str(script)})

    # The first CLI answers with quota prose; the fresh one after the pause answers.
    configs = itertools.chain([config("quota")], itertools.repeat(config("ok")))
    governor = Governor(base_backoff=0.2)  # real processes, real time: a short pause
    backend = ClaudeBackend(lambda: open_conversation(next(configs)), governor,
                            turn_timeout=10.0)
    async with observing(data_dir, make_ai=lambda sid: backend, governor=governor) as hub:
        ids = await add_events(hub, 2)
        try:
            await hub.factory("s1").handle(doorbell())
        finally:
            await backend.aclose()
    rows = db_rows(data_dir, "SELECT backend, source_event_ids, superseded_by IS NOT NULL "
                             "FROM observations ORDER BY id")
    # Provisional rules observations during the pause, superseded by the AI's after it.
    assert [r for r in rows if r[0] == "rules"] == [("rules", f"[{i}]", 1) for i in ids]
    assert [r[1] for r in rows if r[0] == "ai"] == [f"[{i}]" for i in ids]
    assert db_rows(data_dir, "SELECT status FROM events") == [("done",), ("done",)]
    assert backend.conversations == 2 and governor.backoff == 0.2  # reset by success
    assert registry.observer_pids(data_dir) == []


async def test_no_conversation_held_falls_back_to_one_turn_per_batch(data_dir, tmp_path):
    # The first two CLIs die at connect: multi-turn is given up for this session and
    # every batch goes to a fresh one-turn conversation, closed right after its turn.
    env = {"FAKE_CLAUDE_MODE": "crash_init_first",
           "FAKE_CLAUDE_COUNTER": str(tmp_path / "count"), "FAKE_CLAUDE_FAIL_CONNECTS": "2"}
    governor = Governor()
    make_ai = claude_factory(load_settings(), governor, cli_path=FAKE, env=env,
                             turn_timeout=10.0, connect_timeout=10.0)
    async with observing(data_dir, make_ai=make_ai, governor=governor) as hub:
        ids = await add_events(hub, 2)
        session = hub.factory("s1")
        try:
            await session.handle(doorbell())
            backend = session.ai
            assert backend.single_turn and backend.single_turns == 2
            assert backend.conversations == 0  # no multi-turn conversation was ever held
            assert governor.limiter.borrowed_tokens == 0
        finally:
            await session.ai.aclose()
    rows = db_rows(data_dir, "SELECT backend, title, source_event_ids FROM observations "
                             "ORDER BY id")
    assert rows == [("ai", f"fake turn 1 of process {n}", f"[{i}]")
                    for n, i in zip((3, 4), ids, strict=True)]
    assert db_rows(data_dir, "SELECT status FROM events") == [("done",), ("done",)]
    assert (tmp_path / "count").read_text() == "4"  # 2 failed connects + 2 single turns
    [(sdk_session_id,)] = db_rows(data_dir, "SELECT sdk_session_id FROM sessions")
    assert sdk_session_id
    assert registry.observer_pids(data_dir) == []


async def test_quick_exit_keeps_a_slow_ai_summary_from_the_fake_cli(data_dir, tmp_path):
    """``claude -p`` / a quick /exit: Stop and SessionEnd back to back, an AI summary that
    takes 2 s, a stop grace of 1 s. The old code marked the Stop ``skipped``, cancelled
    the actor after the grace: ``summaries: []``. Now SessionEnd waits for it."""
    from memlite.actors.core import spawn
    from memlite.actors.session import CountSessions, Deliver, EndSession, SessionSupervisor
    from memlite.actors.storage import StoreEvent

    env = {"FAKE_CLAUDE_MODE": "ok", "FAKE_CLAUDE_SUMMARY_DELAY": "2"}
    governor = Governor()
    make_ai = claude_factory(load_settings(), governor, cli_path=FAKE, env=env,
                             turn_timeout=20.0, connect_timeout=10.0)
    async with observing(data_dir, make_ai=make_ai, governor=governor) as hub:
        await add_events(hub, 1)
        stop = await hub.ask(lambda reply: StoreEvent(
            session_id="s1", event_name="Stop", reply=reply,
            payload={"hook_event_name": "Stop", "last_assistant_message": "Done."}))
        sup = SessionSupervisor(factory=hub.factory, stop_grace=1.0)
        async with spawn(sup.run) as ref:
            for name in ("Stop", "SessionEnd"):
                await ref.send(Deliver(session_id="s1", event_id=None, event_name=name))
            await ref.send(EndSession(session_id="s1", reason="prompt_input_exit"))
            with trio.fail_after(60):
                while (await ref.ask(lambda reply: CountSessions(reply=reply),  # noqa: ASYNC110
                                     timeout=5)).ending:
                    await trio.sleep(0.05)
    assert db_rows(data_dir, "SELECT request FROM summaries") == [("fake AI summary",)]
    assert db_rows(data_dir, "SELECT status FROM events WHERE id = ?",
                   (stop.id,)) == [("done",)]
    assert registry.observer_pids(data_dir) == []
