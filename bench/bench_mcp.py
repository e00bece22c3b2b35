"""MCP server start-up and tool-call latency: the lean server beside mcp 2.x's MCPServer.

    python bench/bench_mcp.py              # print the report
    python bench/bench_mcp.py --write      # ... and update BENCHMARKS.md

Claude Code waits for every MCP server's cold start before a headless session's first
turn, so the figure that matters is spawn -> the answer that completes the handshake
(``server/discover``, which Claude Code 2.1.332 and mcp 2.3.0's Client send first, or the
2025 ``initialize``) and spawn -> the ``tools/list`` answer. Each is measured ``--runs``
times (default 10) per server, as a process fed JSON-RPC lines on stdin by this script
(no client library in the way), round-robin so every row sees the same machine state:

* lean, launcher: ``plugin/scripts/memlite-mcp`` (-> ``python -I -S scripts/mcp.py``), what
  ``plugin/.mcp.json`` runs;
* lean, CLI: ``python -m memlite mcp`` (site and memlite's package imports);
* MCPServer: ``python -m memlite mcp --impl mcpserver`` (mcp 2.3.0 under trio).

Then the tool-call round trip (``tools/call`` -> answer) against a warm worker holding
``--observations`` observations (default 2,000): memory_search, memory_timeline and
memory_get, ``--calls`` times each (default 200), p50/p95, for both servers.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks_md import write_section  # noqa: E402

from memlite import storage  # noqa: E402

BENCHMARKS = ROOT / "BENCHMARKS.md"
SECTION = "## MCP (issue 6, early)"
LAUNCHER = ROOT / "plugin" / "scripts" / "memlite-mcp"
META = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
                  "io.modelcontextprotocol/clientCapabilities": {}}}
SERVERS = {
    "lean (launcher, -I -S)": [str(LAUNCHER)],
    "lean (`memlite mcp`)": [sys.executable, "-m", "memlite", "mcp"],
    "MCPServer (mcp 2.3.0, trio)": [sys.executable, "-m", "memlite", "mcp", "--impl",
                                    "mcpserver"],
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Conn:
    """One server process driven line by line."""

    def __init__(self, argv: list[str], env: dict[str, str]) -> None:
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, cwd=ROOT)
        self.next_id = 0

    def ask(self, method: str, params: dict | None = None) -> dict:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"server exited before answering {method}")
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                return reply

    def tell(self, method: str) -> None:
        assert self.proc.stdin
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")
        self.proc.stdin.flush()

    def since_spawn_ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def handshake(conn: Conn, era: str) -> tuple[float, float]:
    """(spawn -> handshake answer, spawn -> tools/list answer) in ms."""
    if era == "discover":
        assert "result" in conn.ask("server/discover", META)
        first = conn.since_spawn_ms()
        assert len(conn.ask("tools/list", META)["result"]["tools"]) == 3
    else:
        assert "result" in conn.ask("initialize", {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"}})
        first = conn.since_spawn_ms()
        conn.tell("notifications/initialized")
        assert len(conn.ask("tools/list")["result"]["tools"]) == 3
    return first, conn.since_spawn_ms()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def seed(data_dir: Path, count: int) -> list[int]:
    conn = storage.connect(data_dir)
    ids = []
    words = ["parser", "worker", "spool", "token", "greeter", "search", "timeline", "schema"]
    with conn:
        for i in range(count):
            w = words[i % len(words)]
            ids.append(storage.insert_observation(conn, storage.NewObservation(
                session_id=f"s{i // 50}", project=f"/bench/p{i % 3}", type="change",
                title=f"{w} change number {i}", narrative=f"Changed the {w} ({i}). " * 8,
                facts=(f"{w} fact {i}",), files_modified=(f"src/{w}.py",),
                backend="rules")).id)
    conn.close()
    return ids


def run(args: argparse.Namespace) -> str:
    with tempfile.TemporaryDirectory(prefix="memlite-bench-mcp-") as tmp:
        data_dir = Path(tmp) / "data"
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": tmp,
               "MEMLITE_DATA_DIR": str(data_dir), "MEMLITE_WORKER_PORT": str(free_port()),
               "MEMLITE_PYTHON": sys.executable}
        ids = seed(data_dir, args.observations)
        start = subprocess.run([sys.executable, "-m", "memlite", "worker", "start"], env=env,
                               capture_output=True, text=True, timeout=60, cwd=ROOT)
        assert start.returncode == 0, start.stderr
        try:
            return measure(args, env, ids)
        finally:
            subprocess.run([sys.executable, "-m", "memlite", "worker", "stop"], env=env,
                           capture_output=True, timeout=60, cwd=ROOT)


def measure(args: argparse.Namespace, env: dict[str, str], ids: list[int]) -> str:
    starts: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for _ in range(args.runs):
        for name, argv in SERVERS.items():
            for era in ("discover", "initialize"):
                conn = Conn(argv, env)
                try:
                    starts.setdefault((name, era), []).append(handshake(conn, era))
                finally:
                    conn.close()
    calls = {
        "memory_search": {"query": "parser change", "limit": 20},
        "memory_timeline": {"anchor": ids[len(ids) // 2], "before": 5, "after": 5},
        "memory_get": {"ids": ids[100:105]},
    }
    trips: dict[tuple[str, str], list[float]] = {}
    for name in ("lean (launcher, -I -S)", "MCPServer (mcp 2.3.0, trio)"):
        conn = Conn(SERVERS[name], env)
        try:
            handshake(conn, "discover")
            for _ in range(args.calls):
                for tool, arguments in calls.items():
                    began = time.perf_counter()
                    reply = conn.ask("tools/call", {"name": tool, "arguments": arguments,
                                                    **META})
                    trips.setdefault((name, tool), []).append(
                        (time.perf_counter() - began) * 1000)
                    assert not reply["result"].get("isError"), reply
        finally:
            conn.close()

    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        SECTION, "",
        f"`python bench/bench_mcp.py` ({stamp}; {platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}). Each server is a "
        "process fed JSON-RPC lines; wall time from spawn, p50 (p95) of "
        f"{args.runs} cold starts, round-robin. `discover` = the 2026-07-28 first request "
        "(what Claude Code 2.1.332 and mcp's Client send), `initialize` = the 2025 handshake.",
        "",
        "| server | spawn -> discover | spawn -> tools/list | spawn -> initialize | "
        "spawn -> tools/list |",
        "|---|---|---|---|---|",
    ]
    for name in SERVERS:
        cells = []
        for era in ("discover", "initialize"):
            pairs = starts[(name, era)]
            for i in (0, 1):
                values = [p[i] for p in pairs]
                cells.append(f"{statistics.median(values):.0f} ms ({pct(values, 0.95):.0f})")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += [
        "",
        f"Tool call round trip (`tools/call` -> answer, through the worker's HTTP API, "
        f"{args.observations:,} observations, {args.calls} calls each), p50 / p95:",
        "",
        "| server | memory_search | memory_timeline | memory_get (5 ids) |",
        "|---|---|---|---|",
    ]
    for name in ("lean (launcher, -I -S)", "MCPServer (mcp 2.3.0, trio)"):
        cells = [f"{statistics.median(trips[(name, t)]):.2f} / {pct(trips[(name, t)], 0.95):.2f}"
                 " ms" for t in calls]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lean = statistics.median(p[1] for p in starts[("lean (launcher, -I -S)", "discover")])
    heavy = statistics.median(p[1] for p in starts[("MCPServer (mcp 2.3.0, trio)", "discover")])
    lines += [
        "",
        f"Default: the lean server (`memlite/mcp/server.py`): {lean:.0f} ms to tools/list "
        f"against {heavy:.0f} ms for MCPServer, which Claude Code would add to every "
        "session start; both pass the same round trip with mcp's Client (tests/mcp) and "
        "the real Claude Code 2.1.332 (tests/e2e/test_mcp_claude.py), and the lean one also "
        "starts on a bare system python3 before the plugin's venv exists.",
        "",
    ]
    return "\n".join(lines)




def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="cold starts per server")
    parser.add_argument("--calls", type=int, default=200, help="tool calls per tool")
    parser.add_argument("--observations", type=int, default=2000)
    parser.add_argument("--write", action="store_true", help=f"update {SECTION}")
    args = parser.parse_args()
    section = run(args)
    print(section)
    if args.write:
        write_section(SECTION, section)
        print(f"updated {BENCHMARKS}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
