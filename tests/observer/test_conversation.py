"""The observer conversation against the fake CLI (``fake_claude.py``): every failure mode.

Real subprocesses, so real time (no MockClock); every test asserts a time bound and, via
the marker every observer process carries in its environment, that no process is left.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import trio

from memlite.errors import (
    ObserverClosed,
    ObserverCrashed,
    ObserverErrorResult,
    ObserverProtocolError,
    ObserverTimeout,
    ObserverUnavailable,
)
from memlite.observer import registry
from memlite.observer.conversation import ConversationConfig, open_conversation

HERE = Path(__file__).resolve().parent
FAKE = HERE / "fake_claude.py"
FIXTURE = (HERE.parent / "fixtures" / "claude-code" / "v2.1.332" / "stream-json"
           / "sdk-protocol.client-2-turns.jsonl")
QUOTA = "You've hit your usage limit · resets 3pm (UTC). /upgrade to increase your limit."


@pytest.fixture
def make_config(data_dir, tmp_path):
    log = tmp_path / "fake.jsonl"

    def make(mode: str = "ok", replies: list[str] | None = None, **kw) -> ConversationConfig:
        env = {"FAKE_CLAUDE_MODE": mode, "FAKE_CLAUDE_LOG": str(log)}
        if replies is not None:
            script = tmp_path / "replies.json"
            script.write_text(json.dumps(replies))
            env["FAKE_CLAUDE_SCRIPT"] = str(script)
        kw.setdefault("turn_timeout", 5.0)
        kw.setdefault("connect_timeout", 5.0)
        kw.setdefault("cli_path", FAKE)
        return ConversationConfig(data_dir=data_dir, session="sess-1", system_prompt="SYS",
                                  env=env, **kw)

    make.log = log  # type: ignore[attr-defined]
    return make


def fake_log(path: Path, kind: str) -> list:
    if not path.exists():
        return []
    return [e["data"] for e in map(json.loads, path.read_text().splitlines())
            if e["kind"] == kind]


def assert_gone(conv, data_dir: Path) -> None:
    assert registry.marked_pids(conv.marker, conv.config.data_dir) == []
    assert registry.observer_pids(data_dir) == []
    assert not list((data_dir / "observers").glob("*.json"))


async def test_three_turns_on_one_process(make_config, data_dir):
    replies = ["<observation>one</observation>", "<skip/>", "<summary>three</summary>"]
    started = time.monotonic()
    async with open_conversation(make_config(replies=replies)) as conv:
        assert len(registry.observer_pids(data_dir)) == 1
        got = [await conv.ask(f"event {i}") for i in range(3)]
    elapsed = time.monotonic() - started
    assert [r.text for r in got] == replies
    assert [(r.input_tokens, r.output_tokens, r.num_turns) for r in got] == \
        [(100, 20, 1), (101, 21, 2), (102, 22, 3)]
    assert got[0].cache_read_tokens == 7
    assert conv.session_id and {r.session_id for r in got} == {conv.session_id}
    assert len(fake_log(make_config.log, "argv")) == 1, "one CLI process for three turns"
    assert elapsed < 3.0
    assert_gone(conv, data_dir)


async def test_locked_down_command_line_and_workdir(make_config, data_dir):
    async with open_conversation(make_config(model="claude-test-1", max_turns=3)) as conv:
        await conv.ask("hello")
    argv = fake_log(make_config.log, "argv")[0]
    assert argv[argv.index("--tools") + 1] == ""
    assert "--setting-sources=" in argv
    assert argv[argv.index("--model") + 1] == "claude-test-1"
    assert argv[argv.index("--max-turns") + 1] == "3"
    assert argv[argv.index("--system-prompt") + 1] == "SYS"
    assert argv[argv.index("--permission-prompt-tool") + 1] == "stdio"
    assert "--plugin-dir" not in argv and "--allowedTools" not in argv
    workdir = data_dir / "observer" / "sess-1"
    assert workdir.is_dir() and not any(workdir.iterdir())
    assert_gone(conv, data_dir)


async def test_resume_passes_the_session_id(make_config):
    async with open_conversation(make_config(resume="sid-123")) as conv:
        reply = await conv.ask("again")
    assert "--resume=sid-123" in fake_log(make_config.log, "argv")[0]
    assert reply.session_id == conv.session_id == "sid-123"


@pytest.mark.parametrize(("mode", "error", "bound"), [
    ("crash", ObserverCrashed, 2.0),
    ("garbage", ObserverProtocolError, 2.0),
    ("huge", ObserverProtocolError, 3.0),
    ("error", ObserverErrorResult, 2.0),
    ("hang", ObserverTimeout, 1.0 + 1.5),
])
async def test_failing_turn(make_config, data_dir, mode, error, bound):
    started = time.monotonic()
    with pytest.raises(error) as info:
        async with open_conversation(make_config(mode, turn_timeout=1.0)) as conv:
            await conv.ask("event")
    assert time.monotonic() - started < bound
    if mode == "crash":
        assert info.value.exit_code == 3
    if mode == "error":
        assert info.value.text == "fake failure"
    with pytest.raises(ObserverClosed):
        await conv.ask("after the failure")
    assert_gone(conv, data_dir)


@pytest.mark.parametrize(("mode", "error"), [("crash_init", ObserverCrashed),
                                             ("hang_init", ObserverTimeout)])
async def test_failing_start(make_config, data_dir, mode, error):
    started = time.monotonic()
    with pytest.raises(error):
        async with open_conversation(make_config(mode, connect_timeout=1.0)):
            pytest.fail("the conversation should not have started")
    assert time.monotonic() - started < 2.5
    assert registry.observer_pids(data_dir) == []


async def test_a_start_cancelled_from_outside_ends_at_once(make_config, data_dir):
    """A stopping worker cuts an observer whose CLI is still in its handshake (a real CLI
    takes a second or two to start): the start must end at once, its process killed, not
    sit in the SDK's own 5 s close of a cancelled connect (the worker then overran its
    stop bound: 6.1 s from SIGTERM to exit, the root cancelled)."""
    cancelled_at = None
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:

            async def cancel_once_spawned() -> None:
                nonlocal cancelled_at
                # Polls a file another process writes (the handshake was sent): no Event.
                while not fake_log(make_config.log, "stdin"):  # noqa: ASYNC110
                    await trio.sleep(0.02)
                cancelled_at = time.monotonic()
                scope.cancel()

            nursery.start_soon(cancel_once_spawned)
            async with open_conversation(make_config("hang_init", connect_timeout=30.0)):
                pytest.fail("the conversation should not have started")
    assert cancelled_at is not None and scope.cancelled_caught
    assert time.monotonic() - cancelled_at < 2.5  # measured 0.0x s; the SDK alone: 5 s
    assert registry.observer_pids(data_dir) == []


async def test_turn_deadline_fires_at_our_timeout(make_config, data_dir):
    async with open_conversation(make_config("ok,hang")) as conv:
        await conv.ask("first")
        started = time.monotonic()
        with pytest.raises(ObserverTimeout):
            await conv.ask("second", timeout=0.8)
        waited = time.monotonic() - started
        closing = time.monotonic()
    closed = time.monotonic() - closing
    assert 0.8 <= waited < 1.05, waited  # measured 0.80x s; the slack is for a loaded CI
    assert closed < 0.5, closed  # already killed: no 5 + 5 s SDK close
    assert_gone(conv, data_dir)


async def test_cancelled_turn_breaks_the_conversation(make_config, data_dir):
    async with open_conversation(make_config("hang")) as conv:
        with trio.move_on_after(0.3):
            await conv.ask("never answered")
        with pytest.raises(ObserverClosed):
            await conv.ask("next")
    assert_gone(conv, data_dir)


async def test_close_is_bounded_when_the_cli_ignores_end_of_input(make_config, data_dir):
    async with open_conversation(make_config("ok,hang", close_grace=0.5)) as conv:
        await conv.ask("only turn")
        closing = time.monotonic()
    assert 0.5 <= time.monotonic() - closing < 1.0
    assert_gone(conv, data_dir)


async def test_quota_prose_comes_back_as_text(make_config):
    async with open_conversation(make_config("quota")) as conv:
        reply = await conv.ask("event")
    assert reply.text == QUOTA  # classified by observer/parse.py, never stored


async def test_non_json_noise_is_skipped(make_config):
    async with open_conversation(make_config("noise", replies=["<skip/>"])) as conv:
        assert (await conv.ask("event")).text == "<skip/>"


async def test_tool_requests_are_denied(make_config, data_dir):
    async with open_conversation(make_config("tool")) as conv:
        reply = await conv.ask("event")
    assert reply.text == "tool decision: deny"
    assert fake_log(make_config.log, "decision") == ["deny"]
    assert_gone(conv, data_dir)


async def test_missing_cli_is_unavailable(make_config, tmp_path):
    with pytest.raises(ObserverUnavailable):
        async with open_conversation(make_config(cli_path=tmp_path / "no-such-claude")):
            pass


async def test_fake_speaks_the_recorded_protocol(make_config):
    """Every key the fake prints or reads exists in the real 2.1.332 capture."""
    real: dict[tuple, set] = {}
    for line in FIXTURE.read_text().splitlines():
        entry = json.loads(line)
        data = entry["data"]
        if isinstance(data, dict):
            real.setdefault((entry["dir"], data["type"], data.get("subtype")), set()).update(data)
    async with open_conversation(make_config()) as conv:
        await conv.ask("event")
    sent = [m for m in fake_log(make_config.log, "stdin") if m["type"] == "user"]
    assert set(sent[0]) == real[("in", "user", None)]
    stdout = [("out", "system", "init"), ("out", "assistant", None), ("out", "result", "success")]
    for key in stdout:
        assert key in real
    assert "session_id" in real[("out", "result", "success")]
