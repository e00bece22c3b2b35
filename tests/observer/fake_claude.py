#!/usr/bin/env python3
"""A fake Claude Code CLI speaking the SDK's stream-json protocol (stdlib only).

The SDK starts it as ``fake_claude.py --output-format stream-json --verbose ...
--input-format stream-json`` and writes NDJSON to its stdin (STACK.md §4, fixture
``tests/fixtures/claude-code/sdk-protocol.client-2-turns.jsonl``). It answers the
``initialize`` control request, then for each user message prints ``system/init``, one
``assistant`` message (text) and a ``result`` with usage, as the real CLI does.

Environment:
    FAKE_CLAUDE_MODE: comma-separated modes, one per turn (the last one repeats):
        ok (a reply from the script), crash (exit 3 mid-turn), crash_init (exit 2 before
        answering initialize), hang (never answer the turn, ignore EOF), hang_init,
        garbage (non-JSON lines, then a corrupt ``{`` line), noise (non-JSON lines, then a
        normal reply), huge (one 2 MiB line), error (``is_error`` result, then exit 1),
        quota (usage-limit prose as the answer), tool (ask ``can_use_tool`` for Bash and
        answer with the decision it got), crash_init_first (as crash_init for the first
        FAKE_CLAUDE_FAIL_CONNECTS processes counted in FAKE_CLAUDE_COUNTER, default 2;
        later processes answer as ok, with the process number in the title: "fake turn 1 of
        process 3"), control (ask a ``hook_callback`` and an ``mcp_message``, send a
        ``control_cancel_request``, a ``rate_limit_event``, a ``stream_event``, a session
        state and an unknown type, then answer with the answers' subtypes:
        "control: error,error"), refuse_init (answer ``initialize`` with an error),
        error_init (an ``is_error`` result instead of the ``initialize`` answer, then exit 1).
    FAKE_CLAUDE_COUNTER: a file counting the processes started (crash_init_first).
    FAKE_CLAUDE_SCRIPT: a JSON file holding a list of reply texts, one per turn.
    FAKE_CLAUDE_LOG: append one JSON line per event (argv, stdin lines, decisions).
    FAKE_CLAUDE_INIT_DELAY: seconds to wait before answering ``initialize`` (a CLI slow
        to start, as on a loaded machine).
    FAKE_CLAUDE_SUMMARY_DELAY: seconds to wait before answering a summary request (the
        Stop summary); such a request (in "ok" mode) is answered with a valid ``<summary>``
        ("fake AI summary" as its request) instead of an observation. A ``summary_start``
        line is logged first, so a test knows the summary is in progress.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid

QUOTA = "You've hit your usage limit · resets 3pm (UTC). /upgrade to increase your limit."
DEFAULT_REPLY = ("<observation><type>discovery</type><title>fake turn {n}</title>"
                 "<facts><fact>fact {n}</fact></facts></observation>")
SUMMARY_REPLY = ("<summary><request>fake AI summary</request>"
                 "<completed>summarised by the fake CLI, turn {n}</completed></summary>")
SUMMARY_MARK = "Answer one <summary>"  # what memlite's summary request says (prompts.py)


def log(kind: str, data: object) -> None:
    path = os.environ.get("FAKE_CLAUDE_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"kind": kind, "pid": os.getpid(), "data": data}) + "\n")


def emit(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def hang() -> None:
    while True:
        time.sleep(3600)


def mode_for(turn: int) -> str:
    modes = [m.strip() for m in os.environ.get("FAKE_CLAUDE_MODE", "ok").split(",") if m.strip()]
    return (modes or ["ok"])[min(turn, len(modes) - 1) if modes else 0]


def scripted(turn: int) -> str:
    path = os.environ.get("FAKE_CLAUDE_SCRIPT")
    replies = json.load(open(path, encoding="utf-8")) if path else []
    return replies[turn] if turn < len(replies) else DEFAULT_REPLY.format(n=turn + 1)


PROCESS = [0]  # this process's number in FAKE_CLAUDE_COUNTER (crash_init_first)


def first_connects() -> bool:
    """Count this process in FAKE_CLAUDE_COUNTER; True while among the failing first ones."""
    path = os.environ["FAKE_CLAUDE_COUNTER"]
    count = (int(open(path, encoding="utf-8").read() or 0) if os.path.exists(path) else 0) + 1
    with open(path, "w", encoding="utf-8") as f:
        f.write(str(count))
    PROCESS[0] = count
    return count <= int(os.environ.get("FAKE_CLAUDE_FAIL_CONNECTS", "2"))


def session_id() -> str:
    for arg in sys.argv:
        if arg.startswith("--resume="):
            return arg.split("=", 1)[1]
    return str(uuid.uuid4())


def model() -> str:
    return sys.argv[sys.argv.index("--model") + 1] if "--model" in sys.argv else "fake-model"


def answer(text: str, sid: str, turn: int, *, is_error: bool = False) -> None:
    emit({"type": "assistant", "session_id": sid, "uuid": str(uuid.uuid4()),
          "parent_tool_use_id": None,
          "message": {"id": f"msg_{turn}", "type": "message", "role": "assistant",
                      "model": model(), "content": [{"type": "text", "text": text}],
                      "stop_reason": "end_turn",
                      "usage": {"input_tokens": 100 + turn, "output_tokens": 20 + turn}}})
    emit({"type": "result", "subtype": "success", "is_error": is_error, "duration_ms": 5,
          "duration_api_ms": 3, "num_turns": turn + 1, "session_id": sid, "result": text,
          "usage": {"input_tokens": 100 + turn, "output_tokens": 20 + turn,
                    "cache_read_input_tokens": 7}, "total_cost_usd": 0.0})


def ask_tool(sid: str) -> str:
    request_id = f"req_tool_{uuid.uuid4().hex[:8]}"
    emit({"type": "control_request", "request_id": request_id,
          "request": {"subtype": "can_use_tool", "tool_name": "Bash",
                      "input": {"command": "rm -rf ~"}, "permission_suggestions": None,
                      "tool_use_id": "toolu_fake_1"}})
    for line in sys.stdin:
        msg = json.loads(line)
        log("stdin", msg)
        resp = msg.get("response", {})
        if msg.get("type") == "control_response" and resp.get("request_id") == request_id:
            decision = resp.get("response", {}).get("behavior", resp.get("subtype"))
            log("decision", decision)
            return decision
    return "eof"


def ask_control(request: dict) -> str:
    """Send one control request; the subtype of the answer it got (logged as "control")."""
    request_id = f"req_ctl_{uuid.uuid4().hex[:8]}"
    emit({"type": "control_request", "request_id": request_id, "request": request})
    for line in sys.stdin:
        msg = json.loads(line)
        log("stdin", msg)
        resp = msg.get("response", {})
        if msg.get("type") == "control_response" and resp.get("request_id") == request_id:
            log("control", resp)
            return resp.get("subtype", "?")
    return "eof"


def controls(sid: str) -> str:
    got = [ask_control({"subtype": "hook_callback", "callback_id": "hook_0",
                        "input": {"hook_event_name": "PreToolUse"}, "tool_use_id": None}),
           ask_control({"subtype": "mcp_message", "server_name": "memlab",
                        "message": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}})]
    emit({"type": "control_cancel_request", "request_id": "req_ctl_gone"})
    emit({"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"}})
    emit({"type": "stream_event", "uuid": str(uuid.uuid4()), "session_id": sid,
          "event": {"type": "message_start"}, "parent_tool_use_id": None})
    emit({"type": "system", "subtype": "session_state_changed", "state": "running",
          "sdk_host_only": True})
    emit({"type": "a_type_from_the_future", "session_id": sid})
    return "control: " + ",".join(got)


def turn(n: int, sid: str, summary: bool = False) -> None:
    mode = mode_for(n)
    emit({"type": "system", "subtype": "init", "session_id": sid, "uuid": str(uuid.uuid4()),
          "model": model(), "cwd": os.getcwd(), "tools": [], "mcp_servers": [],
          "permissionMode": "default", "apiKeySource": "none",
          "claude_code_version": "2.1.332"})
    if mode == "crash":
        sys.exit(3)
    if mode == "hang":
        hang()
    if mode == "garbage":
        sys.stdout.write("this is not json\n\n{\"type\": \"assistant\", corrupt\n")
        sys.stdout.flush()
        hang()
    if mode == "noise":
        sys.stdout.write("plain noise on stdout\n\n")
    if mode == "huge":
        sys.stdout.write(json.dumps({"type": "assistant", "pad": "x" * (2 * 1024 * 1024)}))
        sys.stdout.write("\n")
        sys.stdout.flush()
        hang()
    if mode == "error":
        answer("fake failure", sid, n, is_error=True)
        sys.exit(1)
    if summary and mode == "ok":
        log("summary_start", n)
        time.sleep(float(os.environ.get("FAKE_CLAUDE_SUMMARY_DELAY") or 0))
        answer(SUMMARY_REPLY.format(n=n + 1), sid, n)
        return
    text = {"quota": QUOTA}.get(mode) or scripted(n)
    if mode == "tool":
        text = f"tool decision: {ask_tool(sid)}"
    if mode == "control":
        text = controls(sid)
    if mode == "crash_init_first":
        text = DEFAULT_REPLY.format(n=f"{n + 1} of process {PROCESS[0]}")
    answer(text, sid, n)


def main() -> None:
    log("argv", sys.argv[1:])
    sid, turns = session_id(), 0
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        log("stdin", msg)
        if msg.get("type") == "control_request":
            subtype = msg["request"].get("subtype")
            if subtype == "initialize":
                time.sleep(float(os.environ.get("FAKE_CLAUDE_INIT_DELAY") or 0))
                if mode_for(0) == "crash_init":
                    sys.exit(2)
                if mode_for(0) == "hang_init":
                    hang()
                if mode_for(0) == "crash_init_first" and first_connects():
                    sys.exit(2)
                if mode_for(0) == "refuse_init":
                    emit({"type": "control_response", "response": {
                        "subtype": "error", "request_id": msg["request_id"],
                        "error": "fake refusal"}})
                    continue
                if mode_for(0) == "error_init":
                    answer("No conversation found with session ID: fake", sid, 0,
                           is_error=True)
                    sys.exit(1)
            emit({"type": "control_response", "response": {
                "subtype": "success", "request_id": msg["request_id"],
                "response": {"commands": [], "pid": os.getpid()} if subtype == "initialize"
                else {}}})
        elif msg.get("type") == "user":
            turn(turns, sid, summary=SUMMARY_MARK in json.dumps(msg, ensure_ascii=False))
            turns += 1
    if mode_for(turns) == "hang":  # a CLI that ignores end of input
        hang()


if __name__ == "__main__":
    main()
