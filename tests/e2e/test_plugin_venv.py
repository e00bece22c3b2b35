"""The plugin venv as the first session builds it, then real Claude Code sessions on it.

Issue 16: the bootstrap (``memlite.hooks.venv_build.build``, run as the hook runs it)
installs from constraints.txt, without the SDK's bundled CLI; the real-CLI end-to-end
runs on that venv (the hooks' ``MEMLITE_PYTHON``), and the observer finds the user's own
``claude`` through ``CLAUDE_CODE_PATH``. The build takes ~40 s to a few minutes (pip,
from the local package index and pip's cache), once per test run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ports import free_port
from test_claude_code import (
    _assert_names_session_one,
    _context_of_first_request,
    _session_one_script,
    _two_sessions,
)

from memlite.lifecycle import find_worker
from memlite.spawn import stop_worker

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(900)]

REPO = Path(__file__).resolve().parents[2]
LIMIT_MB = 250


def _size_mb(path: Path) -> float:
    return sum(os.lstat(os.path.join(root, name)).st_size
               for root, _dirs, files in os.walk(path) for name in files) / 1e6


def _build(data: Path) -> None:
    """``venv_build.build`` as the hook runs it (a bare interpreter, detached in real life).

    Its last steps start the worker (issue 13: the spool is drained with no wait for a
    later hook) and convert the embedding model: both on a data directory of the test's
    own, never the home one, and that worker is stopped by its pid here.
    """
    memory = data.parent / f"{data.name}-memlite"
    port = free_port()
    env = {**os.environ, "MEMLITE_DATA_DIR": str(memory), "MEMLITE_WORKER_PORT": str(port),
           "MEMLITE_OBSERVER": "rules"}
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "from memlite.hooks.venv_build import build; sys.exit(build(sys.argv[2]))")
    try:
        done = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(REPO), str(data)],
                              capture_output=True, text=True, timeout=840, cwd=data,
                              stdin=subprocess.DEVNULL, env=env)
        status = json.loads((data / "venv-status.json").read_text())
        assert done.returncode == 0 and status["state"] == "ready", (status,
                                                                     done.stdout[-2000:])
        assert "worker starting" in done.stdout or "worker already running" in done.stdout
        deadline = time.monotonic() + 60
        while find_worker(memory) is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert find_worker(memory) is not None, "the builder did not start the worker"
    finally:
        stop_worker(memory)


@pytest.fixture(scope="module")
def plugin_venv(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("plugin-data")
    _build(data)
    return data / "venv"


def _venv_run(venv: Path, code: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run([str(venv / "bin" / "python"), "-c", code], capture_output=True,
                          text=True, timeout=120, env=env, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_plugin_venv_is_pinned_and_lean(plugin_venv):
    assert not list(plugin_venv.glob("lib/python3*/site-packages/claude_agent_sdk/_bundled/claude"))
    size = _size_mb(plugin_venv)
    assert size <= LIMIT_MB, f"plugin venv is {size:.0f} MB"
    installed = json.loads(_venv_run(plugin_venv, (
        "import importlib.metadata as m, json; print(json.dumps({d.metadata['Name'].lower()"
        ".replace('_', '-'): d.version for d in m.distributions()}))")))
    pins = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        if line and not line.startswith("#"):
            name, version = line.split("==")
            pins[name.lower().replace("_", "-")] = version
    wrong = {name: (version, pins[name]) for name, version in installed.items()
             if name in pins and version != pins[name]}
    assert wrong == {}
    assert "claude-agent-sdk" in installed and "trio" in installed
    for extra in ("wordllama", "pytest", "playwright"):  # extras and test tools stay out
        assert extra not in installed
    # No pip inside (not a runtime dependency): the host's pip checks it.
    assert "pip" not in installed
    check = subprocess.run([sys.executable, "-m", "pip", "--python",
                            str(plugin_venv / "bin" / "python"), "check"],
                           capture_output=True, text=True, timeout=120, check=False)
    assert check.returncode == 0, check.stdout + check.stderr


def test_the_observer_runs_the_users_own_claude(plugin_venv, claude_bin, tmp_path):
    code = ("from memlite.observer.conversation_parts import resolve_cli\n"
            "from memlite.errors import ObserverUnavailable\n"
            "try:\n    print(resolve_cli(None))\n"
            "except ObserverUnavailable as exc:\n    print('unavailable:', exc)\n")
    bare = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    assert _venv_run(plugin_venv, code, {**bare, "CLAUDE_CODE_PATH": str(claude_bin)}).strip() \
        == str(claude_bin.resolve())
    assert "CLAUDE_CODE_PATH" in _venv_run(plugin_venv, code, bare)


def test_real_claude_code_sessions_on_the_plugin_venv(
        plugin_venv, claude_bin, fake_api_factory, claude_env, git_project, plugin_dir):
    api = fake_api_factory(_session_one_script(git_project))
    env = {**claude_env(api), "MEMLITE_PYTHON": str(plugin_venv / "bin" / "python"),
           "CLAUDE_CODE_PATH": str(claude_bin)}
    _two_sessions(claude_bin, api, env, git_project, plugin_dir)
    _assert_names_session_one(_context_of_first_request(api, "SCRIPT=s2"), git_project)


def test_an_update_is_built_beside_and_swapped_in(plugin_venv):
    """Last (it rebuilds the module's venv): new pins, a build into venv.next, one swap."""
    from memlite.hooks import bootstrap

    ready = plugin_venv / bootstrap.READY_FILE
    ready.write_text("1\nfingerprint=0000000000000000\n")  # built from other pins
    marker = plugin_venv / "old-tree"
    marker.write_text("")
    _build(plugin_venv.parent)
    assert f"fingerprint={bootstrap.fingerprint(str(REPO))}" in ready.read_text()
    assert not marker.exists()  # the old tree is gone, the new one is in its place
    assert not (plugin_venv.parent / "venv.next").exists()
    assert not (plugin_venv.parent / "venv.old").exists()
    assert "trio" in _venv_run(plugin_venv, "import trio, memlite.worker; print(trio.__name__)")
