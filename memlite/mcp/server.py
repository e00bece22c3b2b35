"""memlite's MCP server: a lean stdio JSON-RPC loop (STANDARD LIBRARY ONLY), the default.

Why not ``MCPServer`` (mcp 2.3.0) by default? Claude Code waits for every MCP server's
cold start before a headless session's first turn, and importing ``mcp.server.mcpserver``
costs ~0.55 s here with a warm page cache (~1.3 s cold, STACK.md section 5): pydantic
models of two protocol revisions. Measured by ``bench/bench_mcp.py`` (p50 of 10 cold
starts, BENCHMARKS.md "MCP (issue 6, early)"):

==================================  ====================  =====================  ==========
server                              spawn -> discover /   spawn -> tools/list    tools/call
                                    initialize reply                             search p50
==================================  ====================  =====================  ==========
this module, ``python -I -S``       30 ms                 30 ms                  2.3 ms
this module, ``memlite mcp``        37 ms                 38 ms                  --
``MCPServer`` under trio            563 ms                564 ms                 3.5 ms
==================================  ====================  =====================  ==========

Through the real CLI (tests/e2e/test_mcp_claude.py, hooks included, one tool call) a
``claude -p`` session took 1.13 s with this server and 1.64 s with ``MCPServer``. Both
pass the same round trip with mcp's own ``Client`` (tests/mcp) and with Claude Code
2.1.332; this one also starts on a bare system ``python3`` (no venv), so Claude Code's
start never depends on the plugin's dependencies being installed. ``MCPServer`` stays
available (``memlite mcp --impl mcpserver`` / ``MEMLITE_MCP_IMPL=mcpserver``,
``mcpserver.py``) for comparison and as a fallback.

Protocol, both eras, as mcp 2.3.0 answers them (wire transcripts of ``MCPServer``):

* 2026-07-28 ("modern"): the client's first request is ``server/discover`` (mcp's Client
  and Claude Code 2.1.332 both probe it); every request carries
  ``_meta["io.modelcontextprotocol/protocolVersion"]``; results carry
  ``resultType: "complete"`` (and ``cacheScope``/``ttlMs`` on discover and lists). A
  proposed version we do not speak gets ``-32022`` with ``data.supported``. We declare
  ``tools.listChanged: false``, so Claude Code 2.1.332 sends just ``server/discover`` then
  ``tools/list`` (observed); a ``subscriptions/listen`` (sent to servers whose lists may
  change) would be acknowledged with ``notifications/subscriptions/acknowledged`` and held.
* 2024-11-05 .. 2025-11-25 ("handshake"): ``initialize`` (the client's version if we know
  it, else the newest we do), ``notifications/initialized``, then requests.
* Always: ``ping``, ``tools/list`` (empty when the MCP_ENABLED setting is false),
  ``tools/call``, empty ``prompts/list``,
  ``resources/list``, ``resources/templates/list``; ``logging/setLevel`` accepted;
  anything else ``-32601``. A line that is not JSON gets ``-32700``; not a request object
  ``-32600``. Notifications (``initialized``, ``cancelled``) need no answer.

Requests are served one at a time, in order (a tool call waits at most ~10 s for the
worker, ~3 s more to start it). Nothing but protocol messages goes to stdout; logs go to
``<data_dir>/mcp.log``. The process exits when stdin closes.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from typing import Any, BinaryIO

from memlite.mcp.tools import TOOLS, WorkerLink, call_tool, mcp_enabled

__all__ = ["HANDSHAKE_VERSIONS", "MODERN_VERSIONS", "SERVER_NAME", "LeanServer", "main"]

SERVER_NAME = "memlite"
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS = ("2026-07-28",)
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_KEY = "io.modelcontextprotocol/subscriptionId"
INSTRUCTIONS = (
    "memlite remembers earlier Claude Code sessions of this machine (local, private). "
    "Use it progressively: memory_search for a compact index, memory_timeline around a "
    "promising id, then memory_get for the full records of only the ids you need.")
MAX_LINE = 16 * 1024 * 1024
LOG_FILE = "mcp.log"

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
UNSUPPORTED_VERSION = -32022

log = logging.getLogger("memlite.mcp")


def _version() -> str:
    try:
        from memlite import __version__
    except Exception:  # noqa: BLE001
        return "0"
    return __version__


class LeanServer:
    """One MCP connection over a pair of byte streams (stdin/stdout by default)."""

    def __init__(self, link: WorkerLink | None = None) -> None:
        self.link = link or WorkerLink()
        self.info = {"name": SERVER_NAME, "version": _version()}
        self.out: BinaryIO = sys.stdout.buffer

    # --- replies -------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        self.out.write(json.dumps(message, ensure_ascii=False, separators=(",", ":"))
                       .encode("utf-8", "replace") + b"\n")
        self.out.flush()

    def _modern(self, params: Any) -> str | None:
        meta = params.get("_meta") if isinstance(params, dict) else None
        version = meta.get(VERSION_KEY) if isinstance(meta, dict) else None
        return version if isinstance(version, str) else None

    def _decorate(self, result: dict[str, Any], modern: bool, *, cached: bool = False):
        if modern:
            result["resultType"] = "complete"
            if cached:
                result.update(cacheScope="private", ttlMs=0)
            result["_meta"] = {SERVER_INFO_KEY: dict(self.info)}
        return result

    # --- dispatch ------------------------------------------------------------------

    def handle(self, message: Any) -> dict[str, Any] | None:
        """The reply to one decoded message (None for notifications and held requests)."""
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return _error(None, INVALID_REQUEST, "not a JSON-RPC 2.0 message object")
        method, rid = message.get("method"), message.get("id")
        if not isinstance(method, str):
            return None  # a response to nothing we sent, or garbage without an id
        if "id" not in message:
            log.debug("notification %s", method)
            return None
        if not (isinstance(rid, (str, int)) and not isinstance(rid, bool)):
            return _error(None, INVALID_REQUEST, "request id must be a string or a number")
        params = message.get("params")
        if params is not None and not isinstance(params, dict):
            return _error(rid, INVALID_PARAMS, "params must be an object")
        params = params or {}
        version = self._modern(params)
        if version is not None and version not in MODERN_VERSIONS:
            return _error(rid, UNSUPPORTED_VERSION, f"unsupported protocol version {version!r}",
                          {"supported": [*MODERN_VERSIONS, *HANDSHAKE_VERSIONS],
                           "requested": version})
        modern = version is not None
        if method == "server/discover":
            return _ok(rid, self._decorate({
                "supportedVersions": list(MODERN_VERSIONS),
                "capabilities": {"tools": {"listChanged": False}},
                "instructions": INSTRUCTIONS}, True, cached=True))
        if method == "initialize":
            asked = params.get("protocolVersion")
            chosen = asked if asked in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
            return _ok(rid, {"protocolVersion": chosen,
                             "capabilities": {"tools": {"listChanged": False}},
                             "serverInfo": dict(self.info), "instructions": INSTRUCTIONS})
        if method == "subscriptions/listen":
            self.send({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                       "params": {"_meta": {SUBSCRIPTION_KEY: rid}, "notifications": {}}})
            return None  # held open: nothing we list ever changes
        if method in ("ping", "logging/setLevel"):
            return _ok(rid, self._decorate({}, modern))
        if method == "tools/list":
            tools = TOOLS if mcp_enabled(self.link.data_dir) else []
            return _ok(rid, self._decorate({"tools": tools}, modern, cached=True))
        if method in ("prompts/list", "resources/list", "resources/templates/list"):
            key = {"prompts/list": "prompts", "resources/list": "resources",
                   "resources/templates/list": "resourceTemplates"}[method]
            return _ok(rid, self._decorate({key: []}, modern, cached=True))
        if method == "tools/call":
            if mcp_enabled(self.link.data_dir):
                text, is_error = call_tool(self.link, params.get("name"),
                                           params.get("arguments"))
            else:
                text, is_error = ("memlite's MCP tools are turned off (MCP_ENABLED=false; "
                                  "see `memlite settings`)"), True
            return _ok(rid, self._decorate(
                {"content": [{"type": "text", "text": text}], "isError": is_error}, modern))
        return _error(rid, METHOD_NOT_FOUND, f"method not found: {method[:100]}")

    def serve(self, stream: BinaryIO) -> None:
        """Answer every line of ``stream`` until it closes."""
        while True:
            line = stream.readline(MAX_LINE + 1)
            if not line:
                return
            if len(line) > MAX_LINE:
                while line and not line.endswith(b"\n"):  # skip the rest of the line
                    line = stream.readline(MAX_LINE)
                self.send(_error(None, INVALID_REQUEST, "message too large"))
                continue
            if not line.strip():
                continue
            started = time.monotonic()
            try:
                message = json.loads(line.decode("utf-8", "replace"))
            except (ValueError, RecursionError) as exc:
                self.send(_error(None, PARSE_ERROR, f"parse error: {str(exc)[:100]}"))
                continue
            try:
                reply = self.handle(message)
            except Exception as exc:  # noqa: BLE001 - never crash on one message
                log.exception("internal error")
                rid = message.get("id") if isinstance(message, dict) else None
                reply = _error(rid if isinstance(rid, (str, int)) else None, -32603,
                               f"internal error: {type(exc).__name__}")
            if reply is not None:
                self.send(reply)
            if isinstance(message, dict):
                log.debug("%s in %.1f ms", message.get("method"),
                          (time.monotonic() - started) * 1000)


def _ok(rid: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": result}


def _error(rid: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": rid, "error": error}


def setup_logging(data_dir: str) -> None:
    """Log to ``<data_dir>/mcp.log`` (0600), never to stdout or stderr."""
    root = logging.getLogger("memlite")
    root.setLevel(logging.INFO if not os.environ.get("MEMLITE_MCP_DEBUG") else logging.DEBUG)
    root.propagate = False
    try:
        os.makedirs(data_dir, mode=0o700, exist_ok=True)
        path = os.path.join(data_dir, LOG_FILE)
        if os.path.exists(path) and os.path.getsize(path) > 1024 * 1024:
            os.replace(path, path + ".1")
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        handler: logging.Handler = logging.StreamHandler(os.fdopen(fd, "a", encoding="utf-8"))
    except OSError:
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter(
        f"%(asctime)s pid={os.getpid()} %(levelname)s %(name)s: %(message)s"))
    root.addHandler(handler)


def main(argv: list[str] | None = None) -> int:
    """Serve MCP on stdin/stdout until stdin closes; always returns 0."""
    link = WorkerLink()
    setup_logging(link.data_dir)
    log.info("lean MCP server started (python %s)", sys.version.split()[0])
    # Anything printed by accident must not corrupt the protocol stream.
    server = LeanServer(link)
    sys.stdout = sys.stderr
    try:
        server.serve(sys.stdin.buffer)
    except (BrokenPipeError, KeyboardInterrupt):
        pass  # Claude Code went away
    except Exception:  # noqa: BLE001
        log.exception("server stopped")
    log.info("stdin closed: exiting")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
