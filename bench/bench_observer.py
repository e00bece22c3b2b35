"""Observer benchmark (issue 5): events to stored AI observations per second, with the
fake model; tokens of observer input per event before and after the cut; and the time our
code adds per event on top of the CLI's round trip.

    python bench/bench_observer.py [--events 300] [--write]

Setup: a REAL worker (``start_worker``, a fresh data directory, a free port) with
OBSERVER=claude, its CLI swapped for the fake stream-json CLI
``tests/observer/fake_claude_echo.py`` (through ``tests/observer/memlite_fake_cli_worker.py``),
which answers every turn at once with a valid ``<observation>``. Events are PostToolUse
hook payloads cycled from the recorded Claude Code v2.1.332 fixtures plus the large
synthetic shapes of ``bench_observer_cut.py`` (a 3,000-line Read, an 8,000-line pytest
run, ...), each with a new ``tool_use_id``, posted to ``POST /api/events`` while the fake's
gate (FAKE_CLAUDE_GATE) is shut; the clock runs from opening the gate until no event is
pending or processing.

Round trip floor, same run: the same fake CLI driven directly over its pipes (no SDK, no
memlite: write one stream-json user message, read until its ``result``), with the same
rendered messages. Overhead per event = worker time per event - that floor.
Tokens: characters / 4 (``prompts.estimate_tokens``) of the stored payload ("before") and
of ``prompts.render_event`` with the default budget, the message the observer is sent
("after").
"""

from __future__ import annotations

import argparse
import datetime
import http.client
import itertools
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import apsw

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from bench_observer_cut import FIXTURES, synthetic  # noqa: E402
from benchmarks_md import write_section  # noqa: E402

from memlite.hooks.limits import fit  # noqa: E402
from memlite.lifecycle import pid_alive  # noqa: E402
from memlite.observer.prompts import DEFAULT_BUDGET, estimate_tokens, render_event  # noqa: E402
from memlite.spawn import start_worker, worker_env  # noqa: E402
from memlite.storage.db import db_path  # noqa: E402
from memlite.storage.observing import session_events  # noqa: E402

BENCHMARKS = ROOT / "BENCHMARKS.md"
SECTION = "## Observer (issue 5)"
SHIM = ROOT / "tests" / "observer" / "memlite_fake_cli_worker.py"
FAKE = ROOT / "tests" / "observer" / "fake_claude_echo.py"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def shapes() -> list[tuple[str, dict]]:
    found = [(p.stem, json.loads(p.read_text()))
             for p in sorted(FIXTURES.glob("PostToolUse*.json"))]
    return found + list(synthetic().items())


def payloads(n: int, session: str) -> list[dict]:
    out = []
    for i, (_, shape) in zip(range(n), itertools.cycle(shapes()), strict=False):
        event = {**shape, "session_id": session, "hook_event_name": "PostToolUse",
                 "tool_use_id": f"toolu_bench_{i:06d}", "cwd": "/tmp/bench-project"}
        event.setdefault("tool_name", "Bash")
        out.append(fit(event)[0])  # what the hook posts: each field at most 16 KiB
    return out


