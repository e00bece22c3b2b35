"""memlite's three MCP tools: definitions, argument checks, and calls to the worker.

STANDARD LIBRARY ONLY, like the hook: the lean stdio server (``server.py``) runs on any
``python3 -I -S``, so Claude Code can start it before the plugin's venv exists. Both
servers (the lean one and the ``MCPServer`` one in ``mcpserver.py``) share this module:
``TOOLS`` (name, description, JSON schema) and ``call_tool(name, arguments)``, which
returns ``(text, is_error)`` and never raises for anything a caller can send.

Progressive disclosure (the descriptions teach it to the model):

1. ``memory_search``: a compact index (id, date, type, title, ~tokens of the full record),
2. ``memory_timeline``: what happened around one id, in time order,
3. ``memory_get``: the full records of the few ids worth reading.

The tools read through the worker's HTTP API (``/api/search/index``, ``/api/timeline``,
``/api/observations/batch``) with the raw-socket client of the hook and the bearer token.
Worker down: it is started (``spawn.start_worker``, waiting at most
``WORKER_START_SECONDS``) with the worker's interpreter; without one (the plugin's venv is
still being built) the tool answers "memlite is still installing", and after a failed
build "memlite cannot start:" with the reason and the build's log (``memlite doctor``'s
line), since it will not work "in a minute".
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from memlite import settings_spec
from memlite.hooks import client

__all__ = ["MAX_GET_IDS", "TOOLS", "ToolError", "WorkerLink", "call_tool", "mcp_enabled"]

log = logging.getLogger("memlite.mcp")

MAX_GET_IDS = 100
MAX_QUERY_CHARS = 1000
MAX_LIMIT = 100
REQUEST_SECONDS = 10.0
WORKER_START_SECONDS = 3.0
MAX_ID = 2**63 - 1
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$")

SEARCH_DESCRIPTION = (
    "Search memlite's memory of earlier Claude Code sessions (decisions, changes, bugs "
    "fixed, files touched). Step 1 of 3: returns a COMPACT INDEX only (id, date, type, "
    "title, project, ~token cost of the full record), cheap to call. Then use "
    "memory_timeline(anchor=<id>) to see what happened around a promising hit, and "
    "memory_get(ids=[...]) to read the full records of only the ids you need. Ask in plain "
    "words: search is hybrid (keywords and meaning) by default. Filters: project (the "
    "project's root path), type (bugfix, feature, refactor, discovery, decision, change; "
    "comma-separated for several), since/until (ISO dates, YYYY-MM-DD or full "
    "timestamps), file (part of a file path), session (a session id), limit (1-100, "
    "default 20); mode fts|semantic|hybrid.")
TIMELINE_DESCRIPTION = (
    "Step 2 of 3 of memlite's memory workflow (memory_search -> memory_timeline -> "
    "memory_get): the observations recorded just before and after one observation id "
    "(from memory_search), oldest first, in the same project (scope=project, default) or "
    "the same session (scope=session). Shows id, date, type, title and files, so you can "
    "pick which ids to read in full with memory_get.")
GET_DESCRIPTION = (
    "Step 3 of 3 of memlite's memory workflow (memory_search -> memory_timeline -> "
    "memory_get): the FULL records (narrative, facts, concepts, files read and modified) "
    f"of the observation ids you chose, at most {MAX_GET_IDS} per call. Fetch only the ids "
    "that matter: each costs about the tokens memory_search showed for it.")

TOOLS: list[dict[str, Any]] = [
    {
        "name": "memory_search",
        "title": "Search memory (index)",
        "description": SEARCH_DESCRIPTION,
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "what to look for (words, a file "
                          "name, an error message)"},
                "project": {"type": "string", "description": "only this project (its root "
                            "path, as shown in results)"},
                "type": {"type": "string", "description": "only observations of this type "
                         "(bugfix, feature, refactor, discovery, decision, change)"},
                "since": {"type": "string", "description": "only on or after this date "
                          "(ISO 8601)"},
                "until": {"type": "string", "description": "only on or before this date "
                          "(ISO 8601)"},
                "file": {"type": "string", "description": "only observations that read or "
                         "modified a file whose path contains this"},
                "session": {"type": "string", "description": "only this Claude Code session"},
                "mode": {"type": "string", "enum": ["hybrid", "fts", "semantic"],
                         "default": "hybrid", "description": "hybrid (default), keywords "
                         "only (fts) or meaning only (semantic)"},
                "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT,
                          "default": 20, "description": "how many results (1-100)"},
            },
            "required": ["query"],
        },
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
    {
        "name": "memory_timeline",
        "title": "Memory around an observation",
        "description": TIMELINE_DESCRIPTION,
        "inputSchema": {
            "type": "object",
            "properties": {
                "anchor": {"type": "integer", "minimum": 1,
                           "description": "an observation id from memory_search"},
                "before": {"type": "integer", "minimum": 0, "maximum": 100, "default": 5,
                           "description": "how many earlier observations"},
                "after": {"type": "integer", "minimum": 0, "maximum": 100, "default": 5,
                          "description": "how many later observations"},
                "scope": {"type": "string", "enum": ["project", "session"],
                          "default": "project"},
            },
            "required": ["anchor"],
        },
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
    {
        "name": "memory_get",
        "title": "Full memory records",
        "description": GET_DESCRIPTION,
        "inputSchema": {
            "type": "object",
            "properties": {
                "ids": {"type": "array", "items": {"type": "integer", "minimum": 1},
                        "minItems": 1, "maxItems": MAX_GET_IDS,
                        "description": "observation ids from memory_search/memory_timeline"},
            },
            "required": ["ids"],
        },
        "annotations": {"readOnlyHint": True, "openWorldHint": False},
    },
]
TOOL_NAMES = frozenset(tool["name"] for tool in TOOLS)


def mcp_enabled(data_dir: str) -> bool:
    """The MCP_ENABLED setting ($MEMLITE_MCP_ENABLED, else settings.json; default true),
    read with the worker's own parser (``memlite.settings_spec``). An invalid value counts
    as enabled: the tools then report the worker's refusal to start, which names it."""
    try:
        values, _ = settings_spec.resolve(client.read_settings(data_dir), os.environ,
                                          file_label="settings.json", keys=("MCP_ENABLED",))
    except settings_spec.SettingError:
        return True
    return bool(values["MCP_ENABLED"])


