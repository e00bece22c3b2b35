"""memlite's own stream-json client (``streamjson.py`` + ``conversation.py``): it does not
import the SDK, it gives the CLI what the SDK gave it, and it frames and answers as
STACK.md §4 says. The failure modes are in ``test_conversation.py``.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memlite.errors import ObserverCrashed, ObserverErrorResult, ObserverProtocolError
from memlite.observer import registry, streamjson
from memlite.observer.conversation import ConversationConfig, open_conversation

HERE = Path(__file__).resolve().parent
FAKE = HERE / "fake_claude.py"
REPO = HERE.parent.parent
HEAVY = ("claude_agent_sdk", "mcp", "pydantic")

AFTER_A_TURN = """
import json, sys, trio
from pathlib import Path
from memlite.observer.conversation import ConversationConfig, open_conversation

async def main():
    cfg = ConversationConfig(data_dir=Path(sys.argv[1]), session="m", system_prompt="S",
                             cli_path=Path(sys.argv[2]))
    async with open_conversation(cfg) as conv:
        text = (await conv.ask("event")).text
    return text

text = trio.run(main)
print(json.dumps({"text": text, "loaded": [m for m in sys.argv[3:] if m in sys.modules]}))
"""


def test_a_turn_loads_neither_the_sdk_nor_mcp(tmp_path, data_dir):
    """The worker's RSS bar (issue 14): the SDK's import alone cost ~37 MB. A fresh
    interpreter, so that no other test's import hides it (old code: all three loaded)."""
    script = tmp_path / "turn.py"
    script.write_text(AFTER_A_TURN)
    out = subprocess.run([sys.executable, str(script), str(data_dir), str(FAKE), *HEAVY],
                         capture_output=True, text=True, timeout=60, cwd=REPO, check=True)
    got = json.loads(out.stdout.splitlines()[-1])
    assert "fake turn 1" in got["text"]
    assert got["loaded"] == []
    assert registry.observer_pids(data_dir) == []


ENV_DUMP = """#!{python}
import json, os, sys
with open({out!r}, "a") as f:
    f.write(json.dumps({{"argv": sys.argv[1:], "env": dict(os.environ)}}) + "\\n")
sys.path.insert(0, {here!r})
import fake_claude
fake_claude.main()
"""


def _changed(env: dict[str, str]) -> dict[str, str]:
    """What a run added to or changed in this process's environment (memlite's own
    launcher variables and the wrapper's aside)."""
    return {k: v for k, v in env.items() if os.environ.get(k) != v
            and not k.startswith("MEMLITE_OBSERVER_") and k != "PYENV_DIR"}


async def test_argv_env_and_input_are_the_sdks(tmp_path, data_dir, monkeypatch):
    """Same command line, environment changes and stdin lines as claude-agent-sdk's own
    client for the options the observer used with it (tools=[], allowed_tools=[],
    setting_sources=[], no MCP servers or plugins, can_use_tool set, resume)."""
    sdk = pytest.importorskip("claude_agent_sdk")
    monkeypatch.setenv("CLAUDECODE", "1")  # an outer Claude Code session: not passed on
    dump = tmp_path / "env.jsonl"
    fake = tmp_path / "dump_claude.py"
    fake.write_text(ENV_DUMP.format(python=sys.executable, out=str(dump), here=str(HERE)))
    fake.chmod(0o755)
    env = {"FAKE_CLAUDE_MODE": "ok,tool", "FAKE_CLAUDE_LOG": str(tmp_path / "fake.jsonl"),
           "EXTRA": "x"}
    workdir = tmp_path / "work"
    workdir.mkdir()

    async def deny(name, tool_input, context):
        return sdk.PermissionResultDeny(message=streamjson.NO_TOOLS, interrupt=False)

    options = sdk.ClaudeAgentOptions(
        cli_path=fake, cwd=workdir, env=env, system_prompt="SYS\nline 2",
        model="claude-test-1", max_turns=3, resume="sid-7", tools=[], allowed_tools=[],
        setting_sources=[], mcp_servers={}, plugins=[], can_use_tool=deny)
    client = sdk.ClaudeSDKClient(options)
    await client.connect()
    messages = client.receive_messages()  # one iterator: the SDK warns when one is dropped
    for prompt in ("one", "two"):
        await client.query(prompt)
        while not isinstance(await anext(messages), sdk.ResultMessage):
            pass
    await client.disconnect()
    with contextlib.suppress(Exception):  # read to its end, as memlite's old code did
        async for _ in messages:
            pass
    sdk_run = [json.loads(line) for line in dump.read_text().splitlines()]
    sdk_stdin = [e["data"] for e in map(json.loads, (tmp_path / "fake.jsonl").read_text()
                                        .splitlines()) if e["kind"] == "stdin"]
    dump.unlink()
    (tmp_path / "fake.jsonl").unlink()

    config = ConversationConfig(data_dir=data_dir, session="s", system_prompt="SYS\nline 2",
                                model="claude-test-1", max_turns=3, resume="sid-7",
                                cli_path=fake, env=env)
    async with open_conversation(config) as conv:
        assert (await conv.ask("one")).session_id == "sid-7"
        assert (await conv.ask("two")).text == "tool decision: deny"
    ours = [json.loads(line) for line in dump.read_text().splitlines()]
    our_stdin = [e["data"] for e in map(json.loads, (tmp_path / "fake.jsonl").read_text()
                                        .splitlines()) if e["kind"] == "stdin"]

    assert ours[0]["argv"] == sdk_run[0]["argv"]
    assert "--permission-prompt-tool" in ours[0]["argv"] and "--resume=sid-7" in ours[0]["argv"]
    sdk_env, our_env = _changed(sdk_run[0]["env"]), _changed(ours[0]["env"])
    assert our_env.pop("PWD") == str(data_dir / "observer" / "s")
    assert sdk_env.pop("PWD") == str(workdir)
    assert our_env == sdk_env
    assert "CLAUDECODE" not in ours[0]["env"]
    assert our_env["CLAUDE_CODE_ENTRYPOINT"] == "sdk-py"

    def same(messages: list[dict]) -> list[dict]:  # request ids are random
        return [{**m, "request_id": "id"} if "request_id" in m else
                {**m, "response": {**m["response"], "request_id": "id"}}
                if m.get("type") == "control_response" else m for m in messages]

    assert same(our_stdin) == same(sdk_stdin)
    assert [m["type"] for m in our_stdin] == ["control_request", "user", "user",
                                              "control_response"]


