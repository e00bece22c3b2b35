"""Browser tests: Playwright driving Debian's Chromium against a real worker.

Each test gets a real worker (a daemonized ``memlite worker`` on a free port, stopped by
its pid afterwards) over a data directory seeded with two projects, signs in through the
one-time login URL of ``memlite dashboard --json``, and fails if the page logged a console
error. ``shot(page, name)`` saves a screenshot under ``test-output/screenshots/`` so a
person can look at each view.

Chromium: ``/usr/bin/chromium`` (``apt-get install chromium``; Playwright's own browser
download does not work offline). Without it these tests are skipped with that reason,
except in CI (``MEMLITE_REQUIRE_BROWSER=1``, set by ``.ci/run``), where they fail.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_helpers import BASE_MS, CHROMIUM, CHROMIUM_ARGS, DAY_MS, REPO, SEED, Worker
from leakcheck import descendant_pids
from ports import free_port

from memlite import storage
from memlite.spawn import stop_worker

BROWSER_ROOTS: set[int] = set()
"""The Playwright driver and Chromium's main process, started once for the session."""


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        if os.environ.get("MEMLITE_REQUIRE_BROWSER"):
            pytest.fail(f"no Chromium at {CHROMIUM}: apt-get install -y chromium")
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    before = descendant_pids(os.getpid())
    playwright = sync_playwright().start()
    launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                          args=CHROMIUM_ARGS)
    BROWSER_ROOTS.update(descendant_pids(os.getpid()) - before)
    yield launched
    launched.close()
    playwright.stop()
    BROWSER_ROOTS.clear()


@pytest.fixture(autouse=True)
def no_leaked_processes():
    """The suite's leak check (tests/conftest.py), minus the session's browser: Chromium
    starts and ends renderer processes on its own schedule, under its main process.
    Anything else a browser test leaves behind (a worker's child, say) still fails it."""
    before = descendant_pids(os.getpid())
    yield
    ours: set[int] = set()
    for root in BROWSER_ROOTS:
        ours |= {root} | descendant_pids(root)

    def leaked_now() -> set[int]:
        browser_now = set(ours)
        for root in BROWSER_ROOTS:
            browser_now |= descendant_pids(root)
        return descendant_pids(os.getpid()) - before - browser_now

    deadline = time.monotonic() + 2.0
    leaked = leaked_now()
    while leaked and time.monotonic() < deadline:
        time.sleep(0.05)
        leaked = leaked_now()
    for pid in leaked:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert not leaked, f"test leaked processes: {sorted(leaked)}"


@pytest.fixture
def worker(data_dir: Path) -> Iterator[Worker]:
    """A real worker over a seeded data directory (rules observer, wordllama vectors)."""
    conn = storage.connect(data_dir)
    ids: dict[str, int] = {}
    with conn:
        for key, project, session, kind, title, narrative, facts, read, modified, day in SEED:
            ids[key] = storage.insert_observation(conn, storage.NewObservation(
                session_id=session, project=project, type=kind, title=title,
                narrative=narrative, facts=tuple(facts), files_read=tuple(read),
                files_modified=tuple(modified), backend="ai",
                at_ms=BASE_MS + day * DAY_MS)).id
        ids["summary"] = storage.insert_summary(conn, storage.NewSummary(
            session_id="shop-s1", project="/home/dev/shop", request="Stop double charges",
            investigated="webhook retries", learned="Stripe retries for 3 days",
            completed="idempotency keys", next_steps="backfill old charges",
            at_ms=BASE_MS + DAY_MS + 1000))
    conn.close()
    env = {**os.environ, "MEMLITE_DATA_DIR": str(data_dir),
           "MEMLITE_WORKER_PORT": str(free_port()), "MEMLITE_EMBEDDER": "wordllama",
           "MEMLITE_OBSERVER": "rules"}
    result = subprocess.run([sys.executable, "-m", "memlite", "worker", "start", "--json"],
                            env=env, capture_output=True, text=True, timeout=60, cwd=REPO)
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    token = (data_dir / "token").read_text().strip()
    try:
        yield Worker(port=info["port"], pid=info["pid"], env=env, data_dir=data_dir,
                     token=token, ids=ids)
    finally:
        stop_worker(data_dir, grace=5.0)


@pytest.fixture
def page(browser: Any, worker: Worker, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A signed-in page (1280x900); the test fails if the page logged a console error."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(5000)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("console", lambda message: errors.append(message.text)
           if message.type == "error" else None)
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.goto(worker.login_url())
    tab.wait_for_url(f"{worker.base}/feed")
    tab.memlite_errors = errors  # type: ignore[attr-defined]
    yield tab
    context.close()
    assert not errors, f"console errors: {errors}"
