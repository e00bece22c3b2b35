"""``fake_anthropic.py`` that also plays memlite's AI observer (for the e2e observer test).

Run it exactly like ``fake_anthropic.py`` (same arguments, same request log). Requests
from the observed Claude Code session get the scripted steps as before; a request whose
``system`` field carries memlite's observer prompt (the marker ``OBSERVER_MARKER``) is
answered as the observer would:

* the last user message asks for the session summary (the wording of
  ``prompts.render_summary_request``): a ``<summary>`` whose fields all start with
  ``SUMMARY_TAG``;
* the last user message is an ``<event>``: one ``<observation>`` titled
  ``"AI-OBS <tool> <name>"`` where ``<name>`` is the base name of the event's
  ``file_path`` input, or the first word after ``echo`` of a ``command`` input (so a
  test can predict every title from its own script);
* anything else: ``<skip/>``.

Stateless like its base: the answer depends on the request body only.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import PurePath
from typing import Any

import fake_anthropic
from fake_anthropic import _blocks

OBSERVER_MARKER = "You are memlite's observer."
SUMMARY_ASK = "The session has stopped. Answer one <summary>"
SUMMARY_TAG = "AI-SUMMARY"
_TOOL = re.compile(r"<event\b[^>]*\btool=\"([^\"]+)\"")
_INPUT = re.compile(r"<input name=\"([^\"]+)\">(.*?)</input>", re.S)

_base_next_step = fake_anthropic.next_step


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    last = next((m for m in reversed(messages) if m.get("role") == "user"), None)
    if last is None:
        return ""
    return "\n".join(b.get("text", "") for b in _blocks(last.get("content"))
                     if b.get("type") == "text")


def event_title(text: str) -> str | None:
    """``AI-OBS <tool> <name>`` for the ``<event>`` in ``text`` (None: no tool event)."""
    tool = _TOOL.search(text)
    if tool is None:
        return None
    inputs = {k: html.unescape(v) for k, v in _INPUT.findall(text)}
    if inputs.get("file_path"):
        name = PurePath(inputs["file_path"]).name
    elif inputs.get("command"):
        words = inputs["command"].split()
        name = words[1] if len(words) > 1 and words[0] == "echo" else words[0]
    else:
        name = "event"
    return f"AI-OBS {tool.group(1)} {name}"


def observer_reply(text: str) -> str:
    if SUMMARY_ASK in text:
        return (f"<summary><request>{SUMMARY_TAG} request: look at the greeter</request>"
                f"<investigated>{SUMMARY_TAG} investigated hello.py</investigated>"
                f"<learned>{SUMMARY_TAG} learned the greeter prints hello</learned>"
                f"<completed>{SUMMARY_TAG} completed NOTES.md</completed>"
                f"<next_steps>{SUMMARY_TAG} next: rename the greeting</next_steps></summary>")
    title = event_title(text)
    if title is None:
        return "<skip/>"
    return (f"<observation><type>change</type><title>{title}</title>"
            f"<subtitle>scripted by the fake observer</subtitle>"
            f"<facts><fact>{title} happened</fact></facts>"
            f"<narrative>The fake observer saw {title}.</narrative>"
            f"<concepts><concept>what-changed</concept></concepts>"
            f"<files_read></files_read><files_modified></files_modified></observation>")


def next_step(script: dict[str, list[dict[str, Any]]], body: dict[str, Any]) -> dict[str, Any]:
    if OBSERVER_MARKER in json.dumps(body.get("system") or "", ensure_ascii=False):
        return {"text": observer_reply(_last_user_text(body.get("messages") or []))}
    return _base_next_step(script, body)


fake_anthropic.next_step = next_step  # the handler looks it up in its module

if __name__ == "__main__":
    raise SystemExit(fake_anthropic.main())
