#!/usr/bin/env python3
"""The fake CLI (``fake_claude.py``) answering each turn with an observation derived from
the message: the title names the event (``Ran: echo step 7``), so each event gets a
distinct observation and a replayed event the same one. Stdlib only.

Environment: FAKE_CLAUDE_LOG as in ``fake_claude.py`` (one ``turn`` line per answer, with
the title), FAKE_CLAUDE_DELAY: seconds to sleep before each answer (default 0),
FAKE_CLAUDE_GATE: a path; no turn is answered while it does not exist (a benchmark fills
the queue first, then opens the gate).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fake_claude as fake  # noqa: E402

REPLY = ("<observation><type>discovery</type><title>{title}</title>"
         "<facts><fact>digest {digest}</fact></facts></observation>")


def title_of(text: str) -> str:
    found = re.search(r"echo step \d+", text)
    return f"Ran: {found[0]}" if found else f"Event {hashlib.sha1(text.encode()).hexdigest()[:12]}"


def text_of(msg: dict) -> str:
    content = msg.get("message", {}).get("content", "")
    if isinstance(content, list):
        return "".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
    return str(content)


def main() -> None:
    fake.log("argv", sys.argv[1:])
    sid, turns = fake.session_id(), 0
    delay = float(os.environ.get("FAKE_CLAUDE_DELAY") or 0)
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
            gate = os.environ.get("FAKE_CLAUDE_GATE")
            while gate and not os.path.exists(gate):
                time.sleep(0.001)
            started = time.perf_counter()
            text = text_of(msg)
            title = title_of(text)
            fake.emit({"type": "system", "subtype": "init", "session_id": sid,
                       "model": fake.model(), "cwd": os.getcwd(), "tools": [],
                       "mcp_servers": [], "permissionMode": "default", "apiKeySource": "none",
                       "claude_code_version": "2.1.332", "uuid": "init"})
            if delay:
                time.sleep(delay)
            digest = hashlib.sha1(text.encode()).hexdigest()[:12]
            fake.answer(REPLY.format(title=title, digest=digest), sid, turns)
            fake.log("turn", {"title": title, "chars": len(text),
                              "seconds": time.perf_counter() - started})
            turns += 1


if __name__ == "__main__":
    main()
