"""The first search after a worker start, two revisions in one run (round 12).

Figures, not pass/fail. A worker starts (as after an idle shutdown: the model loaded on
a thread, the in-memory indexes built), and its first hybrid ``GET /api/search`` comes
``--delays`` seconds after the worker was started, then five more, one by one. Before
this round, the vector index a hybrid search needs (``memlite.storage.vector_index``) was
built inside the first search that needed it; now the worker builds it at its start
(``memlite.storage.vector_warm``). Per size, delay, filter (none, or the project's) and
revision: the first search's wall time (median of ``--runs``; min-max), the median of
the five after it, and the worker's RSS after them (``ps``: file pages of the mapped
database included).

Databases: ``bench_peer_http.py``'s cached ones (10,000 observations with MiniLM vectors,
100,000 with random vectors of MiniLM's width; one project), copied for each run and read
once beforehand so that the OS's file cache holds them (as a machine that ran memlite
recently). The worker runs ``EMBEDDER=minilm`` (its model cache: ``$MEMLITE_MODEL_CACHE``).
The revisions' workers alternate run by run. ``--db`` (with ``--project``) runs on
another database instead (``tests/test_bench_smoke.py``'s small one).

Usage::

    python bench/bench_first_search.py --before 9f21d55 [--runs 3] [--delays 3,8]
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
import tempfile
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import bench_search  # noqa: E402
from bench_http import Client, _free_port  # noqa: E402
from bench_http_ab import export  # noqa: E402

CACHE = Path("/tmp/memlite-bench-peer")
SIZES = {10_000: "data-10000-minilm", 100_000: "data-100000-random"}
PROJECT = "/home/dev/project-00"  # bench_peer_http's one project
LATER = 5


def rss_mb(pid: int) -> float:
    """Resident size from ``ps`` (Linux and macOS), MB."""
    out = subprocess.run(["ps", "-o", "rss=", "-p", str(pid)], capture_output=True,
                         text=True, check=False).stdout.strip()
    return int(out) / 1024 if out.isdigit() else float("nan")


def one_run(db: Path, pythonpath: str | None, delay: float, project: str | None,
            queries: list[str], base: Path) -> tuple[float, float, float]:
    """(first search ms, median of the next ``LATER`` ms, RSS MB) of one worker start."""
    data = Path(tempfile.mkdtemp(dir=base))
    shutil.copy(db, data / "memlite.db")
    with open(data / "memlite.db", "rb") as f:  # into the OS's file cache
        while f.read(1 << 20):
            pass
    port = _free_port()
    env = {**os.environ, "MEMLITE_DATA_DIR": str(data), "MEMLITE_EMBEDDER": "minilm",
           "MEMLITE_WORKER_PORT": str(port), "MEMLITE_OBSERVER": "rules"}
    env.pop("PYTHONPATH", None)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "memlite", "worker", "run"], env=env,
                            cwd=str(data), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:  # listening, and its token written
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                if (data / "token").read_text().strip():
                    break
            except OSError:
                pass
            if time.monotonic() - started > 120 or proc.poll() is not None:
                raise RuntimeError("the worker did not start")
            time.sleep(0.02)
        time.sleep(max(0.0, delay - (time.monotonic() - started)))
        client = Client(port, (data / "token").read_text().strip())  # after: keep-alive ends
        taken = []
        for q in queries[:1 + LATER]:
            params = {"q": q, "limit": 20, **({"project": project} if project else {})}
            t0 = time.perf_counter()
            status, body = client.call("GET", "/api/search?" + urllib.parse.urlencode(params))
            taken.append((time.perf_counter() - t0) * 1000)
            if status != 200 or json.loads(body).get("mode_used") != "hybrid":
                raise RuntimeError(f"search answered {status}: {body[:200]!r}")
        return taken[0], statistics.median(taken[1:]), rss_mb(proc.pid)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
        shutil.rmtree(data, ignore_errors=True)


def main(args: argparse.Namespace) -> None:
    queries = [q for _, q in bench_search.queries(bench_search.vocabulary())]
    delays = [float(d) for d in args.delays.split(",")]
    sizes = [int(s) for s in args.sizes.split(",")] if args.db is None else [0]
    base = Path(tempfile.mkdtemp(prefix="memlite-first-search-"))
    try:
        before = str(export(args.before, base / "before"))
        print(f"`python bench/bench_first_search.py --before {args.before} --runs {args.runs} "
              f"--delays {args.delays} --sizes {args.sizes}`; load average at the start "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
        print(f"| observations | first search at | filter | revision | first search | "
              f"next {LATER} (median) | worker RSS after |")
        print("|---:|---:|---|---|---:|---:|---:|")
        for size in sizes:
            db = args.db or args.cache / SIZES[size] / "memlite" / "memlite.db"
            if not db.exists():
                raise SystemExit(f"{db} is missing: run bench/bench_peer_http.py --sizes "
                                 f"{size} once to make it")
            for delay in delays:
                for project in (None, args.project):
                    got: dict[str, list[tuple[float, float, float]]] = {"before": [], "now": []}
                    for run in range(args.runs):
                        order = ("before", "now") if run % 2 == 0 else ("now", "before")
                        for name in order:
                            shift = queries[run * 7 % 40:] + queries[:run * 7 % 40]
                            got[name].append(one_run(db, before if name == "before" else None,
                                                     delay, project, shift, base))
                    for name in ("before", "now"):
                        first = [r[0] for r in got[name]]
                        label = args.before if name == "before" else "now"
                        print(f"| {size:,} | {delay:g} s | {'project' if project else 'none'} "
                              f"| {label} | {statistics.median(first):.0f} ms "
                              f"({min(first):.0f}-{max(first):.0f}) "
                              f"| {statistics.median(r[1] for r in got[name]):.1f} ms "
                              f"| {statistics.median(r[2] for r in got[name]):.0f} MB |",
                              flush=True)
        print(f"\nload average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    finally:
        shutil.rmtree(base, ignore_errors=True)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", required=True, help="the revision to compare with")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--delays", default="3,8",
                        help="seconds from the worker's start to its first search")
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--db", type=Path, help="this database instead of the cached ones "
                        "(its rows shown as 0 observations; the smoke test's)")
    parser.add_argument("--project", default=PROJECT, help="the project filter's project")
    return parser.parse_args(argv)


if __name__ == "__main__":
    main(parse_args())
