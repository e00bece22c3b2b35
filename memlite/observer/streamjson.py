"""memlite's own client of the Claude Code CLI's stream-json protocol: the part that
holds no process (command line, environment, framing, messages, answers).

Why hand-written, and not ``claude_agent_sdk.ClaudeSDKClient``: importing the SDK costs
the worker ~37 MB of resident memory and ~1.9 s (its ``__init__`` imports ``mcp``, whose
package import pulls in pydantic, starlette, uvicorn, cryptography, opentelemetry and an
HTTP client), and issue 14's bar is a worker of at most 150 MB serving a session with
the default (AI) observer: measured in round 7, 172.7 MB with the SDK, 134.5 MB without
the AI observer. The part of the protocol the observer uses is small and written down in
``shared/STACK.md`` §4 ("The stream-json protocol, as observed"): one ``initialize``
control request, user messages, ``system/init``, ``assistant`` and ``result`` messages,
and answers to the three control requests the CLI can ask (``can_use_tool`` is denied,
``hook_callback`` and ``mcp_message`` get an error answer: the observer registers no
hooks and no SDK MCP servers; a ``control_cancel_request`` is skipped, since every request
is answered before the next line is read, so none is ever in flight). The CLI binary
itself still comes from the claude-agent-sdk wheel (``clipath.bundled_cli``, found with
``find_spec``, never imported), so the SDK stays a declared dependency; nothing here is
copied from its source.

Command line and environment are the ones the SDK 0.2.x builds for the observer's locked
down options (``tools=[]``, ``allowed_tools=[]``, ``setting_sources=[]``, no MCP servers,
no plugins, ``can_use_tool`` set, so ``--permission-prompt-tool stdio``), checked
against a capture of the SDK's own run in ``tests/observer/test_streamjson.py``.

Framing follows the SDK's observed behaviour (STACK.md's failure table): one JSON object
per line; blank lines and lines that do not start with ``{`` are skipped (some CLI
builds print debug lines on stdout); a line that starts with ``{`` but does not parse,
or any line longer than ``max_line`` bytes (the SDK counts characters; a line never has
fewer bytes, so this limit is as strict or stricter), is an ``ObserverProtocolError``;
unknown message types are skipped.
"""

from __future__ import annotations

import functools
import json
import logging
import os
from collections import deque
from collections.abc import Mapping
from typing import Any

from memlite.errors import ObserverErrorResult, ObserverProtocolError

__all__ = [
    "ENTRYPOINT",
    "LineBuffer",
    "NO_TOOLS",
    "Turn",
    "answer_control",
    "build_argv",
    "build_env",
    "initialize_request",
    "parse_line",
    "sdk_version",
    "user_message",
]

log = logging.getLogger(__name__)

ENTRYPOINT = "sdk-py"
"""``CLAUDE_CODE_ENTRYPOINT``: the CLI serves a stream-json host (``config.env`` may override)."""
SDK_DIST = "claude-agent-sdk"
NO_TOOLS = "the observer has no tools"


def build_argv(cli: str, *, system_prompt: str, model: str, max_turns: int,
               resume: str | None) -> list[str]:
    """The CLI's argv for a locked-down observer (same order as the SDK builds it)."""
    argv = [cli, "--output-format", "stream-json", "--verbose",
            "--system-prompt", system_prompt, "--tools", ""]
    if max_turns:
        argv += ["--max-turns", str(max_turns)]
    if model:
        argv += ["--model", model]
    argv += ["--permission-prompt-tool", "stdio"]  # tool requests come to us: denied
    if resume:
        argv.append(f"--resume={resume}")  # one token: a value can never read as a flag
    argv += ["--setting-sources=", "--input-format", "stream-json"]
    return argv


@functools.cache
def sdk_version() -> str | None:
    """The installed claude-agent-sdk's version (package metadata, no import), or None."""
    import importlib.metadata

    try:
        return importlib.metadata.version(SDK_DIST)
    except importlib.metadata.PackageNotFoundError:
        return None


def build_env(base: Mapping[str, str], extra: Mapping[str, str], cwd: str) -> dict[str, str]:
    """The CLI's environment: ``base`` (the worker's) without ``CLAUDECODE`` (the CLI
    must not think it runs inside a Claude Code session), ``CLAUDE_CODE_ENTRYPOINT``,
    then ``extra`` over it, the SDK version the binary came with, session-state frames
    asked for (skipped here, as the SDK does), ``PWD``."""
    env = {k: v for k, v in base.items() if k != "CLAUDECODE"}
    env["CLAUDE_CODE_ENTRYPOINT"] = ENTRYPOINT
    env.update(extra)
    version = sdk_version()
    if version:
        env["CLAUDE_AGENT_SDK_VERSION"] = version
    env.pop("CLAUDE_AGENT_SDK_DERIVED_CLIENT_APP", None)  # an outer host's app label
    if not any(k.upper() == "CLAUDE_CODE_SDK_READS_SESSION_STATE" for k in env):
        env["CLAUDE_CODE_SDK_READS_SESSION_STATE"] = "1"
    env["PWD"] = cwd
    return env


def _line(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj) + "\n").encode()


def initialize_request() -> tuple[str, bytes]:
    """``(request_id, line)`` of the handshake: no hooks, nothing else to register."""
    request_id = f"req_1_{os.urandom(4).hex()}"
    return request_id, _line({"type": "control_request", "request_id": request_id,
                              "request": {"subtype": "initialize", "hooks": None}})


