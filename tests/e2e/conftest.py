"""Harness for end-to-end tests with the REAL Claude Code CLI, fully offline.

* The CLI is the one bundled in claude-agent-sdk's wheel (``_bundled/claude``); the tests
  skip, saying so, only when that binary is missing.
* ``fake_api`` starts ``fake_anthropic.py`` as a process on 127.0.0.1 (a free port it
  reports in a file), with a script and a request log; it is stopped by its pid.
* ``claude_env`` is the whole environment of a CLI run (``env -i`` style): PATH, an
  isolated HOME, the fake's URL, a dummy key, the quiet switches, and memlite's
  MEMLITE_DATA_DIR / MEMLITE_WORKER_PORT (a free port) / MEMLITE_PYTHON.
* The plugin under test is the real ``plugin/`` (``--plugin-dir``, or installed through a
  local marketplace); its hooks run the real hook (``memlite.hooks.main``) with
  ``$MEMLITE_PYTHON``.
* The worker that the hooks start is stopped at the end by the pid in its pid file
  (``memlite.spawn.stop_worker``: SIGTERM after checking the pid is that worker, wait,
  SIGKILL only if it does not exit).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import claude_agent_sdk
import pytest
from e2e_helpers import REAL_PLUGIN, FakeApi
from ports import free_port
from procroot import PROC  # noqa: E402

HERE = Path(__file__).resolve().parent
CLAUDE_BIN = Path(claude_agent_sdk.__file__).parent / "_bundled" / "claude"


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    if not (CLAUDE_BIN.is_file() and os.access(CLAUDE_BIN, os.X_OK)):
        pytest.skip(f"the Claude Code CLI bundled with claude-agent-sdk is missing "
                    f"({CLAUDE_BIN}): reinstall claude-agent-sdk to run e2e tests")
    return CLAUDE_BIN


def real_plugin_ready() -> bool:
    return (REAL_PLUGIN / "hooks" / "hooks.json").is_file() and \
        (REAL_PLUGIN / ".claude-plugin" / "plugin.json").is_file()


@pytest.fixture
def plugin_dir() -> Path:
    """The plugin under test: the real plugin/ (a missing one fails, it is not skipped)."""
    assert real_plugin_ready(), f"{REAL_PLUGIN} has no hooks/hooks.json or plugin.json"
    return REAL_PLUGIN


@pytest.fixture
def fake_api_factory(tmp_path: Path) -> Iterator[Any]:
    procs: list[subprocess.Popen[bytes]] = []

    def start(script: dict[str, Any], name: str = "api") -> FakeApi:
        script_path = tmp_path / f"{name}.script.json"
        script_path.write_text(json.dumps(script))
        port_file, log = tmp_path / f"{name}.port", tmp_path / f"{name}.jsonl"
        proc = subprocess.Popen(
            [sys.executable, str(HERE / "fake_anthropic.py"), "--script", str(script_path),
             "--log", str(log), "--port-file", str(port_file)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(proc)
        deadline = time.monotonic() + 15
        while not port_file.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("fake_anthropic.py did not start")
            time.sleep(0.02)
        return FakeApi(proc, int(port_file.read_text()), log)

    yield start
    for proc in procs:  # by handle (pid), never by name
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def workers_of(data_dir: Path) -> list[int]:
    """Pids of ``memlite worker run --data-dir <data_dir>`` processes (read from /proc):
    exactly this test's workers, never another one."""
    target = os.path.realpath(data_dir)
    found = []
    for entry in os.listdir(PROC):
        if not entry.isdigit():
            continue
        try:
            with open(f"{PROC}/{entry}/cmdline", "rb") as f:
                args = [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
        except OSError:
            continue
        if "--data-dir" in args and args[-1] == target and "run" in args:
            found.append(int(entry))
    return found


@pytest.fixture
def memlite_data(tmp_path: Path) -> Iterator[Path]:
    """The data directory the hooks use; its worker is stopped by pid at the end.

    A hook may have spawned a worker that is still starting when the CLI exits (its pid
    file appears once it is ready), so the teardown waits for such a worker and stops it
    too, by the pid its own command line names this directory under.
    """
    from memlite.spawn import stop_worker

    path = tmp_path / "memlite-e2e-data"
    yield path
    deadline = time.monotonic() + 20
    while True:
        if path.exists():
            stop_worker(path, grace=10.0)
        left = workers_of(path)
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    for pid in workers_of(path):  # still there after 20 s: stop it by pid, then fail
        os.kill(pid, signal.SIGKILL)
    assert not left, f"worker(s) {left} of {path} did not stop"


@pytest.fixture
def git_project(tmp_path: Path) -> Path:
    """A temp git repository with one file (no git binary needed: .git/HEAD is enough)."""
    project = tmp_path / "work" / "greeter"
    (project / ".git" / "refs" / "heads").mkdir(parents=True)
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (project / "hello.py").write_text('print("hello")\n')
    return project


@pytest.fixture
def claude_env(tmp_path: Path, memlite_data: Path) -> Any:
    home = tmp_path / "home"
    home.mkdir()
    worker_port = free_port()

    def env_for(api: FakeApi) -> dict[str, str]:
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "sk-ant-dummy-not-a-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "MEMLITE_DATA_DIR": str(memlite_data),
            "MEMLITE_WORKER_PORT": str(worker_port),
            "MEMLITE_PYTHON": sys.executable,
            "MEMLITE_OBSERVER": "rules",  # the fake API's script is for Claude Code only
        }

    env_for.home = home  # type: ignore[attr-defined]
    return env_for


