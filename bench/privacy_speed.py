"""Linear time of the redactor and the hook's cost on 1 MB tool outputs (bench_privacy.py).

* ``adversarial()``: CPU time (best of 3) of ``clean`` on every input of
  ``tests/privacy/adversarial.py`` at 100 kB, the worst listed; the named shapes at 1 MB
  (ms per 100 kB); the pre-issue-15 redactor on the shapes issue 15 named (once each).
* ``hook_1mb()``: ``python3 -I -S plugin/scripts/hook.py PostToolUse`` (the hook as Claude
  Code runs it) on PostToolUse payloads whose tool output is 1 MB, against a stub worker
  on 127.0.0.1 (answers 200 to anything: the cost measured is the hook's), p50 wall time
  of ``runs``, round-robin beside ``python3 -I -S -c pass`` (the interpreter floor), and
  the p50 CPU time (user + system) of each process: on a shared machine the wall time
  mostly measures the queue for a core.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "privacy"))

from adversarial import inputs  # noqa: E402

from memlite.privacy import clean  # noqa: E402

HOOK = ROOT / "plugin" / "scripts" / "hook.py"
FIXTURE = (ROOT / "tests" / "fixtures" / "claude-code" / "v2.1.332" / "hooks"
           / "PostToolUse.Bash.json")
ISSUE_SHAPES = ("eyJ run", "cookie b64 json array", "sk- long run", "token: repeated",
                "jwt almost")


def _cpu(func, text: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.process_time()
        func(text)
        best = min(best, time.process_time() - started)
    return best


def adversarial(old_clean=None) -> dict:
    at_100k = sorted(((_cpu(clean, text, 3), name) for name, text in inputs(100_000)),
                     reverse=True)
    at_1m = sorted(((_cpu(clean, text, 1) / 10, name)
                    for name, text in inputs(1_000_000, per_word=False)), reverse=True)
    old = {}
    if old_clean is not None:
        for name, text in inputs(100_000, per_word=False):
            if name in ISSUE_SHAPES:
                old[name] = (_cpu(old_clean, text, 1), _cpu(clean, text, 3))
    return {"count": len(at_100k), "worst_100k": at_100k[:6],
            "median_100k": statistics.median(t for t, _ in at_100k),
            "worst_1m": at_1m[:4], "old": old}


class _Stub(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST  # noqa: N815

    def log_message(self, *args: object) -> None:
        pass


def _payloads(realistic: str) -> dict[str, bytes]:
    base = json.loads(FIXTURE.read_text())
    adversarial_by_name = dict(inputs(250_000, per_word=False))

    def with_output(stdout: object) -> bytes:
        value = json.loads(json.dumps(base))
        value["tool_response"] = {"stdout": stdout, "stderr": "", "interrupted": False}
        return json.dumps(value).encode()

    return {
        "1 MB realistic output, one string": with_output(realistic[:1_000_000]),
        "1 MB realistic output, 4 strings of 250 kB (no pre-cut)": with_output(
            [realistic[i:i + 250_000] for i in range(0, 1_000_000, 250_000)]),
        "1 MB base64url JSON cookies, 4 x 250 kB": with_output(
            [adversarial_by_name["cookie b64 json array"]] * 4),
        "1 MB of `token: `, 4 x 250 kB": with_output(
            [adversarial_by_name["token: repeated"]] * 4),
        "1 MB of `eyJ`, 4 x 250 kB": with_output([adversarial_by_name["eyJ run"]] * 4),
    }


def hook_1mb(realistic: str, runs: int) -> dict:
    python = shutil.which("python3", path="/usr/bin") or sys.executable
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    payloads = _payloads(realistic)
    rows: dict[str, list[float]] = {"floor": []}
    cpu: dict[str, list[float]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            data = Path(tmp) / "data"
            data.mkdir(mode=0o700)
            (data / "token").write_text("bench-token")
            os.chmod(data / "token", 0o600)
            env = {**os.environ, "MEMLITE_DATA_DIR": str(data),
                   "MEMLITE_WORKER_PORT": str(server.server_address[1])}
            for i in range(runs + 1):
                cases = [("floor", [python, "-I", "-S", "-c", "pass"], b"")]
                cases += [(name, [python, "-I", "-S", str(HOOK), "PostToolUse"], body)
                          for name, body in payloads.items()]
                for name, argv, body in cases:
                    before = resource.getrusage(resource.RUSAGE_CHILDREN)
                    started = time.perf_counter()
                    subprocess.run(argv, input=body, env=env, capture_output=True, check=False,
                                   timeout=30)
                    wall = time.perf_counter() - started
                    after = resource.getrusage(resource.RUSAGE_CHILDREN)
                    if i:  # the first round warms the page cache
                        rows.setdefault(name, []).append(wall)
                        cpu.setdefault(name, []).append(
                            after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
            log = data / "logs"
            problems = [p.read_text()[-500:] for p in log.glob("*")] if log.is_dir() else []
    finally:
        server.shutdown()
        server.server_close()
    return {"python": python, "p50": {k: statistics.median(v) for k, v in rows.items()},
            "cpu": {k: statistics.median(v) for k, v in cpu.items()},
            "max": {k: max(v) for k, v in rows.items()}, "runs": runs,
            "problems": problems}