def user_message(text: str) -> bytes:
    """One user turn, as a stream-json host sends it."""
    return _line({"type": "user", "message": {"role": "user", "content": text},
                  "parent_tool_use_id": None, "session_id": "default"})


def answer_control(message: dict[str, Any]) -> bytes | None:
    """The answer to a ``control_request`` the CLI sent (None: nothing to answer).

    ``can_use_tool``: denied, whatever the tool (the observer has none; a request means
    the CLI was offered one anyway). Anything else (``hook_callback``, ``mcp_message``,
    a subtype newer than this code): an error answer, so the CLI never waits for us.
    """
    request_id = message.get("request_id")
    request = message.get("request")
    if not isinstance(request_id, str) or not isinstance(request, dict):
        log.debug("observer CLI sent a control request without id or body: skipped")
        return None
    subtype = request.get("subtype")
    if subtype == "can_use_tool":
        log.warning("observer asked to use tool %r: denied", request.get("tool_name"))
        return _line({"type": "control_response", "response": {
            "subtype": "success", "request_id": request_id,
            "response": {"behavior": "deny", "message": NO_TOOLS}}})
    return _line({"type": "control_response", "response": {
        "subtype": "error", "request_id": request_id,
        "error": f"memlite's observer does not serve {subtype!r} requests"}})


def parse_line(raw: bytes) -> dict[str, Any] | None:
    """One complete stdout line as a message; None for a line that carries none.

    Raises:
        ObserverProtocolError: a line that starts with ``{`` but is not a JSON object in
            UTF-8 (nothing later could complete it: the line is whole).
    """
    line = raw.strip()
    if not line:
        return None
    if not line.startswith(b"{"):
        log.debug("observer CLI printed a non-JSON line: %r", line[:200])
        return None
    try:
        data = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ObserverProtocolError(
            f"observer CLI output unreadable: {exc}: {line[:200]!r}") from exc
    if not isinstance(data, dict):
        raise ObserverProtocolError(f"observer CLI output is not an object: {line[:200]!r}")
    return data


class LineBuffer:
    """Cuts the CLI's stdout chunks into lines, none longer than ``max_line`` bytes.

    A line over the limit is an ``ObserverProtocolError`` as soon as its first
    ``max_line + 1`` bytes are here, complete or not (a CLI printing a 2 MiB line is
    not waited for).
    """

    def __init__(self, max_line: int) -> None:
        self.max_line = max_line
        self._pending = bytearray()
        self._lines: deque[bytes] = deque()

    def push(self, chunk: bytes | bytearray) -> None:
        self._pending += chunk
        if b"\n" in chunk:
            *lines, tail = bytes(self._pending).split(b"\n")
            for line in lines:
                self._check(len(line))
            self._lines.extend(lines)
            self._pending = bytearray(tail)
        self._check(len(self._pending))

    def _check(self, length: int) -> None:
        if length > self.max_line:
            raise ObserverProtocolError(
                f"observer CLI output unreadable: a line exceeded the limit of "
                f"{self.max_line} bytes")

    def next_line(self) -> bytes | None:
        """The oldest complete line not yet taken, or None."""
        return self._lines.popleft() if self._lines else None

    def tail(self) -> bytes:
        """What is left after the last newline (at end of output)."""
        tail, self._pending = bytes(self._pending), bytearray()
        return tail


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class Turn:
    """What one turn has gathered: the assistant's text, the session id, the result."""

    def __init__(self, session_id: str | None) -> None:
        self.texts: list[str] = []
        self.session_id = session_id
        self.result: dict[str, Any] | None = None

    def take(self, message: dict[str, Any]) -> None:
        """Account for one message of the turn; unknown types are skipped.

        Raises:
            ObserverProtocolError: an ``assistant`` or ``result`` message without the
                fields the protocol says it always has.
        """
        kind = message.get("type")
        if kind == "assistant":
            body = message.get("message")
            content = body.get("content") if isinstance(body, dict) else None
            if not isinstance(content, list):
                raise ObserverProtocolError("observer CLI sent an assistant message "
                                            "without content")
            self.texts += [b["text"] for b in content if isinstance(b, dict)
                           and b.get("type") == "text" and isinstance(b.get("text"), str)]
        elif kind == "system" and message.get("subtype") == "init":
            sid = message.get("session_id")
            self.session_id = sid if isinstance(sid, str) and sid else self.session_id
        elif kind == "result":
            if not isinstance(message.get("is_error"), bool) or \
                    not isinstance(message.get("subtype"), str):
                raise ObserverProtocolError("observer CLI sent a result without "
                                            "is_error or subtype")
            sid = message.get("session_id")
            self.session_id = sid if isinstance(sid, str) and sid else self.session_id
            self.result = message

    def error(self) -> ObserverErrorResult | None:
        """The turn's ``is_error`` result as the error a caller acts on, else None."""
        result = self.result
        if result is None or not result.get("is_error"):
            return None
        text = result.get("result")
        text = text if isinstance(text, str) else ""
        return ObserverErrorResult(
            f"observer turn failed ({result['subtype']}): {text[:200]}",
            text=text, subtype=result["subtype"])

    def usage(self) -> dict[str, int]:
        """The result's token counts (0 where the CLI gave none) and ``num_turns``."""
        result = self.result or {}
        usage = result.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        return {"input_tokens": _int(usage.get("input_tokens")),
                "output_tokens": _int(usage.get("output_tokens")),
                "cache_read_tokens": _int(usage.get("cache_read_input_tokens")),
                "cache_creation_tokens": _int(usage.get("cache_creation_input_tokens")),
                "num_turns": _int(result.get("num_turns"))}
