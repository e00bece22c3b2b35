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
  embedder hands freed memory back after a backlog: ``memlite/heap.py``), the time and
  the worker's CPU seconds from its readiness until then (the embedding throughput),
  and where that RSS is (``/proc/<pid>/smaps`` grouped: the onnxruntime library, other
  mapped files, the heap and anonymous memory).
* ``--before REV``: the same worker measurements for memlite at git revision ``REV``
  (exported to a temporary directory and run from there, ``PYTHONPATH``), interleaved
  run by run with the current tree's, so both see the same machine.
* Stop: ``SIGTERM`` to process gone.
* Floor in the same run: ``python -I -S -c pass`` with the same interpreter, and the
  import of the worker's modules alone.

Usage::

    python bench/bench_worker.py [--runs 5] [--before REV] [--write]
"""

from __future__ import annotations

import argparse
import contextlib
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
from collections.abc import Iterator
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


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def smaps_groups(pid: int) -> dict[str, float]:
    """Resident MB of the process by kind of mapping."""
    groups = {"onnxruntime library": 0, "other mapped files": 0, "heap and anonymous": 0}
    kind = "heap and anonymous"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        parts = line.split()
        if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
            name = parts[5] if len(parts) > 5 else ""
            kind = ("onnxruntime library" if "/onnxruntime/" in name else
                    "other mapped files" if name.startswith("/") else "heap and anonymous")
        elif parts[0] == "Rss:":
            groups[kind] += int(parts[1]) / 1024
    return groups


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


_SEED = """
import random, sys
from memlite import storage
rng = random.Random(3)
words = [f"{a}{b}" for a in ("parse", "cache", "flush", "lock", "token", "route")
         for b in ("er", "ing", "ed", "s", "", "able", "ment")]
conn = storage.connect(sys.argv[1])
with conn:
    for i in range(int(sys.argv[2])):
        storage.insert_observation(conn, storage.NewObservation(
            session_id=f"s{i // 20}", project="/repo/bench", type="discovery",
            title=" ".join(rng.choices(words, k=8)),
            narrative=" ".join(rng.choices(words, k=180))))