async def test_hook_and_mcp_requests_get_an_error_answer(data_dir, tmp_path):
    """The CLI never waits for us: a hook_callback and an mcp_message are answered with
    an error under their own request ids; a cancel, a rate-limit event, a stream event,
    a session state and an unknown type are skipped; the turn completes."""
    log = tmp_path / "fake.jsonl"
    config = ConversationConfig(data_dir=data_dir, session="c", system_prompt="S",
                                cli_path=FAKE, turn_timeout=10,
                                env={"FAKE_CLAUDE_MODE": "control,ok",
                                     "FAKE_CLAUDE_LOG": str(log)})
    async with open_conversation(config) as conv:
        assert (await conv.ask("first")).text == "control: error,error"
        assert "fake turn 2" in (await conv.ask("second")).text
    answers = [e["data"] for e in map(json.loads, log.read_text().splitlines())
               if e["kind"] == "control"]
    assert [a["subtype"] for a in answers] == ["error", "error"]
    assert all(a["request_id"].startswith("req_ctl_") for a in answers)
    assert "hook_callback" in answers[0]["error"] and "mcp_message" in answers[1]["error"]
    assert registry.observer_pids(data_dir) == []


@pytest.mark.parametrize(("mode", "error"), [("refuse_init", ObserverCrashed),
                                             ("error_init", ObserverErrorResult)])
async def test_a_refused_start(data_dir, mode, error):
    config = ConversationConfig(data_dir=data_dir, session="r", system_prompt="S",
                                cli_path=FAKE, connect_timeout=10,
                                env={"FAKE_CLAUDE_MODE": mode})
    with pytest.raises(error) as info:
        async with open_conversation(config):
            pytest.fail("the conversation should not have started")
    if mode == "error_init":
        assert info.value.text.startswith("No conversation found")
    assert registry.observer_pids(data_dir) == []


def test_lines_are_cut_across_chunks_and_bounded():
    buf = streamjson.LineBuffer(max_line=16)
    buf.push(b'{"a": 1}\n{"b"')
    buf.push(b': 2}\n\nnoise\n{"c":')
    assert [buf.next_line() for _ in range(5)] == [b'{"a": 1}', b'{"b": 2}', b"", b"noise",
                                                    None]
    assert buf.tail() == b'{"c":'
    with pytest.raises(ObserverProtocolError, match="16 bytes"):
        buf.push(b"x" * 17)  # no newline yet: refused before the line ends
    with pytest.raises(ObserverProtocolError):
        streamjson.LineBuffer(max_line=4).push(b"12345\n")


@pytest.mark.parametrize(("raw", "parsed"), [
    (b"", None), (b"  \r", None), (b"[SandboxDebug] hello", None), (b"[1, 2]", None),
    (b'{"type": "x"}\r', {"type": "x"}), (b' {"type": "y"} ', {"type": "y"}),
])
def test_lines_without_a_message_are_skipped(raw, parsed):
    assert streamjson.parse_line(raw) == parsed


@pytest.mark.parametrize("raw", [b'{"type": "assistant", corrupt', b'{"a": "\xff"}'])
def test_a_corrupt_object_line_is_a_protocol_error(raw):
    with pytest.raises(ObserverProtocolError):
        streamjson.parse_line(raw)


@pytest.mark.parametrize("message", [
    {"type": "assistant", "message": {"role": "assistant"}},
    {"type": "result", "subtype": "success", "session_id": "s"},
    {"type": "result", "is_error": "no", "subtype": "success"},
])
def test_a_message_without_its_fields_is_a_protocol_error(message):
    with pytest.raises(ObserverProtocolError):
        streamjson.Turn(None).take(message)


def test_a_turn_keeps_text_blocks_and_the_result():
    turn = streamjson.Turn("old")
    turn.take({"type": "system", "subtype": "init", "session_id": "new"})
    turn.take({"type": "assistant", "message": {"content": [
        {"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "a"},
        {"type": "tool_use", "name": "Bash"}, {"type": "text", "text": "b"}]}})
    turn.take({"type": "user", "message": {"content": []}})
    turn.take({"type": "result", "subtype": "success", "is_error": False, "num_turns": 2,
               "session_id": "new", "usage": {"input_tokens": 5, "output_tokens": True}})
    assert (turn.texts, turn.session_id, turn.error()) == (["a", "b"], "new", None)
    assert turn.usage() == {"input_tokens": 5, "output_tokens": 0, "cache_read_tokens": 0,
                            "cache_creation_tokens": 0, "num_turns": 2}
