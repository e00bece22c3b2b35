"""Fixtures every test gets: an isolated data directory, a virtual clock, and a leak check.

* ``MEMLITE_DATA_DIR`` points at a fresh temporary folder for each test, and every other
  ``MEMLITE_*`` variable from the developer's shell is removed, so no test reads or writes
  the real ``~/.memlite``.
* ``autojump_clock`` is Trio's ``MockClock(autojump_threshold=0)``: pytest-trio runs a test
  that requests it on virtual time.
* ``no_leaked_processes`` fails any test that leaves a descendant process of pytest alive;
  the leaked processes are killed *by pid* first so one leak does not cascade.
"""

from __future__ import annotations

import os
import signal
import time

import apsw
import pytest
import trio.testing
from gitrepo import git_project
from leakcheck import descendant_pids


def pytest_report_header(config: pytest.Config) -> list[str]:
    return [f"sqlite (apsw): {apsw.sqlite_lib_version()}, apsw {apsw.apsw_version()}"]


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory):
    """One cache of prepared embedding models for the whole run (MiniLM's int8 copy is
    made once, ~10 s, not once per test)."""
    return tmp_path_factory.mktemp("memlite-models")


@pytest.fixture(scope="session", autouse=True)
def _run_wide_model_cache(model_cache):
    """Session- and module-scoped fixtures run outside ``data_dir``'s environment: they
    too prepare models in the run's cache, never in the home directory's ~/.memlite."""
    before = os.environ.get("MEMLITE_MODEL_CACHE")
    os.environ["MEMLITE_MODEL_CACHE"] = str(model_cache)
    yield
    if before is None:
        os.environ.pop("MEMLITE_MODEL_CACHE", None)
    else:
        os.environ["MEMLITE_MODEL_CACHE"] = before


@pytest.fixture(autouse=True)
def data_dir(tmp_path, monkeypatch, model_cache):
    """A fresh, private data directory for each test (``MEMLITE_DATA_DIR``)."""
    for key in list(os.environ):
        if key.startswith("MEMLITE_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("MEMLITE_MODEL_CACHE", str(model_cache))
    path = tmp_path / "memlite-data"
    monkeypatch.setenv("MEMLITE_DATA_DIR", str(path))
    # Tests never reach the network: a worker started by a test observes with the rules
    # backend unless the test asks for the AI (over the fake CLI) itself.
    monkeypatch.setenv("MEMLITE_OBSERVER", "rules")
    # And without an embedding model (each worker would load one: ~0.5 s, 100+ MB); the
    # tests of semantic search turn it on themselves.
    monkeypatch.setenv("MEMLITE_EMBEDDER", "none")
    return path


@pytest.fixture
def project(tmp_path):
    """A project root (a git work tree) named ``payments``, as a string."""
    return git_project(tmp_path / "payments")


@pytest.fixture
def autojump_clock():
    """Virtual time that jumps ahead whenever every task is blocked."""
    return trio.testing.MockClock(autojump_threshold=0)


@pytest.fixture(autouse=True)
def no_leaked_processes():
    """Fail the test if it leaves a child process behind (kill the leak by pid first)."""
    before = descendant_pids(os.getpid())
    yield
    deadline = time.monotonic() + 2.0
    leaked = descendant_pids(os.getpid()) - before
    while leaked and time.monotonic() < deadline:
        time.sleep(0.05)  # a process that was just signalled may need a moment to be reaped
        leaked = descendant_pids(os.getpid()) - before
    for pid in leaked:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not leaked, f"test leaked processes: {sorted(leaked)}"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "loop_guard: fail an async test whose task step "
                                       "blocks the Trio thread (tests/loopblock.py)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Async tests marked ``loop_guard`` run under ``tests/loopblock.py``'s instrument."""
    import inspect

    from loopblock import guarded_run

    for item in items:
        function = getattr(item, "function", None)
        if item.get_closest_marker("loop_guard") and inspect.iscoroutinefunction(function):
            item.add_marker(pytest.mark.trio(run=guarded_run(item.nodeid)))
