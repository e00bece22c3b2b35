"""Summary latency after Stop (issue 13): how long after a session's Stop its summary is
stored, with the rules backend and with the AI backend over the fake CLI.

    python bench/bench_summary.py [--sessions 20] [--write]

Setup: a REAL worker per backend (fresh data directory, free port, EMBEDDER=none). For
the AI, OBSERVER=claude with its CLI swapped for ``tests/observer/fake_claude.py``
(through ``tests/observer/memlite_fake_cli_worker.py``), which answers a summary request
at once with a valid ``<summary>``. Each session, one after another, posts what its hooks
post: SessionStart, a prompt, two PostToolUse events, then Stop (``POST /api/summarize``).
The clock runs from the Stop POST's answer (the Stop is committed) until its summary row
is visible to a read-only connection polling every 2 ms.

Floor, same run and same worker: the same poll's latency to see a row the worker has
just committed (a PostToolUse, from its POST's answer to the row seen), and the POST's
own round trip; for the AI also the fake CLI's round trip for the same summary request
over bare pipes (no SDK, no memlite).
"""

from __future__ import annotations

import argparse
import datetime
import http.client
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import apsw

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from benchmarks_md import write_section  # noqa: E402

from memlite.lifecycle import pid_alive  # noqa: E402
from memlite.observer.prompts import render_summary_request  # noqa: E402
from memlite.spawn import start_worker, worker_env  # noqa: E402
from memlite.storage.db import db_path  # noqa: E402

