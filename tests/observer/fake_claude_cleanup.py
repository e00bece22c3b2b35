#!/usr/bin/env python3
"""The fake CLI (``fake_claude.py``) answering cleanup review batches (stdlib only).

Each user message holds one JSON object per observation (``memlite.cleanup.render_batch``);
the answer is one verdict line per id: ``DELETE`` when the title holds "noise", ``KEEP``
otherwise; an observation whose title holds "unjudged" gets no line at all, and lines about
an id that was not asked (#999999) and prose are added, which the parser must ignore.

Environment: FAKE_CLAUDE_MODE as in ``fake_claude.py``, per turn: ``ok``, ``crash`` (exit
3 mid-turn), ``quota`` (usage-limit prose); FAKE_CLAUDE_LOG: one ``turn`` line per answer
with the ids asked, plus ``argv``.
"""

from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_claude as fake  # noqa: E402
from fake_claude_echo import text_of  # noqa: E402


def verdicts(text: str) -> tuple[str, list[int]]:
    lines, ids = ["Here are my verdicts:"], []
    for raw in text.splitlines():
        try:
            obs = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(obs, dict) or "id" not in obs:
            continue
        ids.append(obs["id"])
        title = str(obs.get("title", "")).lower()
        if "unjudged" in title:
            continue
        if "noise" in title:
            lines.append(f"#{obs['id']} DELETE - routine noise with nothing learned")
        else:
            lines.append(f"#{obs['id']} KEEP - records a real decision")
    lines.append("#999999 DELETE - an id nobody asked about")
    return "\n".join(lines), ids


def main() -> None:
    fake.log("argv", sys.argv[1:])
    sid, turns = fake.session_id(), 0
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        if msg.get("type") == "control_request":
            subtype = msg["request"].get("subtype")
            fake.emit({"type": "control_response", "response": {
                "subtype": "success", "request_id": msg["request_id"],
                "response": {"commands": [], "pid": os.getpid()} if subtype == "initialize"
                else {}}})
        elif msg.get("type") == "user":
            mode = fake.mode_for(turns)
            fake.emit({"type": "system", "subtype": "init", "session_id": sid,
                       "model": fake.model(), "cwd": os.getcwd(), "tools": [],
                       "mcp_servers": [], "permissionMode": "default",
                       "apiKeySource": "none", "claude_code_version": "2.1.332",
                       "uuid": "init"})
            if mode == "crash":
                sys.exit(3)
            text, ids = verdicts(text_of(msg))
            fake.answer(fake.QUOTA if mode == "quota" else text, sid, turns)
            fake.log("turn", {"ids": ids, "mode": mode})
            turns += 1


if __name__ == "__main__":
    main()
