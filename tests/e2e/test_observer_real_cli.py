"""The observer conversation with the REAL bundled CLI against the fake Messages API.

Second tier of the observer tests (DESIGN §6): the same ``Conversation`` the worker uses,
its CLI started through our launcher, offline (``ANTHROPIC_BASE_URL`` on 127.0.0.1,
a dummy key, isolated HOME, the quiet switches).
"""

from __future__ import annotations

import time

import pytest

from memlite.observer import registry
from memlite.observer.conversation import ConversationConfig, open_conversation

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

OBSERVATION = ("<observation><type>change</type><title>Greeter prints hello</title>"
               "<facts><fact>hello.py prints hello</fact></facts>"
               "<files_modified><file>hello.py</file></files_modified></observation>")


async def test_two_turns_through_the_real_cli(claude_bin, fake_api_factory, tmp_path,
                                              data_dir):
    api = fake_api_factory({"observer": [{"text": OBSERVATION}]})
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "ANTHROPIC_BASE_URL": api.url,
           "ANTHROPIC_API_KEY": "sk-ant-dummy-not-a-key",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"}
    config = ConversationConfig(data_dir=data_dir, session="real-1", cli_path=claude_bin,
                                system_prompt="You turn tool events into <observation> XML.",
                                model="claude-haiku-4-5", env=env, turn_timeout=60,
                                connect_timeout=60)
    started = time.monotonic()
    async with open_conversation(config) as conv:
        first = await conv.ask("SCRIPT=observer\n<event tool='Edit'>hello.py</event>")
        second = await conv.ask("<event tool='Bash'>python hello.py</event>")
        assert len(registry.observer_pids(data_dir)) == 1
    elapsed = time.monotonic() - started
    assert first.text == second.text == OBSERVATION
    assert first.output_tokens > 0 and first.input_tokens > 0
    assert first.session_id and first.session_id == second.session_id == conv.session_id
    bodies = api.message_requests("SCRIPT=observer")
    assert len(bodies) == 2
    assert [m["role"] for m in bodies[1]["messages"]] == ["user", "assistant", "user"]
    assert bodies[0]["model"] == "claude-haiku-4-5"
    assert not bodies[0].get("tools"), "the observer must have no tools"
    assert "<observation> XML" in str(bodies[0].get("system"))
    assert registry.marked_pids(conv.marker, conv.config.data_dir) == []
    assert not list((data_dir / "observers").glob("*.json"))
    assert elapsed < 30, elapsed