class ToolError(Exception):
    """A tool's clear error message (bad arguments, worker unavailable, ...)."""


# ---------------------------------------------------------------------------------------
# The worker
# ---------------------------------------------------------------------------------------


class WorkerLink:
    """Requests to the worker of ``data_dir``, starting it once when it is down."""

    def __init__(self, data_dir: str | None = None) -> None:
        self.data_dir = data_dir or client.data_dir()
        self.port: int | None = None

    def _port(self) -> int:
        if self.port is None:
            try:  # the worker's own parser: an invalid port is refused, never guessed
                self.port = client.worker_port(client.read_settings(self.data_dir))
            except ValueError as exc:
                raise ToolError(f"{exc}; fix it, then restart Claude Code") from None
        return self.port

    def _once(self, method: str, path: str, body: bytes | None) -> tuple[int, bytes]:
        bearer = client.token(self.data_dir)
        if bearer is None:
            raise ConnectionRefusedError("no token yet: the worker never ran")
        return client.request(self._port(), method, path, bearer=bearer, body=body,
                              deadline=time.monotonic() + REQUEST_SECONDS)

    def request(self, method: str, path: str, body: Any = None) -> Any:
        """The worker's JSON answer; ToolError for 4xx (its message), down, or 5xx."""
        raw = None if body is None else json.dumps(body).encode()
        try:
            status, reply = self._once(method, path, raw)
        except TimeoutError:
            raise ToolError("the memlite worker did not answer in time; try again") from None
        except OSError as exc:
            log.info("worker unreachable (%s): starting it", exc)
            self._start()
            try:
                status, reply = self._once(method, path, raw)
            except OSError as again:
                raise ToolError(f"the memlite worker is not reachable ({again}); see "
                                f"{os.path.join(self.data_dir, 'worker.log')}") from None
        try:
            value = json.loads(reply) if reply else {}
        except ValueError:
            value = {}
        if status >= 400:
            message = value.get("error") if isinstance(value, dict) else None
            if isinstance(message, dict):
                message = message.get("message")
            if status >= 500:
                raise ToolError(f"the memlite worker failed (HTTP {status}); try again")
            raise ToolError(str(message or f"HTTP {status}"))
        return value

    def _start(self) -> None:
        """Start the worker (or join a start in progress) and wait for it, at most
        ``WORKER_START_SECONDS``; a slow start is left running, never killed."""
        from memlite.hooks import bootstrap

        python = bootstrap.worker_python()
        if python is None:
            plugin_data = os.environ.get("CLAUDE_PLUGIN_DATA", "").strip()
            level, why = bootstrap.describe(plugin_data) if plugin_data else ("", "")
            if level == "FAIL":  # not "in a minute": it waits for its retry, or a fix
                raise ToolError(f"memlite cannot start: {why}")
            raise ToolError("memlite is still installing (its Python environment is being "
                            "built in the background); memory tools will work in a minute")
        from memlite.errors import MemliteError
        from memlite.lifecycle import find_worker, probe_ready
        from memlite.spawn import start_worker, worker_command

        directory = Path(self.data_dir)
        deadline = time.monotonic() + WORKER_START_SECONDS
        try:
            start_worker(directory, argv=worker_command(directory, python=python), wait=False)
            while time.monotonic() < deadline:
                info = find_worker(directory)
                if info is not None and probe_ready(info.port, pid=info.pid, timeout=0.3):
                    self.port = info.port
                    return
                time.sleep(0.02)
        except (MemliteError, OSError) as exc:
            raise ToolError(f"could not start the memlite worker: {exc}") from None
        raise ToolError(f"the memlite worker is still starting (waited "
                        f"{WORKER_START_SECONDS:.0f} s); try again in a few seconds")


