"""Worker benchmark: cold start to readiness, idle memory, and stop time.

Figures, not pass/fail. Each run uses a fresh temporary data directory and a free port:

* ``memlite worker start`` wall time: from the command's exec until it returns, which it
  does only once the worker answers ``GET /api/readiness`` (database open and migrated,
  spool drained). Target: <= 1.5 s.
* Idle RSS: the worker's ``VmRSS`` after readiness, with no embedding model
  (``EMBEDDER=none``, 2 s after ready; target <= 80 MB) and with the default one
  (``EMBEDDER=auto``: MiniLM, once ``/api/embedder`` says it is loaded).
* RSS after a backlog: a data directory holding ``BACKLOG`` observations of ~180 words
  when the worker starts with the default model; RSS once every one has its vector (the
  embedder hands freed memory back after a backlog: ``memlite/heap.py``).
* Stop: ``SIGTERM`` to process gone.
* Floor in the same run: ``python -I -S -c pass`` with the same interpreter, and the
  import of the worker's modules alone.

Usage::

    python bench/bench_worker.py [--runs 5] [--write]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks_md import write_section  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "BENCHMARKS.md"
SECTION = "## Worker (issue 3)"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def timed(cmd: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def rss_kib(pid: int) -> int:
    text = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", text).group(1))


def alive(pid: int) -> bool:
    """True while the process runs; a zombie has exited (it only waits for its reaper)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except FileNotFoundError:
        return False
    return stat[stat.rindex(b")") + 2 :].split()[0] != b"Z"


def wait_gone(pid: int, timeout: float) -> float:
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        if not alive(pid):
            return time.perf_counter() - started
        time.sleep(0.002)
    os.kill(pid, signal.SIGKILL)
    raise RuntimeError(f"worker {pid} did not stop within {timeout} s")


def wait_embedder(port: int, data_dir: str, done, what: str, timeout: float) -> None:
    """Poll ``GET /api/embedder`` until ``done(status)`` holds."""
    import http.client

    token = (Path(data_dir) / "token").read_text().strip()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        try:
            conn.request("GET", "/api/embedder", headers={"Authorization": f"Bearer {token}"})
            status = json.loads(conn.getresponse().read())
        finally:
            conn.close()
        if done(status):
            return
        time.sleep(0.1)
    raise RuntimeError(f"{what} in time")


def model_loaded(port: int, data_dir: str, timeout: float = 30.0) -> None:
    wait_embedder(port, data_dir, lambda s: s.get("state") in ("ready", "indexing"),
                  "the embedding model did not load", timeout)


def one_run(embedder: str = "none") -> tuple[float, int, float]:
    with tempfile.TemporaryDirectory(prefix="memlite-bench-worker-") as tmp:
        port = free_port()
        env = {**os.environ, "MEMLITE_DATA_DIR": tmp, "MEMLITE_WORKER_PORT": str(port),
               "MEMLITE_EMBEDDER": embedder}
        start = timed([sys.executable, "-m", "memlite", "worker", "start"], env)
        pid = json.loads((Path(tmp) / "worker.pid").read_text())["pid"]
        try:
            time.sleep(2.0)
            if embedder != "none":
                model_loaded(port, tmp)
                time.sleep(1.0)
            rss = rss_kib(pid)
            os.kill(pid, signal.SIGTERM)
            stop = wait_gone(pid, 10.0)
        except BaseException:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            raise
        return start, rss, stop


BACKLOG = 200


def embedded(port: int, data_dir: str, count: int, timeout: float = 600.0) -> None:
    wait_embedder(port, data_dir,
                  lambda s: s.get("state") == "ready" and s.get("embedded", 0) >= count,
                  f"the worker did not embed {count} observations", timeout)


