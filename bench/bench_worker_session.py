"""Worker RSS while it serves a session, with the rules observer and with the AI one.

Why: ``bench_worker.py`` measures the worker idle and after an embedding backlog, where
the AI observer never starts. A user's worker (``OBSERVER=auto`` with Claude Code
installed) runs the AI observer. Until round 8 it did so through ``claude_agent_sdk``,
whose import alone pulled in mcp, pydantic, starlette, uvicorn, cryptography and
opentelemetry (~37 MB resident); memlite now speaks the CLI's stream-json protocol
itself (``memlite/observer/streamjson.py``). This measures what a session costs.

Each run: a fresh data directory, a worker with the default embedding model (MiniLM),
one observer setting; once the model is loaded, one session through the HTTP API as the
hooks send it (SessionStart, a prompt, ``EVENTS`` PostToolUse Read events of the captured
fixture shape with distinct files, a Stop), 30 searches, then 10 s idle; the worker's
``VmRSS`` after each step. Settings:

* ``rules``: ``OBSERVER=rules``.
* ``claude``: ``OBSERVER=claude`` with the SDK's bundled CLI; offline and not logged in,
  it fails its first request and the observer pauses (the events stay pending, rules
  observations meanwhile): the conversation is set up, so the figure is a floor.
* ``fake``: ``OBSERVER=claude`` with ``CLAUDE_CODE_PATH`` pointing at the test suite's
  fake CLI (``tests/observer/fake_claude_echo.py``), which answers every turn with an
  observation, as a logged-in CLI would (a Python process of its own: not in the
  worker's RSS). Also timed: from the first event's POST to the fake's first answer
  (the worker's first observer turn: the conversation module's import, the CLI's start,
  the handshake and one turn); the other events are posted after it.

``--before REV`` runs the same settings for memlite at git revision ``REV`` (exported to
a temporary directory and run from there, as ``bench_worker.py`` does), interleaved run by
run with this checkout.

Usage::

    python bench/bench_worker_session.py [--runs 2] [--events 200] [--before REV]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

from bench_worker import code_of, export, free_port, model_loaded, rss_kib, wait_gone
from benchmarks_md import write_section

SECTION = "## Worker serving a session (issue 14)"
INTRO = ("What the worker holds while it serves one session, by observer setting "
         "(`bench/bench_worker_session.py`: its docstring says what each setting runs). "
         "Issue 14's bar is worker RSS with the default model ≤ 150 MB; a Claude Code "
         "user's default is the AI observer.")
STEPS = ("model loaded", "after the session's events", "after 30 searches", "10 s idle")
FIRST_TURN = "first observer turn (s, from the first event)"
SETTINGS = ("rules", "claude", "fake")
FAKE_CLI = Path(__file__).resolve().parent.parent / "tests" / "observer" / "fake_claude_echo.py"


def _call(port: int, token: str, method: str, path: str, body: object = None) -> object:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read() or b"null")


def _first_turn(log: Path, since: float, timeout: float = 60.0) -> float:
    """Seconds from ``since`` until the fake CLI logged its first answer."""
    while time.monotonic() - since < timeout:
        if log.exists() and '"kind": "turn"' in log.read_text():
            return time.monotonic() - since
        time.sleep(0.005)
    raise RuntimeError("the fake CLI answered no turn in time")


def one_run(setting: str, events: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="memlite-bench-session-") as tmp:
        port = free_port()
        fake_log = Path(tmp) / "fake-cli.jsonl"
        env = {**os.environ, "MEMLITE_DATA_DIR": tmp, "MEMLITE_WORKER_PORT": str(port),
               "MEMLITE_EMBEDDER": "auto",
               "MEMLITE_OBSERVER": "rules" if setting == "rules" else "claude"}
        if setting == "fake":
            env |= {"CLAUDE_CODE_PATH": str(FAKE_CLI), "FAKE_CLAUDE_LOG": str(fake_log)}
        subprocess.run([sys.executable, "-m", "memlite", "worker", "start"], env=env,
                       check=True, stdout=subprocess.DEVNULL)
        pid = json.loads((Path(tmp) / "worker.pid").read_text())["pid"]
        token = (Path(tmp) / "token").read_text().strip()
        project = str(Path(tmp) / "project")
        out: dict[str, float] = {}
        try:
            model_loaded(port, tmp, timeout=120)
            time.sleep(1.0)
            out[STEPS[0]] = rss_kib(pid) / 1024
            sid = "bench-session"
            _call(port, token, "POST", "/api/sessions", {
                "session_id": sid, "cwd": project, "hook_event_name": "SessionStart",
                "source": "startup"})
            _call(port, token, "POST", "/api/sessions", {
                "session_id": sid, "cwd": project, "hook_event_name": "UserPromptSubmit",
                "prompt": "fix the parser cache and tidy the module layout"})
            for n in range(events):
                posted = time.monotonic()
                _call(port, token, "POST", "/api/events", {
                    "session_id": sid, "cwd": project, "hook_event_name": "PostToolUse",
                    "tool_name": "Read", "tool_use_id": f"toolu_{n}",
                    "tool_input": {"file_path": f"{project}/src/module{n % 7}/file{n}.py"},
                    "tool_response": {"type": "text", "file": {
                        "filePath": f"{project}/src/module{n % 7}/file{n}.py",
                        "content": f"def parse_{n}(text):\n    return cache.get(text)\n"}}})
                if n == 0 and setting == "fake":
                    out[FIRST_TURN] = _first_turn(fake_log, posted)
            _call(port, token, "POST", "/api/summarize", {
                "session_id": sid, "cwd": project, "hook_event_name": "Stop",
                "last_assistant_message": "The parser cache is fixed."})
            time.sleep(5.0)
            out[STEPS[1]] = rss_kib(pid) / 1024
            for q in ("parser cache", "what did we decide about the module layout",
                      "file3.py") * 10:
                _call(port, token, "GET", "/api/search?" + urllib.parse.urlencode(
                    {"q": q, "project": project}))
            out[STEPS[2]] = rss_kib(pid) / 1024
            time.sleep(10.0)
            out[STEPS[3]] = rss_kib(pid) / 1024
            if setting == "fake":
                out["turns answered by the fake CLI"] = fake_log.read_text().count(
                    '"kind": "turn"')
        finally:
            os.kill(pid, signal.SIGTERM)
            wait_gone(pid, 30.0)
    return out


def _cell(values: list[float], unit: str) -> str:
    if not values:
        return ""
    if unit == "s":
        return (f"{statistics.median(values):.2f} s "
                f"({min(values):.2f} - {max(values):.2f})")
    if unit == "":
        return f"{statistics.median(values):.0f} ({min(values):.0f} - {max(values):.0f})"
    return f"{statistics.median(values):.1f} MB ({min(values):.1f} - {max(values):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--events", type=int, default=200)
    parser.add_argument("--before", metavar="REV", help="also run memlite at git REV")
    parser.add_argument("--settings", default=",".join(SETTINGS),
                        help=f"comma-separated, of {', '.join(SETTINGS)}")
    parser.add_argument("--write", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args()
    settings = [s for s in args.settings.split(",") if s]
    load = [os.getloadavg()[0]]
    revs = ["now"] + ([args.before] if args.before else [])
    runs: dict[tuple[str, str], list[dict[str, float]]] = {
        (rev, s): [] for rev in revs for s in settings}
    with tempfile.TemporaryDirectory(prefix="memlite-bench-before-") as tmp:
        trees = {"now": None, **({args.before: export(args.before, Path(tmp))}
                                 if args.before else {})}
        for n in range(args.runs):
            for rev in revs if n % 2 == 0 else revs[::-1]:
                with code_of(trees[rev]):
                    for setting in settings if n % 2 == 0 else settings[::-1]:
                        runs[(rev, setting)].append(one_run(setting, args.events))
    load.append(os.getloadavg()[0])
    before = f" --before {args.before}" if args.before else ""
    lines = [SECTION, "", INTRO, ""]
    lines.append(
        f"`python bench/bench_worker_session.py --runs {args.runs} --events {args.events}"
        f"{before}`, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load "
        f"{load[0]:.2f} -> {load[1]:.2f}; worker RSS, median of {args.runs} runs "
        f"(min - max), the columns' runs interleaved, on {os.uname().sysname} "
        f"{os.uname().machine}, {os.cpu_count()} CPUs, Python {sys.version.split()[0]}:")
    lines.append("")
    columns = [(rev, s) for s in settings for rev in revs]
    names = {"rules": "rules", "claude": "AI, real CLI offline", "fake": "AI, fake CLI"}
    lines.append("| step | " + " | ".join(
        f"{names[s]} ({'this checkout' if rev == 'now' else rev})" for rev, s in columns)
        + " |")
    lines.append("|---|" + "---:|" * len(columns))
    rows = [(step, "MB") for step in STEPS]
    if "fake" in settings:
        rows += [(FIRST_TURN, "s"), ("turns answered by the fake CLI", "")]
    for row, unit in rows:
        lines.append(f"| {row} | " + " | ".join(
            _cell([r[row] for r in runs[col] if row in r], unit) for col in columns) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        write_section(SECTION, text)


if __name__ == "__main__":
    main()
