"""What a hook event says, read the same way by the prompt renderer and the rules backend.

A stored event's payload is the (redacted, cut) hook stdin. Its shape depends on the tool:
``tool_response`` is a dict for Bash (``stdout``/``stderr``), Read (``file.content``),
Grep/Glob (``filenames``), Agent (``content`` blocks); a list of text blocks for MCP
tools; a plain string for some others; and absent on ``PostToolUseFailure``, which
carries ``error`` ("Exit code 3\\nfailing") instead. These helpers turn any of them into
plain text, never raising on an unexpected shape (a new Claude Code version may change
one).
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import Any

from memlite.storage.records import Event

__all__ = ["EDIT_TOOLS", "exit_code", "normalise_path", "payload_of", "tool_input",
           "tool_output"]

# Their input holds the whole change; their response repeats it (and the original file).
EDIT_TOOLS = frozenset({"Edit", "MultiEdit", "NotebookEdit", "Write"})

# Response keys that are bookkeeping, not what the tool found (they would cost tokens).
_NOISE = frozenset({
    "usage", "resolvedModel", "totalDurationMs", "totalTokens", "totalToolUseCount",
    "harnessNoteCount", "harnessTailCount", "harnessSectionHash", "agentId", "agentType",
    "interrupted", "isImage", "noOutputExpected", "originalFile", "structuredPatch",
    "userModified", "durationMs", "prompt",
})
_EXIT = re.compile(r"\bexit(?:ed with)? code:?\s*(-?\d+)", re.IGNORECASE)


def payload_of(event: Event | dict[str, Any]) -> dict[str, Any]:
    """The event's payload as a dict (``{}`` when it is not a JSON object)."""
    if isinstance(event, dict):
        return event
    try:
        data = json.loads(event.payload)
    except (ValueError, TypeError):
        return {}
    return data if isinstance(data, dict) else {}


def tool_input(payload: dict[str, Any]) -> dict[str, Any]:
    """``tool_input`` as a dict (``{}`` when missing or not an object)."""
    value = payload.get("tool_input")
    return value if isinstance(value, dict) else {}


def _blocks(items: list[Any]) -> str:
    parts = []
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            parts.append(item["text"])
        elif isinstance(item, str):
            parts.append(item)
        else:
            parts.append(json.dumps(item, ensure_ascii=False, default=str))
    return "\n".join(parts)


def _from_dict(response: dict[str, Any]) -> str:
    if response.get("type") in ("image", "pdf", "notebook_image"):
        return f"[{response['type']}]"  # base64 bytes: no use to a text observer
    if "stdout" in response or "stderr" in response:
        out = str(response.get("stdout") or "")
        err = str(response.get("stderr") or "")
        return "\n".join(part for part in (out, f"[stderr]\n{err}" if err else "") if part)
    file = response.get("file")
    if isinstance(file, dict) and isinstance(file.get("content"), str):
        return file["content"]
    if isinstance(response.get("content"), list):
        return _blocks(response["content"])
    for key in ("content", "result", "output", "text"):
        if isinstance(response.get(key), str):
            return response[key]
    if isinstance(response.get("filenames"), list):
        return "\n".join(str(name) for name in response["filenames"])
    rest = {key: value for key, value in response.items() if key not in _NOISE}
    return json.dumps(rest, ensure_ascii=False, default=str) if rest else ""


def tool_output(payload: dict[str, Any]) -> str:
    """What the tool printed or returned, as text; for a failure, its ``error``.

    ``""`` for a successful edit (``EDIT_TOOLS``): the input already says what changed.
    """
    if payload.get("hook_event_name") == "PostToolUseFailure" or "tool_response" not in payload:
        return str(payload.get("error") or "")
    if payload.get("tool_name") in EDIT_TOOLS:
        return ""
    response = payload.get("tool_response")
    if isinstance(response, str):
        return response
    if isinstance(response, list):
        return _blocks(response)
    if isinstance(response, dict):
        return _from_dict(response)
    return "" if response is None else json.dumps(response, default=str)


def exit_code(payload: dict[str, Any]) -> int | None:
    """The command's exit code when the payload says it (0 for a plain success)."""
    response = payload.get("tool_response")
    if isinstance(response, dict):
        for key in ("exit_code", "exitCode", "returncode", "code"):
            if isinstance(response.get(key), int) and not isinstance(response[key], bool):
                return int(response[key])
    if payload.get("hook_event_name") == "PostToolUseFailure":
        match = _EXIT.search(str(payload.get("error") or ""))
        return int(match.group(1)) if match else 1
    return 0 if payload.get("hook_event_name") == "PostToolUse" else None


def normalise_path(path: str, project: str | None) -> str:
    """A clean path: relative to ``project`` when inside it, else normalised as given.

    Quotes and backticks a model may wrap a path in are dropped; ``""`` stays ``""``.
    """
    text = path.strip().strip("`'\"").strip()
    if not text:
        return ""
    clean = posixpath.normpath(text)
    if project and clean.startswith("/"):
        root = posixpath.normpath(project.strip())
        if root != "/" and clean.startswith(root + "/"):
            return clean[len(root) + 1:]
    return clean
