"""The HTTP request path of two revisions, side by side in one run (issue 14, round 7).

Figures, not pass/fail. Workers of the working tree and of ``--rev`` (its ``memlite``
package from git, put first on ``PYTHONPATH``) serve copies of one database at once
(default: ``bench_peer_http.py``'s cached 10,000-observation one; ``EMBEDDER=none``: the
requests measured need no model); one kept-alive connection each; the 50 queries of
``bench_search.py`` as ``GET /api/search?mode=fts``, ``GET /api/search/index?mode=fts``
and ``GET /api/health``, interleaved request by request across the workers (their order
reversed every round), one warm-up round, then ``--rounds`` timed. Per worker and request:
client latency (p50, mean, p95) and the worker process's CPU time per request (from
``/proc``, Linux; the whole process, every thread). The bodies the two answer to the same
search must be the same; the run says how many are.

``--profile`` runs each worker under ``http_probe_worker.py`` and prints, per revision and
route, the p50 time between consecutive steps of a request inside the worker (from the
arrival of its bytes to the app's return), the search's own wall and CPU time, and the
process's CPU per request.

Usage::

    python bench/bench_http_ab.py --rev 1cd39da [--rounds 4] [--profile]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.parse
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import bench_search  # noqa: E402
from bench_http import Client, _free_port  # noqa: E402

DB = Path("/tmp/memlite-bench-peer/data-10000-minilm/memlite/memlite.db")
ROUTES = {"fts": "/api/search", "index fts": "/api/search/index", "health": "/api/health"}


def export(rev: str, into: Path) -> Path:
    """``rev``'s ``memlite`` package under ``into`` (a directory for ``PYTHONPATH``)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "memlite"],
                             capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def cpu_seconds(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return float("nan")


class Worker:
    """One worker on a copy of the database; stopped by its pid."""

    def __init__(self, name: str, pythonpath: str | None, db: Path, base: Path,
                 profile: bool) -> None:
        self.name = name
        self.data = base / name
        self.data.mkdir()
        shutil.copy(db, self.data / db.name)
        self.port = _free_port()
        self.probe = base / f"{name}-probe.json"
        env = {**os.environ, "MEMLITE_DATA_DIR": str(self.data), "MEMLITE_EMBEDDER": "none",
               "MEMLITE_WORKER_PORT": str(self.port), "PROBE_OUT": str(self.probe)}
        env.pop("PYTHONPATH", None)
        if pythonpath:
            env["PYTHONPATH"] = pythonpath
        command = ([sys.executable, str(ROOT / "bench" / "http_probe_worker.py")] if profile
                   else [sys.executable, "-m", "memlite", "worker", "run"])
        self.proc = subprocess.Popen(command, env=env, cwd=str(base),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        end = time.monotonic() + 120
        while True:  # the port answers, and the token is written (the worker does both)
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                if (self.data / "token").read_text().strip():
                    break
            except OSError:
                pass
            if time.monotonic() > end or self.proc.poll() is not None:
                raise RuntimeError(f"worker {name} did not start")
            time.sleep(0.1)
        self.client = Client(self.port, (self.data / "token").read_text().strip())

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


def steps(records: list[dict], path: str) -> list[tuple[str, float]]:
    """p50 ms between consecutive marks (first occurrence order), then totals."""
    rows: dict[str, list[float]] = {}
    for record in (r for r in records if r["path"] == path):
        previous = ("bytes arrived", record["recv"])
        for name, at in record["marks"]:
            rows.setdefault(f"{previous[0]} -> {name}", []).append((at - previous[1]) / 1e6)
            previous = (name, at)
        rows.setdefault("search wall (in queries.*)", []).append(
            record.get("search_wall", 0) / 1e6)
        rows.setdefault("search CPU (its thread)", []).append(record.get("search_cpu", 0) / 1e6)
        rows.setdefault("process CPU, bytes arrived -> app returned", []).append(
            record["cpu"] / 1e6)
        rows.setdefault("garbage collection inside the request", []).append(
            record.get("gc", 0) / 1e6)
    return [(name, statistics.median(v)) for name, v in rows.items()]


def main(args: argparse.Namespace) -> None:
    queries = [text for _, text in bench_search.queries(bench_search.vocabulary())]
    load0 = " ".join(f"{x:.2f}" for x in os.getloadavg())
    with tempfile.TemporaryDirectory(prefix="memlite-http-ab-") as tmp:
        base = Path(tmp)
        old = export(args.rev, base / "rev")
        workers = [Worker(args.rev, str(old), args.db, base, args.profile),
                   Worker("now", None, args.db, base, args.profile)]
        try:
            time.sleep(args.settle)
            latency = {(w.name, r): [] for w in workers for r in ROUTES}
            cpu = {(w.name, r): 0.0 for w in workers for r in ROUTES}
            bodies: dict[tuple[str, str], set[bytes]] = {}
            for round_ in range(args.rounds + 1):
                for route, path in ROUTES.items():
                    before = {w.name: cpu_seconds(w.proc.pid) for w in workers}
                    for q in queries:
                        url = path if route == "health" else f"{path}?" + urllib.parse.urlencode(
                            {"q": q, "limit": 20, "mode": "fts"})
                        for w in (workers if round_ % 2 else workers[::-1]):
                            t0 = time.perf_counter()
                            status, body = w.client.call("GET", url)
                            took = time.perf_counter() - t0
                            if status != 200:
                                raise RuntimeError(f"{w.name} {url}: {status} {body[:200]!r}")
                            if round_:
                                latency[(w.name, route)].append(took * 1000)
                            if route != "health":
                                bodies.setdefault((route, q), set()).add(body)
                    if round_:
                        for w in workers:
                            cpu[(w.name, route)] += cpu_seconds(w.proc.pid) - before[w.name]
                if round_ == 0 and args.profile:
                    for w in workers:
                        w.client.call("GET", "/probe/clear")
            if args.profile:
                for w in workers:
                    w.client.call("GET", "/probe/dump")
        finally:
            for w in workers:
                w.stop()
        load1 = " ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"`python bench/bench_http_ab.py --rev {args.rev} --rounds {args.rounds}`; load "
              f"average at the start {load0}, at the end {load1}\n")
        print("| request | revision | n | p50 | mean | p95 | worker CPU per request |")
        print("|---|---|---:|---:|---:|---:|---:|")
        for route in ROUTES:
            for w in workers:
                x = sorted(latency[(w.name, route)])
                print(f"| {route} | {w.name} | {len(x)} | {statistics.median(x):.2f} ms | "
                      f"{statistics.mean(x):.2f} ms | {x[int(len(x) * 0.95)]:.2f} ms | "
                      f"{cpu[(w.name, route)] * 1000 / len(x):.2f} ms |")
        same = sum(len(found) == 1 for found in bodies.values())
        print(f"\nSame body from both revisions: {same} of {len(bodies)} searches.")
        if args.profile:
            for w in workers:
                records = json.loads(w.probe.read_text())
                for path in ("/api/search", "/api/search/index", "/api/health"):
                    print(f"\n{w.name} {path} (p50 ms per step, n="
                          f"{sum(r['path'] == path for r in records)}):")
                    for name, ms in steps(records, path):
                        print(f"  {name:70s} {ms:7.3f}")
                    mine = [r for r in records if r["path"] == path]
                    collected = [r.get("gc", 0) / 1e6 for r in mine]
                    some = [x for x in collected if x] or [0.0]
                    generations = sorted(g for r in mine for g in r.get("gc_generations", []))
                    print(f"  requests with a collection: {sum(x > 0 for x in collected)} of "
                          f"{len(mine)}, their mean {statistics.mean(some):.3f} ms, the "
                          f"longest {max(some):.3f} ms; oldest generations {generations[-5:]}")


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default="1cd39da", help="the revision to compare with")
    parser.add_argument("--db", type=Path, default=DB)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--settle", type=float, default=3.0,
                        help="seconds to wait after the workers start")
    parser.add_argument("--profile", action="store_true")
    return parser.parse_args(argv)


if __name__ == "__main__":
    main(parse_args())
