"""The same three tools on mcp 2.x's ``MCPServer``, run under trio (for comparison).

Not the default: importing ``mcp.server.mcpserver`` costs ~1.3 s before the first byte of
the handshake, and Claude Code waits for that at every session start (see ``server.py``
and BENCHMARKS.md). Selected with ``memlite mcp --impl mcpserver`` (or
``MEMLITE_MCP_IMPL=mcpserver``); it needs memlite's dependencies (the plugin venv).
Tool logic, descriptions and errors are ``tools.py``'s, so both servers answer alike.
"""

from __future__ import annotations

import logging
from typing import Any

from memlite.mcp.server import INSTRUCTIONS, SERVER_NAME, setup_logging
from memlite.mcp.tools import TOOLS, WorkerLink, call_tool

__all__ = ["build", "main"]

log = logging.getLogger("memlite.mcp")


def build(link: WorkerLink) -> Any:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer(SERVER_NAME, instructions=INSTRUCTIONS)
    described = {tool["name"]: tool["description"] for tool in TOOLS}

    def run(name: str, arguments: dict[str, Any]) -> str:
        text, is_error = call_tool(link, name, {k: v for k, v in arguments.items()
                                                 if v is not None})
        if is_error:
            raise ToolError(text)
        return text

    @server.tool(name="memory_search", description=described["memory_search"],
                 structured_output=False)
    def memory_search(query: str, project: str | None = None, type: str | None = None,  # noqa: A002
                      since: str | None = None, until: str | None = None,
                      limit: int = 20) -> str:
        return run("memory_search", {"query": query, "project": project, "type": type,
                                     "since": since, "until": until, "limit": limit})

    @server.tool(name="memory_timeline", description=described["memory_timeline"],
                 structured_output=False)
    def memory_timeline(anchor: int, before: int = 5, after: int = 5,
                        scope: str = "project") -> str:
        return run("memory_timeline", {"anchor": anchor, "before": before, "after": after,
                                       "scope": scope})

    @server.tool(name="memory_get", description=described["memory_get"],
                 structured_output=False)
    def memory_get(ids: list[int]) -> str:
        return run("memory_get", {"ids": ids})

    return server


def main() -> int:
    import trio

    link = WorkerLink()
    setup_logging(link.data_dir)
    log.info("MCPServer (mcp 2.x) MCP server starting")
    trio.run(build(link).run_stdio_async)
    return 0
