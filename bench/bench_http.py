"""HTTP benchmark: ``POST /api/events`` against a real worker, beside a bare health check.

Figures, not pass/fail. A real worker (``memlite worker start``) runs on a free loopback
port in a temporary data directory; the clients are threads in this process, each with
its own keep-alive connection speaking HTTP/1.1 over a raw socket (a minimal client, so
the client is not what is measured). For 1 and ``--clients`` concurrent clients:

* ``GET /api/health``: the floor, Hypercorn + Quart + our auth guard and nothing else
  (STACK.md §2 measured Hypercorn's own ceiling at ~700–800 requests/s per core here);
* ``POST /api/events``: a ~1 KB PostToolUse hook event, each with a new ``tool_use_id``
  (so every request is a real insert): auth, JSON parsing, validation, one storage-actor
  commit (group commit under concurrency), session actor doorbell and bus publish, and
  the reply only after the commit.

Each run sends ``--requests`` requests after ``--warmup`` unmeasured ones, bounded and on
loopback only. Latency is per request as the client sees it (send to last byte); the
worker's CPU time per request is read from ``/proc/<pid>/stat``.

Usage::

    python bench/bench_http.py                # print the Markdown section
    python bench/bench_http.py --write        # ... and update BENCHMARKS.md
    python bench/bench_http.py --requests 500 # a quicker run
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from benchmarks_md import write_section  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## HTTP (issue 3)"
BENCHMARKS = ROOT / "BENCHMARKS.md"
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


class Client:
    """One keep-alive HTTP/1.1 connection; ``call`` returns (status, body)."""

    def __init__(self, port: int, token: str) -> None:
        self.port = port
        self.prefix = (f"Host: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n")
        self.reconnects = -1
        self._connect()

    def _connect(self) -> None:
        self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""
        self.reconnects += 1

    def call(self, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
        head = f"{method} {path} HTTP/1.1\r\n{self.prefix}"
        if body:
            head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        self.sock.sendall(head.encode() + b"\r\n" + body)
        while b"\r\n\r\n" not in self.buffer:
            self._fill()
        header, _, rest = self.buffer.partition(b"\r\n\r\n")
        length = int(re.search(rb"(?im)^content-length:\s*(\d+)", header)[1])
        while len(rest) < length:
            rest += self._recv()
        self.buffer = rest[length:]
        if re.search(rb"(?im)^connection:\s*close", header):
            # Hypercorn ends a keep-alive connection after keep_alive_max_requests (1000).
            self.sock.close()
            self._connect()
        return int(header[9:12]), rest[:length]

    def _recv(self) -> bytes:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("the worker closed the connection")
        return chunk

    def _fill(self) -> None:
        self.buffer += self._recv()

    def close(self) -> None:
        self.sock.close()


def _event(client: int, n: int) -> bytes:
    return json.dumps({
        "session_id": f"bench-session-{client:02d}", "hook_event_name": "PostToolUse",
        "cwd": "/tmp", "tool_name": "Bash", "tool_use_id": f"toolu_{client:02d}_{n:08d}",
        "tool_input": {"command": "pytest -q tests/storage", "description": "run the tests"},
        "tool_response": {"stdout": "." * 600 + f"\n{n} passed", "stderr": "",
                          "interrupted": False},
    }).encode()


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def run(port: int, token: str, pid: int, *, kind: str, clients: int, requests: int,
        warmup: int, offset: int) -> dict:
    """Send ``requests`` (plus warm-up) split over ``clients`` threads; return figures."""
    per_client = max(1, requests // clients)
    latencies: list[list[float]] = [[] for _ in range(clients)]
    errors: list[str] = []
    barrier = threading.Barrier(clients + 1)
    connections = [Client(port, token) for _ in range(clients)]

    def request(c: Client, i: int, n: int) -> None:
        if kind == "health":
            status, body = c.call("GET", "/api/health")
        else:
            status, body = c.call("POST", "/api/events", _event(i, offset + n))
        if status != 200:
            errors.append(f"{status} {body[:200]!r}")

    def worker(i: int) -> None:
        c = connections[i]
        try:
            for n in range(max(1, warmup // clients)):
                request(c, i, -1 - n)
            barrier.wait()
            record = latencies[i].append
            for n in range(per_client):
                started = time.perf_counter()
                request(c, i, n)
                record(time.perf_counter() - started)
            barrier.wait()
        except Exception as exc:
            errors.append(f"client {i}: {exc!r}")
            barrier.abort()  # nobody waits forever for a client that died

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    try:
        barrier.wait()
        cpu0, t0 = _cpu_seconds(pid), time.perf_counter()
        barrier.wait()
        elapsed, cpu = time.perf_counter() - t0, _cpu_seconds(pid) - cpu0
    except threading.BrokenBarrierError:
        elapsed = cpu = 0.0
    for thread in threads:
        thread.join()
    for c in connections:
        c.close()
    if errors:
        raise RuntimeError(f"{len(errors)} requests failed, e.g. {errors[0]}")
    flat = sorted(x for row in latencies for x in row)
    q = statistics.quantiles(flat, n=100)
    return {"kind": kind, "clients": clients, "requests": len(flat), "seconds": elapsed,
            "rate": len(flat) / elapsed, "p50": q[49], "p95": q[94], "p99": q[98],
            "cpu_per_request": cpu / len(flat), "worker_cpu_share": cpu / elapsed}


def _memlite(*args: str, env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-m", "memlite", *args], env=env, text=True,
                          capture_output=True, timeout=60, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"memlite {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))


def machine_line() -> str:
    cpu = "?"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{cpu}, {os.cpu_count()} CPUs, {platform.system()} {platform.release()}"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def report(args, results: list[dict], rss_kb: int) -> str:
    today = datetime.date.today().isoformat()
    health = {r["clients"]: r["rate"] for r in results if r["kind"] == "health"}
    lines = [
        SECTION, "",
        f"Measured {today} by `python bench/bench_http.py --requests {args.requests} "
        f"--clients {args.clients}`.",
        "",
        f"- Machine: `{machine_line()}`; Python {platform.python_version()}.",
        "- Server: a real worker (`memlite worker start`, temporary data directory, free "
        "loopback port): Hypercorn (h11) + Quart-Trio, one process, one event loop; "
        "storage actor with WAL, `synchronous=NORMAL`, group commit.",
        "- Clients: threads in the benchmark process, one keep-alive connection each, raw "
        "HTTP/1.1 over a socket; each sends its next request when the reply arrives. "
        f"{args.warmup} warm-up requests per run are not counted.",
        "- `POST /api/events`: a ~1 KB PostToolUse event, new `tool_use_id` each time (a "
        "real insert), answered after the commit. `GET /api/health`: the bare floor "
        "(Hypercorn, Quart, the Host/auth guard).",
        "",
        "| route | clients | requests | req/s | vs health | p50 | p95 | p99 "
        "| worker CPU/request | worker CPU busy |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        route = "GET /api/health" if r["kind"] == "health" else "POST /api/events"
        ratio = f"{r['rate'] / health[r['clients']]:.0%}" if r["clients"] in health else "-"
        lines.append(
            f"| {route} | {r['clients']} | {r['requests']:,} | **{r['rate']:,.0f}** | {ratio} "
            f"| {ms(r['p50'])} | {ms(r['p95'])} | {ms(r['p99'])} "
            f"| {ms(r['cpu_per_request'])} | {r['worker_cpu_share']:.0%} |")
    lines += [
        "",
        "Target (issue 3): `POST /api/events` within 70% of Hypercorn's own ceiling "
        "(~700–800 requests/s per core, STACK.md §2); `vs health` compares it with the bare "
        "health route in the same run. Worker RSS after the run: "
        f"{rss_kb / 1024:.0f} MB.",
    ]
    return "\n".join(lines) + "\n"




def main(args) -> None:
    env = {**os.environ, "MEMLITE_DATA_DIR": str(args.base / "data"),
           "MEMLITE_WORKER_PORT": str(_free_port())}
    info = json.loads(_memlite("worker", "start", "--json", env=env))
    try:
        port, pid = info["port"], info["pid"]
        token = (args.base / "data" / "token").read_text().strip()
        results, offset = [], 0
        for clients in (1, args.clients):
            for kind in ("health", "events"):
                result = run(port, token, pid, kind=kind, clients=clients,
                             requests=args.requests, warmup=args.warmup, offset=offset)
                offset += args.requests + args.warmup
                results.append(result)
                print(f"  {kind} x{clients}: {result['rate']:,.0f} req/s, p50 "
                      f"{ms(result['p50'])}, p99 {ms(result['p99'])}", file=sys.stderr)
        rss = _rss_kb(pid)
    finally:
        _memlite("worker", "stop", env=env)
    section = report(args, results, rss)
    print(section)
    if args.write:
        write_section(SECTION, section)
        print(f"updated {BENCHMARKS}", file=sys.stderr)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=4000, help="measured requests per run")
    parser.add_argument("--warmup", type=int, default=200, help="unmeasured requests per run")
    parser.add_argument("--clients", type=int, default=16, help="the concurrent run's clients")
    parser.add_argument("--write", action="store_true", help=f"update {SECTION} in BENCHMARKS.md")
    return parser.parse_args(argv)


if __name__ == "__main__":
    arguments = parse_args()
    with tempfile.TemporaryDirectory(prefix="memlite-bench-", dir=ROOT / "bench") as tmp:
        arguments.base = Path(tmp)
        main(arguments)
