"""memlite.mcp: the MCP memory tools (memory_search -> memory_timeline -> memory_get).

``server`` is the default lean stdio server (standard library only), ``tools`` the tool
definitions and their calls to the worker's API, ``mcpserver`` the same tools on mcp 2.x's
``MCPServer`` (for comparison). ``memlite mcp`` and ``plugin/scripts/memlite-mcp`` run it.
"""

__all__: list[str] = []
