"""Helpers of the e2e tests (the fixtures are in conftest.py): the fake API handle and
the two ways of running the CLI."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
REAL_PLUGIN = REPO / "plugin"


class FakeApi:
    """A running fake_anthropic.py process and its request log."""

    def __init__(self, proc: subprocess.Popen[bytes], port: int, log: Path) -> None:
        self.proc = proc
        self.port = port
        self.log = log

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def requests(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines() if line]

    def message_requests(self, marker: str | None = None) -> list[dict[str, Any]]:
        """``POST /v1/messages`` bodies in order (only those containing ``marker``)."""
        found = []
        for entry in self.requests():
            if entry["method"] == "POST" and entry["path"].startswith("/v1/messages") \
                    and "count_tokens" not in entry["path"] and isinstance(entry["body"], dict):
                if marker is None or marker in json.dumps(entry["body"]):
                    found.append(entry["body"])
        return found



def run_claude(claude: Path, prompt: str, *, cwd: Path, env: dict[str, str],
               plugin_dir: Path | None, timeout: float = 120) -> tuple[list[dict[str, Any]], float]:
    """``claude -p`` in stream-json mode; returns (stdout messages, seconds)."""
    argv = [str(claude), "-p", prompt, "--output-format", "stream-json", "--verbose",
            "--allowedTools", "Bash,Read,Edit,Write"]
    if plugin_dir is not None:
        argv += ["--plugin-dir", str(plugin_dir)]
    started = time.monotonic()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
    seconds = time.monotonic() - started
    assert done.returncode == 0, (done.returncode, done.stderr[-3000:], done.stdout[-3000:])
    messages = [json.loads(line) for line in done.stdout.decode().splitlines()
                if line.startswith("{")]
    return messages, seconds


def run_cli(claude: Path, *args: str, env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run([str(claude), *args], cwd=cwd, env=env, capture_output=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, (args, done.stderr.decode()[-2000:],
                                  done.stdout.decode()[-2000:])
    return done.stdout.decode()