def post(conn: http.client.HTTPConnection, token: str, path: str, body: dict) -> None:
    conn.request("POST", path, json.dumps(body), {
        "Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    response = conn.getresponse()
    data = response.read()
    if response.status != 200:
        raise RuntimeError(f"{path}: {response.status} {data[:200]!r}")


def rows(data_dir: Path, sql: str) -> list[tuple]:
    conn = apsw.Connection(str(db_path(data_dir)), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        conn.setbusytimeout(5000)
        return [tuple(r) for r in conn.execute(sql)]
    finally:
        conn.close()


def worker_run(events: int, data_dir: Path) -> dict:
    """Events through a real worker; returns timings, tokens and the rendered messages."""
    log = data_dir.parent / "fake.jsonl"
    gate = data_dir.parent / "gate"
    env = {**worker_env(), "MEMLITE_WORKER_PORT": str(free_port()), "MEMLITE_OBSERVER": "claude",
           "MEMLITE_DATA_DIR": str(data_dir), "MEMLITE_TEST_FAKE_CLI": str(FAKE),
           "FAKE_CLAUDE_LOG": str(log), "MEMLITE_OBSERVER_DAILY_TOKENS": "1000000000",
           "FAKE_CLAUDE_GATE": str(gate)}
    gate.touch()
    argv = [sys.executable, str(SHIM), "worker", "run", "--data-dir", os.path.realpath(data_dir)]
    info = start_worker(data_dir, argv=argv, env=env).info
    assert info is not None
    try:
        token = (data_dir / "token").read_text().strip()
        conn = http.client.HTTPConnection("127.0.0.1", info.port, timeout=30)
        post(conn, token, "/api/sessions", {"session_id": "bench", "source": "startup",
                                            "hook_event_name": "SessionStart",
                                            "cwd": "/tmp/bench-project"})
        # Warm-up: the conversation's CLI starts on the first event; not counted.
        post(conn, token, "/api/events", {**payloads(1, "bench")[0], "tool_use_id": "warm"})
        while rows(data_dir, "SELECT count(*) FROM events WHERE status IN "
                             "('pending','processing')")[0][0]:
            time.sleep(0.01)
        # Fill the queue with the gate shut (the first event waits in its turn), then
        # open it: the clock measures observing only.
        gate.unlink()
        bodies = payloads(events, "bench")
        posting = time.perf_counter()
        for body in bodies:
            post(conn, token, "/api/events", body)
        posted = time.perf_counter() - posting
        cpu_before = _cpu_seconds(info.pid)
        started = time.perf_counter()
        gate.touch()
        while rows(data_dir, "SELECT count(*) FROM events WHERE status IN "
                             "('pending','processing')")[0][0]:
            time.sleep(0.005)
        elapsed = time.perf_counter() - started
        conn.close()
        cpu = _cpu_seconds(info.pid) - cpu_before
    finally:
        os.kill(info.pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        while pid_alive(info.pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        try:
            os.waitpid(info.pid, 0)
        except ChildProcessError:
            pass
    ai = rows(data_dir, "SELECT count(DISTINCT s.observation_id) FROM observation_sources s "
                        "JOIN events e ON e.id = s.event_id "
                        "WHERE s.kind = 'ai' AND e.tool_use_id != 'warm'")[0][0]
    done_ms = [r[0] for r in rows(data_dir, "SELECT updated_at_epoch FROM events WHERE "
                                            "event_name = 'PostToolUse' AND tool_use_id "
                                            "!= 'warm' ORDER BY updated_at_epoch")]
    db = apsw.Connection(str(db_path(data_dir)), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        stored = [e for e in session_events(db, "bench", limit=events + 10)
                  if e.event_name == "PostToolUse" and e.tool_use_id != "warm"]
    finally:
        db.close()
    before = [estimate_tokens(e.payload) for e in stored]
    messages = [render_event(e, budget=DEFAULT_BUDGET) for e in stored]
    after = [estimate_tokens(m) for m in messages]
    turns = [json.loads(line)["data"]["seconds"] for line in log.read_text().splitlines()
             if json.loads(line)["kind"] == "turn"]
    return {"events": len(stored), "ai": ai, "elapsed": elapsed, "posted": posted,
            "before": before, "after": after, "done_ms": done_ms, "messages": messages,
            "fake_turn": turns, "worker_cpu": cpu}


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def raw_round_trips(messages: list[str]) -> list[float]:
    """The fake CLI over its pipes with no SDK and no memlite: seconds per turn."""
    proc = subprocess.Popen([str(FAKE), "--output-format", "stream-json", "--input-format",
                             "stream-json", "--verbose"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, bufsize=1,
                            env={k: v for k, v in os.environ.items()
                                 if not k.startswith("FAKE_CLAUDE_")})
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps({"type": "control_request", "request_id": "init",
                                     "request": {"subtype": "initialize"}}) + "\n")
        proc.stdout.readline()
        times = []
        for text in messages:
            started = time.perf_counter()
            proc.stdin.write(json.dumps({"type": "user", "session_id": "",
                                         "message": {"role": "user", "content": text},
                                         "parent_tool_use_id": None}) + "\n")
            while json.loads(proc.stdout.readline()).get("type") != "result":
                pass
            times.append(time.perf_counter() - started)
        return times
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)


def section(args: argparse.Namespace) -> str:
    with tempfile.TemporaryDirectory(prefix="memlite-bench-observer-") as tmp:
        run = worker_run(args.events, Path(tmp) / "memlite-data")
    floor = raw_round_trips(run["messages"])
    n = run["events"]
    per_event = run["elapsed"] / n
    floor_mean = statistics.fmean(floor)
    fake_own = statistics.fmean(run["fake_turn"])
    before, after = run["before"], run["after"]
    done_ms = run["done_ms"]
    steady = (len(done_ms) - 1) / max((done_ms[-1] - done_ms[0]) / 1000, 1e-9)
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    machine = (f"{platform.system()} {platform.release()} {platform.machine()}, "
               f"{os.cpu_count()} CPUs")

    def us(s: float) -> str:
        return f"{s * 1e6:,.0f} µs" if s < 0.01 else f"{s * 1000:.1f} ms"

    return "\n".join([
        SECTION,
        "",
        f"Measured {now} by `python bench/bench_observer.py --events {args.events}` on "
        f"{machine}, Python {platform.python_version()}.",
        "",
        "- A real worker (fresh data directory, free port), OBSERVER=claude, its CLI swapped "
        "for the fake stream-json CLI `tests/observer/fake_claude_echo.py`, which answers "
        "each turn at once with a valid `<observation>`: everything but the model is real "
        "(SDK client, launcher, registry, session actor, classify/parse, one storage "
        "transaction per observation).",
        f"- {n} PostToolUse events of one session, cycled from the 4 recorded PostToolUse "
        "fixtures and the 6 large synthetic shapes of `bench_observer_cut.py` (so 60% are "
        "large: a worst-case mix for tokens), each cut by the hook's `limits.fit` as a hook "
        "would post it, posted to "
        "`POST /api/events` one after another with the fake's gate shut (the first "
        "event waits inside its turn); the clock runs from opening the gate until no event "
        "is pending or processing, so it times observing only. One warm-up event (the "
        "CLI's start) is not counted.",
        "- Floor, same run: the same fake CLI driven straight over its pipes (no SDK, no "
        "memlite) with the same rendered messages.",
        "",
        "| what | figure |",
        "|---|---:|",
        f"| events → stored AI observations | **{n / run['elapsed']:,.0f} events/s** "
        f"({run['ai']} observations for {n} events in {run['elapsed']:.2f} s; posting "
        f"them took {run['posted']:.2f} s before) |",
        f"| steady state (first to last event marked done) | {steady:,.0f} events/s |",
        f"| time per event, worker | {us(per_event)} |",
        f"| fake CLI's own turn (inside the fake, read to answer) | {us(fake_own)} |",
        f"| CLI round trip, bare pipes (floor) | {us(floor_mean)} "
        f"(p50 {us(statistics.median(floor))}) |",
        f"| **overhead of our code per event** (worker − floor) | "
        f"**{us(per_event - floor_mean)}** |",
        f"| worker CPU per event | {us(run['worker_cpu'] / n)} |",
        f"| input tokens per event, stored payload (before the cut) | "
        f"{statistics.fmean(before):,.0f} mean, {max(before):,} max |",
        f"| input tokens per event, `render_event` budget {DEFAULT_BUDGET:,} (after) | "
        f"{statistics.fmean(after):,.0f} mean, {max(after):,} max "
        f"({sum(after) / sum(before):.2f} of before) |",
        "",
        "The overhead is what one event costs between the hook's POST and its stored "
        "observation besides the model: the SDK's stream-json client, two storage commits "
        "(`processing`, then observation + `done` in one transaction), the reads of the "
        "session actor and the event rendering. Tokens are characters / 4; a real model's "
        "turn (seconds) dwarfs all of it. Worker CPU per event close to the time per "
        "event means the worker's one core is the bound here (the fake CLI runs on the "
        "other).",
        "",
    ])




def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=300)
    parser.add_argument("--write", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args()
    text = section(args)
    print(text)
    if args.write:
        write_section(SECTION, text)


if __name__ == "__main__":
    main()
