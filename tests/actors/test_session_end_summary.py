"""A session that ends without a Stop after its last prompt still gets its summary.

Found in round 7's new-user trial with the real CLI: a prompt interrupted with Esc and
then ``/exit`` sends UserPromptSubmit and SessionEnd but no Stop. The observer summarized
on Stop only, so such a session left no summary, and its prompt (the only thing it held)
never reached the next session. The SessionEnd now makes the summary when a prompt has
no Stop after it; a session whose last prompt was answered (its Stop made the summary)
gets no second one.

Real storage actor and SQLite threads (``observer_helpers.observing``), rules backend.
"""

from __future__ import annotations

from memlite.actors.storage import StoreEvent, StorePrompt
from tests.actors.observer_helpers import add_events, db_rows, doorbell, observing


async def _prompt(hub, text: str, session_id: str = "s1") -> int:
    """What the worker stores for UserPromptSubmit: the event and the prompt row."""
    event = await hub.ask(lambda reply: StoreEvent(
        session_id=session_id, event_name="UserPromptSubmit", reply=reply,
        payload={"hook_event_name": "UserPromptSubmit", "prompt": text}))
    await hub.ask(lambda reply: StorePrompt(session_id=session_id, prompt_text=text,
                                            reply=reply))
    return event.id


async def _event(hub, name: str, session_id: str = "s1", **payload) -> int:
    result = await hub.ask(lambda reply: StoreEvent(
        session_id=session_id, event_name=name, reply=reply,
        payload={"hook_event_name": name, **payload}))
    return result.id


def _summaries(data_dir) -> list[tuple[str, str]]:
    return [(r[0], r[1]) for r in db_rows(
        data_dir, "SELECT request, completed FROM summaries ORDER BY id")]


def _status(data_dir, event_id: int) -> str:
    return db_rows(data_dir, "SELECT status FROM events WHERE id = ?", (event_id,))[0][0]


async def test_a_prompt_ended_without_a_stop_is_summarized_at_session_end(data_dir):
    """Esc, then /exit: prompt and SessionEnd only (old code: no summary, end skipped)."""
    async with observing(data_dir) as hub:
        await _event(hub, "SessionStart", source="startup")
        await _prompt(hub, "the refund cron runs at 02:00 UTC")
        end = await _event(hub, "SessionEnd", reason="prompt_input_exit")
        await hub.factory("s1").handle(doorbell("SessionEnd"))
    assert _summaries(data_dir) == [("the refund cron runs at 02:00 UTC", "")]
    assert _status(data_dir, end) == "done"


async def test_tool_work_interrupted_before_its_stop_is_summarized_at_session_end(data_dir):
    """The turn's edits were observed; the summary still comes with the SessionEnd."""
    async with observing(data_dir) as hub:
        await _prompt(hub, "bump the counters")
        await add_events(hub, 2)
        await _event(hub, "SessionEnd", reason="other")
        await hub.factory("s1").handle(doorbell("SessionEnd"))
    [(request, completed)] = _summaries(data_dir)
    assert request == "bump the counters"
    assert "m0.py" in completed and "m1.py" in completed


async def test_an_answered_prompt_gets_no_second_summary_at_session_end(data_dir):
    """Prompt, Stop (its summary), SessionEnd: one summary, the end skipped."""
    async with observing(data_dir) as hub:
        await _prompt(hub, "what is in m0.py")
        await _event(hub, "Stop", last_assistant_message="a = 0")
        session = hub.factory("s1")
        await session.handle(doorbell("Stop"))
        end = await _event(hub, "SessionEnd", reason="prompt_input_exit")
        await session.handle(doorbell("SessionEnd"))
    assert _summaries(data_dir) == [("what is in m0.py", "a = 0")]
    assert _status(data_dir, end) == "skipped"


async def test_stop_and_session_end_pending_together_make_one_summary(data_dir):
    async with observing(data_dir) as hub:
        await _prompt(hub, "what is in m0.py")
        stop = await _event(hub, "Stop", last_assistant_message="a = 0")
        end = await _event(hub, "SessionEnd", reason="prompt_input_exit")
        await hub.factory("s1").handle(doorbell("SessionEnd"))
    assert _summaries(data_dir) == [("what is in m0.py", "a = 0")]
    assert (_status(data_dir, stop), _status(data_dir, end)) == ("done", "skipped")


async def test_a_second_prompt_interrupted_after_an_answered_one_is_summarized(data_dir):
    async with observing(data_dir) as hub:
        await _prompt(hub, "what is in m0.py")
        await _event(hub, "Stop", last_assistant_message="a = 0")
        session = hub.factory("s1")
        await session.handle(doorbell("Stop"))
        await _prompt(hub, "now rename it to m9.py")
        end = await _event(hub, "SessionEnd", reason="prompt_input_exit")
        await session.handle(doorbell("SessionEnd"))
    assert len(_summaries(data_dir)) == 2
    assert _status(data_dir, end) == "done"


async def test_a_session_with_no_prompt_gets_no_summary_at_its_end(data_dir):
    async with observing(data_dir) as hub:
        await _event(hub, "SessionStart", source="startup")
        end = await _event(hub, "SessionEnd", reason="other")
        await hub.factory("s1").handle(doorbell("SessionEnd"))
    assert _summaries(data_dir) == []
    assert _status(data_dir, end) == "skipped"


async def test_a_long_sessions_summary_has_its_end(data_dir):
    """2,000 tool events, then the Stop (round 7's trial: 2,004 events): the summary read
    the session's oldest 2,000 events, so Claude's last answer, the latest test run and
    the last files changed were left out of it. It reads the newest ones now."""
    from memlite.storage import connect, insert_event, start_session
    from tests.actors.observer_helpers import PROJECT

    conn = connect(data_dir)
    try:
        with conn:
            start_session(conn, session_id="s1", project=PROJECT, at_ms=1_000)
            for i in range(2_001):
                event = insert_event(
                    conn, session_id="s1", event_name="PostToolUse", tool_name="Read",
                    tool_use_id=f"t{i}", at_ms=1_001 + i,
                    payload={"tool_input": {"file_path": f"{PROJECT}/part_{i}.py"},
                             "tool_response": {"file": {"content": "x"}}, "cwd": PROJECT})
                conn.execute("UPDATE events SET status = 'done' WHERE id = ?", (event.id,))
    finally:
        conn.close()
    async with observing(data_dir) as hub:
        await _prompt(hub, "reconcile every ledger file")
        await _event(hub, "Stop", last_assistant_message="All reconciliation checks ran.")
        await hub.factory("s1").handle(doorbell("Stop"))
    [(request, completed)] = _summaries(data_dir)
    assert request == "reconcile every ledger file"
    assert completed.endswith("All reconciliation checks ran.")