# ---------------------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------------------


def _int(args: dict[str, Any], name: str, default: int | None, low: int, high: int) -> int:
    value = args.get(name, default)
    if value is None:
        raise ToolError(f"{name} is required")
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) < 30:
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolError(f"{name} must be a whole number, not {json.dumps(value)[:40]}")
    if not low <= value <= high:
        raise ToolError(f"{name} must be between {low} and {high} (got {value})")
    return value


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _str(args: dict[str, Any], name: str, *, max_len: int = 1000) -> str | None:
    value = args.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ToolError(f"{name} must be a string, not {json.dumps(value)[:40]}")
    # JSON may carry a lone surrogate ("\udcff"), which no UTF-8 request can hold: it is
    # searched as U+FFFD (the replacement character) instead of failing the call.
    value = _LONE_SURROGATE.sub("\ufffd", value).strip()
    if len(value) > max_len:
        raise ToolError(f"{name} is longer than {max_len} characters")
    return value or None


def _date(args: dict[str, Any], name: str) -> str | None:
    value = _str(args, name, max_len=40)
    if value is not None and not _DATE.match(value):
        raise ToolError(f"{name} must be an ISO 8601 date such as 2026-01-31 or "
                        f"2026-01-31T14:00:00Z, not {value!r}")
    return value


def _day_key(value: str) -> str:
    """A sortable UTC-ish key: the date and time digits of an ISO string."""
    return re.sub(r"[^0-9]", "", value.replace(" ", "T").split("+")[0].rstrip("Z"))[:14]


# ---------------------------------------------------------------------------------------
# The tools
# ---------------------------------------------------------------------------------------


def _line(obs: dict[str, Any], *, with_tokens: bool) -> str:
    date = str(obs.get("date") or obs.get("created_at") or "")[:19].replace("T", " ")
    title = " ".join(str(obs.get("title") or "").split())[:200]
    text = f"#{obs.get('id')}  {date}  [{obs.get('type')}]  {title}"
    if with_tokens:
        text += f"  (~{obs.get('tokens')} tokens)"
    files = obs.get("files") or [*obs.get("files_modified", ()), *obs.get("files_read", ())]
    if files:
        text += "  files: " + ", ".join(dict.fromkeys(str(f) for f in files[:5]))
    return text


