"""Helpers of the MCP tests (fixtures are in conftest.py)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path

from procroot import PROC  # noqa: E402

from memlite.lifecycle import pid_alive

REPO = Path(__file__).resolve().parents[2]


def worker_pids(data_dir: Path) -> set[int]:
    """Live ``memlite worker run --data-dir <data_dir>`` processes, from /proc."""
    wanted = os.path.realpath(data_dir)
    found = set()
    for entry in os.listdir(PROC):
        if not entry.isdigit():
            continue
        try:
            with open(f"{PROC}/{entry}/cmdline", "rb") as f:
                args = [a.decode("utf-8", "replace") for a in f.read().split(b"\0")]
        except OSError:
            continue
        if "worker" in args and "run" in args and wanted in args and pid_alive(int(entry)):
            found.add(int(entry))
    return found


def text_of(result: object) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)  # type: ignore[attr-defined]


@contextlib.asynccontextmanager
async def connect(env: dict[str, str], *argv: str) -> AsyncIterator[object]:
    """mcp's own Client over stdio, against ``argv`` (default: the plugin's launcher)."""
    import mcp
    from mcp import StdioServerParameters

    command, *args = argv or (str(REPO / "plugin" / "scripts" / "memlite-mcp"),)
    async with mcp.Client(StdioServerParameters(command=command, args=args, env=env,
                                                cwd=str(REPO))) as client:
        yield client
