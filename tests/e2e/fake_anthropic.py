"""A fake Anthropic Messages API for running the real Claude Code CLI offline.

Run it as a process (tests start it with ``subprocess`` and stop it by pid)::

    python fake_anthropic.py --script script.json --log api.jsonl --port-file port

It binds 127.0.0.1 on a free port (written to ``--port-file`` once it listens) and
answers ``POST /v1/messages`` with a streamed (SSE, chunked HTTP/1.1) assistant message,
the way CLAUDE-CODE.md §7 describes: ``message_start``, then per content block
``content_block_start`` / ``content_block_delta`` (``text_delta`` or
``input_json_delta``) / ``content_block_stop``, then ``message_delta`` (stop_reason
``tool_use`` or ``end_turn``) and ``message_stop``. A non-streaming request gets the same
message as plain JSON. Anything else (``HEAD /api/hello``, ``count_tokens``) gets a small
200 so nothing in the CLI stalls.

Stateless scripting: ``script.json`` maps a script name to a list of steps; a step is
``{"tool": "<name>", "input": {...}}`` or ``{"text": "..."}``. Which script: the
``SCRIPT=<name>`` marker in the user's prompt (the last text block of the first user
message that is not a ``<system-reminder>``; default ``"default"``). Which step: the
number of ``tool_result`` blocks in ``messages[]``. Past the last step the answer is the
text ``done.``. So the fake holds no state across requests and a retried request gets the
same answer.

Every request is appended to ``--log`` as one JSON line
``{"method", "path", "headers", "body", "at"}`` (body parsed when it is JSON), so tests
can search exactly what the CLI sent.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

_MARKER = re.compile(r"SCRIPT=([A-Za-z0-9_-]+)")
_LOG_HEADERS = ("user-agent", "x-api-key", "anthropic-version", "anthropic-beta",
                "x-claude-code-session-id")


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def count_tool_results(messages: list[dict[str, Any]]) -> int:
    return sum(1 for m in messages for b in _blocks(m.get("content"))
               if b.get("type") == "tool_result")


def script_name(messages: list[dict[str, Any]]) -> str:
    """The ``SCRIPT=`` marker of the user's own prompt (not of injected context)."""
    first_user = next((m for m in messages if m.get("role") == "user"), None)
    if first_user is None:
        return "default"
    texts = [b.get("text", "") for b in _blocks(first_user.get("content"))
             if b.get("type") == "text"
             and not b.get("text", "").lstrip().startswith("<system-reminder>")]
    for text in reversed(texts):
        found = _MARKER.findall(text)
        if found:
            return found[-1]
    return "default"


def next_step(script: dict[str, list[dict[str, Any]]], body: dict[str, Any]) -> dict[str, Any]:
    messages = body.get("messages") or []
    steps = script.get(script_name(messages)) or script.get("default") or []
    index = count_tool_results(messages)
    return steps[index] if index < len(steps) else {"text": "done."}


def sse_events(step: dict[str, Any], model: str) -> list[tuple[str, dict[str, Any]]]:
    """The stream of one assistant message for ``step``."""
    message_id = f"msg_fake_{uuid.uuid4().hex[:20]}"
    usage = {"input_tokens": 12, "output_tokens": 1, "cache_creation_input_tokens": 0,
             "cache_read_input_tokens": 0}
    events: list[tuple[str, dict[str, Any]]] = [("message_start", {
        "type": "message_start",
        "message": {"id": message_id, "type": "message", "role": "assistant", "model": model,
                    "content": [], "stop_reason": None, "stop_sequence": None,
                    "usage": usage}})]
    if "tool" in step:
        block = {"type": "tool_use", "id": f"toolu_fake_{uuid.uuid4().hex[:20]}",
                 "name": step["tool"], "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(step.get("input", {}))}
        stop_reason = "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": step.get("text", "done.")}
        stop_reason = "end_turn"
    events += [
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": block}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                           "usage": {"output_tokens": 8}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events


def plain_message(step: dict[str, Any], model: str) -> dict[str, Any]:
    if "tool" in step:
        content = [{"type": "tool_use", "id": f"toolu_fake_{uuid.uuid4().hex[:20]}",
                    "name": step["tool"], "input": step.get("input", {})}]
    else:
        content = [{"type": "text", "text": step.get("text", "done.")}]
    return {"id": f"msg_fake_{uuid.uuid4().hex[:20]}", "type": "message", "role": "assistant",
            "model": model, "content": content,
            "stop_reason": "tool_use" if "tool" in step else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 12, "output_tokens": 8}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib's name
        pass  # quiet: the request log file is the record

    def _log(self, body: Any) -> None:
        entry = {"method": self.command, "path": self.path,
                 "headers": {k: self.headers.get(k) for k in _LOG_HEADERS if k in self.headers},
                 "body": body, "at": time.time()}  # wall clock, for benchmarks
        line = json.dumps(entry) + "\n"
        with self.server.log_lock, open(self.server.log_path, "a", encoding="utf-8") as f:
            f.write(line)

    def _reply_json(self, status: int, value: Any) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def do_HEAD(self) -> None:  # noqa: N802 - stdlib's name
        self._log(None)
        self._reply_json(200, {})

    def do_GET(self) -> None:  # noqa: N802
        self._log(None)
        self._reply_json(200, {})

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = raw.decode("utf-8", "replace")
        self._log(body)
        if not isinstance(body, dict) or not self.path.startswith("/v1/messages"):
            self._reply_json(200, {})
            return
        if "count_tokens" in self.path:
            self._reply_json(200, {"input_tokens": 100})
            return
        step = next_step(self.server.script, body)
        model = str(body.get("model") or "claude-fake")
        if not body.get("stream"):
            self._reply_json(200, plain_message(step, model))
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for name, data in sse_events(step, model):
            chunk = f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()
            self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, script: dict[str, Any], log_path: Path) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.script = script
        self.log_path = log_path
        self.log_lock = threading.Lock()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", type=Path, help="JSON: {name: [steps]}")
    parser.add_argument("--log", type=Path, required=True, help="append requests here (JSONL)")
    parser.add_argument("--port-file", type=Path, required=True,
                        help="write the port here once listening")
    args = parser.parse_args(argv)
    script = json.loads(args.script.read_text()) if args.script else {}
    server = _Server(script, args.log)
    tmp = args.port_file.with_suffix(".tmp")
    tmp.write_text(str(server.server_address[1]))
    os.replace(tmp, args.port_file)  # atomic: a reader never sees a half-written port
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