def memory_search(link: WorkerLink, args: dict[str, Any]) -> str:
    query = _str(args, "query", max_len=MAX_QUERY_CHARS)
    if query is None:
        raise ToolError("query is required: the words to search for")
    params: dict[str, Any] = {"q": query, "limit": _int(args, "limit", 20, 1, MAX_LIMIT)}
    for name, param, max_len in (("project", "project", 1000), ("type", "type", 200),
                                 ("file", "file", 500), ("session", "session", 200)):
        value = _str(args, name, max_len=max_len)
        if value is not None:
            params[param] = value
    mode = (_str(args, "mode", max_len=20) or "hybrid").lower()
    if mode not in ("hybrid", "fts", "semantic"):
        raise ToolError(f"mode must be hybrid, fts or semantic, not {mode!r}")
    params["mode"] = mode
    since, until = _date(args, "since"), _date(args, "until")
    if since and until and _day_key(since) > _day_key(until):
        raise ToolError(f"since ({since}) is after until ({until}): the date range is empty")
    params.update({k: v for k, v in (("since", since), ("until", until)) if v})
    found = link.request("GET", "/api/search/index?" + urlencode(params))
    kept = found.get("results", [])
    where = f" in project {params['project']}" if "project" in params else ""
    note = found.get("note")
    if not kept:
        return f'No memory matches "{query}"{where}.' + (f" ({note})" if note else "")
    head = (f'{len(kept)} result(s) for "{query}"{where}, best first. Next: '
            "memory_timeline(anchor=<id>) for what happened around one, "
            "memory_get(ids=[...]) for full records.")
    if note:
        head += f" ({note})"
    return "\n".join([head, *(_line(h, with_tokens=True) for h in kept)])


def memory_timeline(link: WorkerLink, args: dict[str, Any]) -> str:
    anchor = _int(args, "anchor", None, 1, MAX_ID)
    before = _int(args, "before", 5, 0, 100)
    after = _int(args, "after", 5, 0, 100)
    scope = (_str(args, "scope", max_len=20) or "project").lower()
    if scope not in ("project", "session"):
        raise ToolError(f"scope must be project or session, not {scope!r}")
    found = link.request("GET", "/api/timeline?" + urlencode(
        {"anchor": anchor, "before": before, "after": after, "scope": scope}))
    where = (f"session {found.get('session_id')}" if scope == "session"
             else f"project {found.get('project')}")
    lines = [f"Timeline around observation {anchor} in {where}, oldest first (>> marks "
             "the anchor). Next: memory_get(ids=[...]) for full records."]
    for obs in found.get("observations", []):
        mark = ">> " if obs.get("id") == anchor else "   "
        lines.append(mark + _line(obs, with_tokens=False))
    return "\n".join(lines)


_FULL_FIELDS = ("id", "created_at", "type", "title", "subtitle", "narrative", "facts",
                "concepts", "files_read", "files_modified", "project", "session_id",
                "branch", "commit_sha")


def memory_get(link: WorkerLink, args: dict[str, Any]) -> str:
    ids = args.get("ids")
    if isinstance(ids, (int, str)) and not isinstance(ids, bool):
        ids = [ids]
    if not isinstance(ids, list) or not ids:
        raise ToolError("ids is required: a list of observation ids from memory_search")
    if len(ids) > MAX_GET_IDS:
        raise ToolError(f"memory_get takes at most {MAX_GET_IDS} ids per call (got "
                        f"{len(ids)}): pick the ids worth reading from memory_search")
    wanted = [_int({"ids[]": raw}, "ids[]", None, 1, MAX_ID) for raw in ids]
    found = link.request("POST", "/api/observations/batch", {"ids": wanted})
    records = [{k: obs.get(k) for k in _FULL_FIELDS if obs.get(k) not in (None, "", [])}
               for obs in found.get("observations", [])]
    missing = found.get("missing", [])
    head = f"{len(records)} record(s)"
    if missing:
        head += f"; no observation with id {', '.join(str(i) for i in missing)}"
    return head + "\n" + json.dumps(records, ensure_ascii=False, indent=1)


_HANDLERS = {"memory_search": memory_search, "memory_timeline": memory_timeline,
             "memory_get": memory_get}


def call_tool(link: WorkerLink, name: object, arguments: object) -> tuple[str, bool]:
    """``(text, is_error)`` for one tool call; never raises for bad input."""
    handler = _HANDLERS.get(name) if isinstance(name, str) else None
    if handler is None:
        return (f"unknown tool {str(name)[:80]!r}; memlite's tools are "
                f"{', '.join(sorted(TOOL_NAMES))}", True)
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return "arguments must be a JSON object", True
    started = time.monotonic()
    try:
        text = handler(link, arguments)
    except ToolError as exc:
        log.info("%s: error: %s", name, exc)
        return f"{name}: {exc}", True
    except Exception as exc:  # noqa: BLE001 - a tool must never crash the server
        log.exception("%s failed", name)
        return f"{name} failed: {type(exc).__name__}: {exc}", True
    log.info("%s: ok in %.1f ms", name, (time.monotonic() - started) * 1000)
    return text, False
