"""Worker RSS while it serves a session, with the rules observer and with the AI one.

Why: ``bench_worker.py`` measures the worker idle and after an embedding backlog, where
the AI observer never starts. A user's worker (``OBSERVER=auto`` with Claude Code
installed) runs its observer through ``claude_agent_sdk``, whose import alone pulls in
mcp, pydantic, starlette, uvicorn, cryptography and opentelemetry (~37 MB resident,
measured by hand on 2026-12-02). This measures what a session costs in both settings.

Each run: a fresh data directory, a worker with the default embedding model (MiniLM),
``OBSERVER`` as given; once the model is loaded, one session through the HTTP API as the
hooks send it (SessionStart, a prompt, ``EVENTS`` PostToolUse Read events of the captured
fixture shape with distinct files, a Stop), 30 searches, then 10 s idle; the worker's
``VmRSS`` after each step. With ``OBSERVER=claude`` the SDK's bundled CLI is started for
the conversation; offline and not logged in, it fails its first request and the observer
pauses (the events stay pending, rules observations meanwhile): the SDK is imported and
its conversation set up, so the figure is a floor of what a logged-in user's worker holds.
The two settings alternate run by run.

Usage::

    python bench/bench_worker_session.py [--runs 2] [--events 200]
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

from bench_worker import free_port, model_loaded, rss_kib, wait_gone

STEPS = ("model loaded", "after the session's events", "after 30 searches", "10 s idle")


def _call(port: int, token: str, method: str, path: str, body: object = None) -> object:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read() or b"null")


def one_run(observer: str, events: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="memlite-bench-session-") as tmp:
        port = free_port()
        env = {**os.environ, "MEMLITE_DATA_DIR": tmp, "MEMLITE_WORKER_PORT": str(port),
               "MEMLITE_EMBEDDER": "auto", "MEMLITE_OBSERVER": observer}
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
                _call(port, token, "POST", "/api/events", {
                    "session_id": sid, "cwd": project, "hook_event_name": "PostToolUse",
                    "tool_name": "Read", "tool_use_id": f"toolu_{n}",
                    "tool_input": {"file_path": f"{project}/src/module{n % 7}/file{n}.py"},
                    "tool_response": {"type": "text", "file": {
                        "filePath": f"{project}/src/module{n % 7}/file{n}.py",
                        "content": f"def parse_{n}(text):\n    return cache.get(text)\n"}}})
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
        finally:
            os.kill(pid, signal.SIGTERM)
            wait_gone(pid, 30.0)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--events", type=int, default=200)
    args = parser.parse_args()
    load = [os.getloadavg()[0]]
    runs: dict[str, list[dict[str, float]]] = {"rules": [], "claude": []}
    for n in range(args.runs):
        for observer in (("rules", "claude") if n % 2 == 0 else ("claude", "rules")):
            runs[observer].append(one_run(observer, args.events))
    load.append(os.getloadavg()[0])
    print(f"`python bench/bench_worker_session.py --runs {args.runs} --events {args.events}`"
          f", {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load {load[0]:.2f} -> "
          f"{load[1]:.2f}; worker RSS, median of {args.runs} runs (min - max):\n")
    print("| step | OBSERVER=rules | OBSERVER=claude (AI observer, SDK loaded) |")
    print("|---|---:|---:|")
    for step in STEPS:
        cells = []
        for observer in ("rules", "claude"):
            values = [run[step] for run in runs[observer]]
            cells.append(f"{statistics.median(values):.1f} MB "
                         f"({min(values):.1f} - {max(values):.1f})")
        print(f"| {step} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