def backlog_run(count: int = BACKLOG) -> int:
    """RSS (KiB) of a worker that embedded ``count`` long observations at its start."""
    import random

    from memlite import storage

    rng = random.Random(3)
    words = [f"{a}{b}" for a in ("parse", "cache", "flush", "lock", "token", "route")
             for b in ("er", "ing", "ed", "s", "", "able", "ment")]
    with tempfile.TemporaryDirectory(prefix="memlite-bench-worker-") as tmp:
        conn = storage.connect(tmp)
        with conn:
            for i in range(count):
                storage.insert_observation(conn, storage.NewObservation(
                    session_id=f"s{i // 20}", project="/repo/bench", type="discovery",
                    title=" ".join(rng.choices(words, k=8)),
                    narrative=" ".join(rng.choices(words, k=180))))
        conn.close()
        port = free_port()
        env = {**os.environ, "MEMLITE_DATA_DIR": tmp, "MEMLITE_WORKER_PORT": str(port),
               "MEMLITE_EMBEDDER": "auto"}
        timed([sys.executable, "-m", "memlite", "worker", "start"], env)
        pid = json.loads((Path(tmp) / "worker.pid").read_text())["pid"]
        try:
            embedded(port, tmp, count)
            time.sleep(1.0)
            rss = rss_kib(pid)
        finally:
            os.kill(pid, signal.SIGTERM)
            wait_gone(pid, 10.0)
        return rss


def median_ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.0f} ms"


def section(runs: int) -> str:
    floor = [timed([sys.executable, "-I", "-S", "-c", "pass"], dict(os.environ))
             for _ in range(10)]
    imports = [timed([sys.executable, "-c", "import memlite.worker, memlite.tree"],
                     dict(os.environ)) for _ in range(5)]
    results = [one_run() for _ in range(runs)]
    with_model = [one_run("auto")[1] / 1024 for _ in range(max(1, runs // 2))]
    backlog = [backlog_run() / 1024 for _ in range(max(1, runs // 2))]
    starts = [r[0] for r in results]
    rss = [r[1] / 1024 for r in results]
    stops = [r[2] for r in results]
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    machine = (f"{platform.system()} {platform.release()} {platform.machine()}, "
               f"{os.cpu_count()} CPUs")
    return "\n".join([
        SECTION,
        "",
        f"Measured {now} by `python bench/bench_worker.py --runs {runs}` on {machine}, "
        f"Python {platform.python_version()}; each run on a fresh data directory "
        "(so migrations run) and a free port.",
        "",
        "| what | median | min – max | target |",
        "|---|---:|---:|---:|",
        f"| floor: `python -I -S -c pass` | {median_ms(floor)} | "
        f"{min(floor) * 1000:.0f} – {max(floor) * 1000:.0f} ms | |",
        f"| floor: import the worker's modules | {median_ms(imports)} | "
        f"{min(imports) * 1000:.0f} – {max(imports) * 1000:.0f} ms | |",
        f"| `memlite worker start` until ready | {median_ms(starts)} | "
        f"{min(starts) * 1000:.0f} – {max(starts) * 1000:.0f} ms | ≤ 1.5 s |",
        f"| idle RSS 2 s after ready, no embedding model | {statistics.median(rss):.1f} MB | "
        f"{min(rss):.1f} – {max(rss):.1f} MB | ≤ 80 MB |",
        f"| idle RSS, default model (MiniLM) loaded | {statistics.median(with_model):.1f} MB | "
        f"{min(with_model):.1f} – {max(with_model):.1f} MB | ≤ 150 MB |",
        f"| RSS after embedding a backlog of {BACKLOG} long observations (MiniLM) | "
        f"{statistics.median(backlog):.1f} MB | "
        f"{min(backlog):.1f} – {max(backlog):.1f} MB | ≤ 150 MB |",
        f"| SIGTERM to exit | {median_ms(stops)} | "
        f"{min(stops) * 1000:.0f} – {max(stops) * 1000:.0f} ms | ≤ 5 s |",
        "",
        "Most of the start is importing Quart/Hypercorn/APSW; the actor tree itself starts in "
        "milliseconds. Readiness means the database is open and migrated and the spool drained; "
        "the embedding model loads afterwards on a thread, so it does not delay readiness.",
        "",
    ])




def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--write", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args()
    text = section(args.runs)
    print(text)
    if args.write:
        write_section(SECTION, text)


if __name__ == "__main__":
    main()
