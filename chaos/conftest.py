"""Fixtures of the chaos scenarios (see README.md).

* ``world``: a ``Chaos`` over a fresh data directory (rules observer, no embedder, a free
  port). At the end every process of that data directory is stopped by pid, and the
  scenario FAILS if any was still alive after its own clean-up: that is the orphan check.
* ``figures``: what the scenario measured; printed after it (``-s``), and the whole run's
  table is written to ``chaos/RESULTS.md`` when the session ends if
  ``MEMLITE_CHAOS_WRITE=1`` (so an ordinary ``make test`` leaves the tracked file alone).

Leaks of plain child processes of pytest are checked as in the test suite.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from harness import Chaos, Figures  # noqa: E402
from leakcheck import descendant_pids  # noqa: E402

RESULTS = HERE / "RESULTS.md"
_RECORDED: list[Figures] = []


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key in list(os.environ):
        if key.startswith(("MEMLITE_", "FAKE_CLAUDE")):
            monkeypatch.delenv(key)
    path = tmp_path / "memlite-data"
    monkeypatch.setenv("MEMLITE_DATA_DIR", str(path))
    monkeypatch.setenv("MEMLITE_OBSERVER", "rules")
    monkeypatch.setenv("MEMLITE_EMBEDDER", "none")
    return path


@pytest.fixture
def world(data_dir: Path) -> Iterator[Chaos]:
    chaos = Chaos.create(data_dir)
    yield chaos
    # A scenario may leave its worker running (the fixture stops it); anything else of
    # this data directory still alive is an orphan: observers, hooks, builders.
    workers = chaos.workers()
    others = chaos.processes() - workers
    chaos.stop()
    assert not others, f"processes of this scenario outlived it: {sorted(others)}"


@pytest.fixture
def figures(request: pytest.FixtureRequest) -> Iterator[Figures]:
    found = Figures(scenario=request.node.name)
    yield found
    if found.values:
        _RECORDED.append(found)
        print(f"\n[chaos] {found.scenario}: " + ", ".join(
            f"{k}={v}" for k, v in found.values.items()))


@pytest.fixture(autouse=True)
def no_leaked_processes() -> Iterator[None]:
    before = descendant_pids(os.getpid())
    yield
    deadline = time.monotonic() + 2.0
    leaked = descendant_pids(os.getpid()) - before
    while leaked and time.monotonic() < deadline:
        time.sleep(0.05)
        leaked = descendant_pids(os.getpid()) - before
    for pid in leaked:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not leaked, f"scenario leaked processes: {sorted(leaked)}"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if not _RECORDED or os.environ.get("MEMLITE_CHAOS_WRITE") != "1":
        return
    lines = [
        "# Chaos results",
        "",
        f"Written by the last run of the chaos scenarios ({datetime.date.today()}, "
        f"{platform.node()}, {os.cpu_count()} CPUs, Python {platform.python_version()}), "
        f"pytest exit status {int(exitstatus)}. Each row: one scenario, what it measured.",
        "",
        "| scenario | figures |",
        "|---|---|",
    ]
    for found in _RECORDED:
        shown = ", ".join(f"{k} {json.dumps(v) if not isinstance(v, str) else v}"
                          for k, v in found.values.items())
        lines.append(f"| `{found.scenario}` | {shown} |")
    RESULTS.write_text("\n".join(lines) + "\n")