conn.close()
"""


def backlog_run(count: int = BACKLOG) -> tuple[int, float, float, dict[str, float]]:
    """RSS (KiB) of a worker that embedded ``count`` long observations at its start, the
    seconds and the worker's CPU seconds from readiness until they were embedded, and
    its resident memory by kind (MB)."""
    with tempfile.TemporaryDirectory(prefix="memlite-bench-worker-") as tmp:
        # Written by the measured revision's own code (``code_of``'s PYTHONPATH): a
        # database of a newer schema is refused by an older worker.
        subprocess.run([sys.executable, "-c", _SEED, tmp, str(count)], env=dict(os.environ),
                       check=True)
        port = free_port()
        env = {**os.environ, "MEMLITE_DATA_DIR": tmp, "MEMLITE_WORKER_PORT": str(port),
               "MEMLITE_EMBEDDER": "auto"}
        timed([sys.executable, "-m", "memlite", "worker", "start"], env)
        pid = json.loads((Path(tmp) / "worker.pid").read_text())["pid"]
        try:
            cpu, started = cpu_seconds(pid), time.perf_counter()
            embedded(port, tmp, count)
            took, cpu = time.perf_counter() - started, cpu_seconds(pid) - cpu
            time.sleep(1.0)
            rss, groups = rss_kib(pid), smaps_groups(pid)
        finally:
            os.kill(pid, signal.SIGTERM)
            wait_gone(pid, 10.0)
        return rss, took, cpu, groups


def median_ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1000:.0f} ms"


SESSION_NOTE = (
    'Serving a session with the AI observer, the configuration a Claude Code user gets '
    '(`OBSERVER=auto`), the bar is **now met** too. Round 7 found the AI observer at 172.7 '
    'MB against 134.5 MB with the rules observer: the difference was the import of '
    '`claude_agent_sdk` (~37 MB resident and ~1.9 s in a bare interpreter: its `__init__` '
    "imports `mcp.types`, and mcp 2.x's package import pulls in its client and server, "
    'pydantic, starlette, uvicorn, cryptography, opentelemetry and httpx2). Round 8 replaced '
    "the SDK's Python client by memlite's own client of the CLI's stream-json protocol "
    '(`memlite/observer/streamjson.py`; the SDK stays a dependency for its bundled CLI, '
    'found without importing it). In two runs of `bench/bench_worker_session.py --runs 2 '
    '--events 200 --before b4a6995` (load 3.4 -> 1.7 and 3.0 -> 1.4; "Worker serving a '
    'session (issue 14)" holds the second), after one session of 200 tool events, 30 '
    'searches and 10 s idle, medians of this checkout against b4a6995 in the same run: with '
    'the AI observer and the real bundled CLI (offline, not logged in: a floor) **138.3 / '
    "138.4 MB against 178.6 / 177.0 MB**; with the AI observer and the test suite's fake CLI "
    'answering all 201 turns (as a logged-in CLI would) **139.2 / 137.9 MB against 178.2 / '
    '176.6 MB**; with the rules observer 139.4 / 138.3 MB against 139.2 / 137.9 MB (the '
    'floor: the same worker without any conversation). The highest reading of any '
    'AI-observer run of this checkout: 141.4 MB. The AI observer now costs what the rules '
    "one does, within 1 MB; the ~10 MB of margin under the bar is the session's data and the "
    'searches on top of the model (the "model loaded" row read 129-131 MB in these runs, 125 '
    "MB in the run above: the machine's state moves it by a few MB). The worker's first "
    "observer turn against the fake CLI (the conversation module's import, the CLI's start "
    "through the launcher, the handshake, one turn; from the first event's POST): **0.19 / "
    "0.20 s against 0.89 / 1.00 s** (the SDK's import, warm in the page cache). Round 7's "
    'new-user trial saw 151-156 MB in a 2,000-event session with the SDK '
    '(`docs/user-trials.md`), consistent with the ~39 MB removed here; not re-run. A longer '
    'session, 2,000 tool events (`--events 2000 --settings rules,fake`, this checkout only; '
    'two runs at load 0.1 -> 1.1 and one at 2.3): after the events 141.5 MB with the rules '
    'observer, 142.1 MB with the AI observer (fake CLI); **after the 30 searches 149.4 and '
    '149.5 MB, the highest reading 150.2 MB (AI) and 151.6 MB in the single earlier run (AI; '
    'rules 148.2)**, then 139.2 and 140.8 MB after 10 s idle. That transient is the same '
    "with either observer and gone 10 s later, as the embedding backlog's buffers are (the "
    "session's observations are still being embedded while the searches run; not profiled "
    'further), so at 2,000 events the worker touches the bar whatever the observer: the bar '
    'is met with ~10 MB of margin for the 200-event session, not for a 2,000-event one at '
    'its peak.'
)
"""Written by hand from ``bench_worker_session.py`` runs (round 8): kept in the section."""

MEMORY_NOTE = (
    "Where a worker's memory with MiniLM goes (measured by hand on 2026-12-02, 2 CPUs, "
    "Linux, `/proc/<pid>/smaps` and one import at a time): the worker's own modules and "
    'their dependencies ~68 MB (Quart with Flask, Werkzeug, Jinja2 and click ~18 MB, Trio'
    ' ~14 MB, numpy ~12 MB, memlite itself ~7 MB; nothing imported that the worker does '
    'not use: the MCP server is imported lazily, the agent SDK never: the AI observer '
    "speaks the CLI's stream-json protocol itself, see \"Worker serving a session\"); "
    "onnxruntime's library ~26 MB mapped plus ~7 MB at its import; the int8 weights 22.5 "
    "MB (the word table 11.2 MB) and the session around them ~6 MB; memlite's tokenizer "
    'and its vocabulary ~6 MB. Activations: one text at a time (the int8 copy quantizes '
    'activations per run), ~45 MB at the peak of a 256-token text, handed back after each'
    ' backlog. SQLite page caches, numpy buffers and thread stacks are under 1 MB each '
    'here. Cut in issue 14: the `tokenizers` package (~14 MB: its native library and '
    "tokenizer, against ~6 MB) for memlite's own WordPiece, and glibc's per-thread arenas"
    " (a trim cannot shrink a thread arena's top: ~11 MB kept after a backlog) for the "
    'main arena only (`memlite/heap.py`). Tried and dropped: mapping the word table from '
    "the model's file (ONNX external data) saved 11 MB at load, but the kernel's fault-"
    'around brought most of it back after a few texts; a fixed 128 kB mmap threshold kept'
    ' the peak at ~135 MB but cut the throughput by a third to a half (page faults on '
    'every activation buffer); onnxruntime session options (no pre-packing, lower graph '
    'optimisation) changed nothing or changed the vectors.')


@contextlib.contextmanager
def code_of(tree: Path | None) -> Iterator[None]:
    """Run the workers started inside from ``tree`` (a memlite export), or this checkout.

    Also from ``tree`` as the working directory: ``python -m`` puts the working directory
    first on ``sys.path``, before ``PYTHONPATH``, so a checkout there would win."""
    before, cwd = os.environ.get("PYTHONPATH"), os.getcwd()
    if tree is not None:
        os.environ["PYTHONPATH"] = str(tree)
        os.chdir(tree)
    try:
        yield
    finally:
        os.chdir(cwd)
        if tree is not None:
            if before is None:
                os.environ.pop("PYTHONPATH", None)
            else:
                os.environ["PYTHONPATH"] = before


def export(rev: str, into: Path) -> Path:
    """memlite at ``rev`` (``git archive``) in ``into``."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "memlite"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    # Bytecode now, so that its first worker start does not pay for compiling.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(into / "memlite")],
                   check=True)
    return into