SECTION = "## Summaries (issue 13)"
SHIM = ROOT / "tests" / "observer" / "memlite_fake_cli_worker.py"
FAKE = ROOT / "tests" / "observer" / "fake_claude.py"
POLL = 0.002
CWD = "/tmp/bench-summary-project"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Worker:
    def __init__(self, data_dir: Path, *, ai: bool, delay: float = 0.0) -> None:
        env = {**worker_env(), "MEMLITE_WORKER_PORT": str(free_port()),
               "MEMLITE_DATA_DIR": str(data_dir), "MEMLITE_EMBEDDER": "none",
               "MEMLITE_OBSERVER": "claude" if ai else "rules",
               "MEMLITE_OBSERVER_DAILY_TOKENS": "1000000000"}
        if ai:
            env.update(MEMLITE_TEST_FAKE_CLI=str(FAKE), FAKE_CLAUDE_MODE="ok",
                       FAKE_CLAUDE_SUMMARY_DELAY=str(delay))
            argv = [sys.executable, str(SHIM), "worker", "run", "--data-dir",
                    os.path.realpath(data_dir)]
        else:
            argv = [sys.executable, "-m", "memlite", "worker", "run", "--data-dir",
                    os.path.realpath(data_dir)]
        info = start_worker(data_dir, argv=argv, env=env).info
        assert info is not None
        self.pid, self.data_dir = info.pid, data_dir
        self.token = (data_dir / "token").read_text().strip()
        self.conn = http.client.HTTPConnection("127.0.0.1", info.port, timeout=30)
        self.db = apsw.Connection(str(db_path(data_dir)), flags=apsw.SQLITE_OPEN_READONLY)
        self.db.setbusytimeout(5000)

    def post(self, path: str, body: dict) -> float:
        """POST; returns its round trip in seconds."""
        started = time.perf_counter()
        self.conn.request("POST", path, json.dumps(body), {
            "Authorization": f"Bearer {self.token}", "Content-Type": "application/json"})
        response = self.conn.getresponse()
        data = response.read()
        if response.status != 200:
            raise RuntimeError(f"{path}: {response.status} {data[:200]!r}")
        return time.perf_counter() - started

    def seen(self, sql: str, params: tuple) -> float:
        """Seconds until ``sql`` returns a row (polled every POLL s)."""
        started = time.perf_counter()
        while not self.db.execute(sql, params).fetchall():
            if time.perf_counter() - started > 60:
                raise TimeoutError(sql)
            time.sleep(POLL)
        return time.perf_counter() - started

    def close(self) -> None:
        self.conn.close()
        self.db.close()
        os.kill(self.pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        while pid_alive(self.pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def tool(session: str, n: int) -> dict:
    return {"session_id": session, "hook_event_name": "PostToolUse", "cwd": CWD,
            "tool_name": "Bash", "tool_use_id": f"toolu_{session}_{n}",
            "tool_input": {"command": f"sed -i s/a{n}/b{n}/ m{n}.py"},
            "tool_response": {"stdout": "", "stderr": "", "interrupted": False}}


def run(sessions: int, *, ai: bool, delay: float = 0.0,
        quick_exit: bool = False) -> dict[str, list[float]]:
    """``quick_exit``: SessionEnd right after Stop, as ``claude -p`` sends them."""
    out: dict[str, list[float]] = {"summary": [], "row_seen": [], "post": []}
    with tempfile.TemporaryDirectory(prefix="memlite-bench-summary-") as tmp:
        worker = Worker(Path(tmp) / "memlite-data", ai=ai, delay=delay)
        try:
            for s in range(-1, sessions):  # session -1 warms up (the CLI's first start)
                sid = f"bench-summary-{s}"
                worker.post("/api/sessions", {"session_id": sid, "cwd": CWD,
                                              "hook_event_name": "SessionStart",
                                              "source": "startup"})
                worker.post("/api/sessions", {"session_id": sid, "cwd": CWD,
                                              "hook_event_name": "UserPromptSubmit",
                                              "prompt": f"rename a to b, round {s}"})
                for n in range(2):
                    took = worker.post("/api/events", tool(sid, n))
                    seen = worker.seen("SELECT 1 FROM events WHERE tool_use_id = ?",
                                       (f"toolu_{sid}_{n}",))
                    if s >= 0:
                        out["post"].append(took)
                        out["row_seen"].append(seen)
                # Observed first, so the summary is timed alone.
                worker.seen("SELECT 1 FROM events WHERE session_id = ? AND status = 'done' "
                            "GROUP BY session_id HAVING count(*) = 2", (sid,))
                end = {"session_id": sid, "cwd": CWD, "hook_event_name": "SessionEnd",
                       "reason": "prompt_input_exit"}
                worker.post("/api/summarize", {
                    "session_id": sid, "cwd": CWD, "hook_event_name": "Stop",
                    "last_assistant_message": f"Renamed a to b ({s})."})
                started = time.perf_counter()
                if quick_exit:
                    worker.post("/api/sessions/complete", end)
                worker.seen("SELECT 1 FROM summaries WHERE session_id = ?", (sid,))
                if s >= 0:
                    out["summary"].append(time.perf_counter() - started)
                if not quick_exit:  # its actor stops and gives its AI conversation back
                    worker.post("/api/sessions/complete", end)
                worker.seen("SELECT 1 FROM events WHERE session_id = ? AND event_name = "
                            "'Stop' AND status = 'done'", (sid,))
        except Exception:
            log = Path(tmp) / "memlite-data" / "worker.log"
            print(log.read_text()[-3000:] if log.exists() else "no log", file=sys.stderr)
            raise
        finally:
            worker.close()
    return out


def bare_summary_round_trips(count: int) -> list[float]:
    """The fake CLI answering the same summary request over its pipes, no SDK/memlite."""
    message = render_summary_request(prompts=["rename a to b"],
                                     last_message="Renamed a to b.")
    proc = subprocess.Popen([sys.executable, str(FAKE), "--output-format", "stream-json",
                             "--input-format", "stream-json", "--verbose"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            bufsize=1, env={k: v for k, v in os.environ.items()
                                            if not k.startswith("FAKE_CLAUDE_")})
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(json.dumps({"type": "control_request", "request_id": "init",
                                     "request": {"subtype": "initialize"}}) + "\n")
        proc.stdout.readline()
        times = []
        for _ in range(count):
            started = time.perf_counter()
            proc.stdin.write(json.dumps({"type": "user", "session_id": "",
                                         "message": {"role": "user", "content": message},
                                         "parent_tool_use_id": None}) + "\n")
            while json.loads(proc.stdout.readline()).get("type") != "result":
                pass
            times.append(time.perf_counter() - started)
        return times
    finally:
        proc.stdin.close()
        proc.wait(timeout=10)


def ms(values: list[float], q: float = 0.5) -> str:
    ordered = sorted(values)
    return f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000:.1f} ms"


def section(args: argparse.Namespace) -> str:
    rules = run(args.sessions, ai=False)
    ai = run(args.sessions, ai=True)
    slow = run(args.quick_exits, ai=True, delay=2.0, quick_exit=True)
    bare = bare_summary_round_trips(args.sessions)
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    machine = (f"{platform.system()} {platform.release()} {platform.machine()}, "
               f"{os.cpu_count()} CPUs")

    def row(what: str, values: list[float]) -> str:
        return f"| {what} | {ms(values)} | {ms(values, 0.95)} | {ms(values, 1.0)} |"

    return "\n".join([
        SECTION,
        "",
        f"Measured {now} by `python bench/bench_summary.py --sessions {args.sessions}` on "
        f"{machine}, Python {platform.python_version()}.",
        "",
        f"- A real worker per backend (fresh data directory, EMBEDDER=none); {args.sessions} "
        "sessions one after another (plus one warm-up, not counted), each: SessionStart, a "
        "prompt, two PostToolUse (observed before the Stop is sent), Stop, then "
        "SessionEnd after the summary (the next session gets the AI conversation). The clock "
        "runs from the Stop POST's answer (the Stop is committed, `pending`) until the "
        "summary row is visible (a read-only connection polling every 2 ms).",
        "- AI: OBSERVER=claude over the fake stream-json CLI `tests/observer/fake_claude.py`, "
        "which answers the summary request at once: everything but the model is real (SDK "
        "client, session actor, the summary + Stop `done` transaction).",
        "- Floor, same run: the poll's own latency to see a row just committed by the same "
        "worker (a PostToolUse, from its POST's answer), the POST round trip, and for the AI "
        "the fake CLI's round trip for the same summary request over bare pipes.",
        "",
        "| what | p50 | p95 | max |",
        "|---|---:|---:|---:|",
        row("**Stop → summary stored, rules backend**", rules["summary"]),
        row("**Stop → summary stored, AI backend (fake CLI)**", ai["summary"]),
        row(f"quick exit: Stop + SessionEnd back to back, AI summary taking 2 s "
            f"({args.quick_exits} sessions; floor 2,000 ms)", slow["summary"]),
        row("floor: committed row → seen by the poll (rules worker)", rules["row_seen"]),
        row("floor: committed row → seen by the poll (AI worker)", ai["row_seen"]),
        row("floor: POST /api/events round trip (rules worker)", rules["post"]),
        row("floor: fake CLI summary round trip, bare pipes", bare),
        "",
        "Before issue 13 a summary still running when the session's actor was cancelled "
        "(5 s after SessionEnd, 2 s into a worker shutdown) was lost for good: the Stop was "
        "marked `skipped` before its summary existed. The summary waits for nothing but "
        "the session actor: the doorbell, two reads (the "
        "session's events and prompts), the backend's answer, one transaction (summary + "
        "Stop `done`). A real model's summary turn takes seconds; SessionEnd and worker "
        "shutdown wait for it at most 20 s and 1.5 s (then the rules summary).",
        "",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--quick-exits", type=int, default=3)
    parser.add_argument("--write", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args()
    text = section(args)
    print(text)
    if args.write:
        write_section(SECTION, text)


if __name__ == "__main__":
    main()