def measure(runs: int, tree: Path | None) -> dict[str, list]:
    """One round of every worker measurement (the caller interleaves rounds)."""
    with code_of(tree):
        env = dict(os.environ)
        imports = [timed([sys.executable, "-c", "import memlite.worker, memlite.tree"], env)
                   for _ in range(max(1, 5 // runs))]
        plain = one_run()
        with_model = one_run("auto")[1] / 1024
        rss, took, cpu, groups = backlog_run()
    return {"imports": imports, "start": [plain[0]], "rss": [plain[1] / 1024],
            "stop": [plain[2]], "with_model": [with_model], "backlog": [rss / 1024],
            "took": [took], "cpu": [cpu], "groups": [groups]}


def _cell(values: list[float], unit: str, scale: float = 1.0, digits: int = 1) -> str:
    v = [x * scale for x in values]
    if len(v) == 1:
        return f"{v[0]:.{digits}f} {unit}"
    return (f"{statistics.median(v):.{digits}f} {unit} "
            f"({min(v):.{digits}f} – {max(v):.{digits}f})")


def section(runs: int, before: str | None = None) -> str:
    floor = [timed([sys.executable, "-I", "-S", "-c", "pass"], dict(os.environ))
             for _ in range(10)]
    loads = [os.getloadavg()[0]]
    now_rounds: list[dict[str, list]] = []
    before_rounds: list[dict[str, list]] = []
    with tempfile.TemporaryDirectory(prefix="memlite-bench-before-") as tmp:
        tree = export(before, Path(tmp)) if before else None
        for n in range(runs):
            order = ["now", "before"] if n % 2 else ["before", "now"]
            for which in order:
                if which == "now":
                    now_rounds.append(measure(runs, None))
                elif tree is not None:
                    before_rounds.append(measure(runs, tree))
            loads.append(os.getloadavg()[0])

    def merged(rounds: list[dict[str, list]]) -> dict[str, list]:
        return {k: [v for r in rounds for v in r[k]] for k in rounds[0]}

    now = merged(now_rounds)
    old = merged(before_rounds) if before_rounds else None
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    machine = (f"{platform.system()} {platform.release()} {platform.machine()}, "
               f"{os.cpu_count()} CPUs")
    head = "| what | now | " + (f"before (`{before}`) | " if old else "") + "target |"
    rule = "|---|---:|" + ("---:|" if old else "") + "---:|"

    def row(what: str, key: str, unit: str, target: str, scale: float = 1.0,
            digits: int = 1) -> str:
        cells = [_cell(now[key], unit, scale, digits)]
        if old:
            cells.append(_cell(old[key], unit, scale, digits))
        return f"| {what} | " + " | ".join(cells) + f" | {target} |"

    groups = {k: statistics.median(g[k] for g in now["groups"]) for k in now["groups"][0]}
    where = ", ".join(f"{k} {v:.1f} MB" for k, v in groups.items())
    if old:
        old_groups = {k: statistics.median(g[k] for g in old["groups"])
                      for k in old["groups"][0]}
        where += " (before: " + ", ".join(f"{k} {v:.1f} MB" for k, v in old_groups.items()) + ")"
    per_text = [t / BACKLOG for t in now["took"]]
    return "\n".join([
        SECTION,
        "",
        f"Measured {stamp} by `python bench/bench_worker.py --runs {runs}"
        + (f" --before {before}" if before else "") + f"` on {machine}, "
        f"Python {platform.python_version()}; load average {min(loads):.2f} – "
        f"{max(loads):.2f} (a shared machine: compare the columns of this run). Each run on "
        "a fresh data directory (so migrations run) and a free port"
        + ("; the columns' runs interleaved, the revision's memlite exported and run "
           "from a temporary directory" if old else "") + ". Median (min – max) of "
        f"{runs} runs.",
        "",
        head,
        rule,
        f"| floor: `python -I -S -c pass` | {median_ms(floor)} | "
        + ("| " if old else "") + " |",
        row("floor: import the worker's modules", "imports", "ms", "", 1000, 0),
        row("`memlite worker start` until ready", "start", "ms", "≤ 1.5 s", 1000, 0),
        row("idle RSS 2 s after ready, no embedding model", "rss", "MB", "≤ 80 MB"),
        row("idle RSS, default model (MiniLM) loaded", "with_model", "MB", "≤ 150 MB"),
        row(f"RSS after embedding a backlog of {BACKLOG} long observations (MiniLM)",
            "backlog", "MB", "≤ 150 MB"),
        row(f"the backlog's {BACKLOG} embeddings, from ready (wall)", "took", "s", "", 1, 2),
        row("the same, the worker's CPU time", "cpu", "s", "", 1, 2),
        row("SIGTERM to exit", "stop", "ms", "≤ 5 s", 1000, 0),
        "",
        f"Embedding throughput now: {BACKLOG / statistics.median(now['took']):.1f} "
        f"observations/s ({statistics.median(per_text) * 1000:.0f} ms each, the model "
        "loading included). Where the RSS after the backlog is (`/proc/<pid>/smaps`, "
        f"median): {where}.",
        "",
        f"Issue 14's bar, worker RSS with the default model ≤ 150 MB: "
        f"{'met' if max(now['backlog'] + now['with_model']) <= 150 else 'NOT met'} in this "
        f"run (idle {statistics.median(now['with_model']):.1f} MB, after the backlog "
        f"{statistics.median(now['backlog']):.1f} MB, the highest of every run "
        f"{max(now['backlog'] + now['with_model']):.1f} MB), a scenario that never starts "
        "the AI observer; serving a session, see the next paragraph.",
        "",
        SESSION_NOTE,
        "",
        MEMORY_NOTE,
        "",
        "Most of the start is importing Quart/Hypercorn/APSW; the actor tree itself starts in "
        "milliseconds. Readiness means the database is open and migrated and the spool drained; "
        "the embedding model loads afterwards on a thread, so it does not delay readiness.",
        "",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--before", metavar="REV",
                        help="also measure memlite at this git revision, interleaved")
    parser.add_argument("--write", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args()
    text = section(args.runs, args.before)
    print(text)
    if args.write:
        write_section(SECTION, text)


if __name__ == "__main__":
    main()
