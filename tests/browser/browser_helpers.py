"""What the browser tests share: the worker handle, the seeded data, screenshots."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import apsw
import attrs

from memlite.storage.db import db_path

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "test-output" / "screenshots"
CHROMIUM = os.environ.get("MEMLITE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-dev-shm-usage"]
DAY_MS = 86_400_000
BASE_MS = 1_780_000_000_000  # 2026-05-28


@attrs.define
class Worker:
    """A running worker: where it listens, how to reach it, what was seeded."""

    port: int
    pid: int
    env: dict[str, str]
    data_dir: Path
    token: str
    ids: dict[str, int]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def api(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        """One request with the bearer token (what hooks and the CLI send)."""
        from memlite.workerapi import call

        return call(self.port, self.token, method, path, body)

    def login_url(self) -> str:
        result = subprocess.run([sys.executable, "-m", "memlite", "dashboard", "--json"],
                                env=self.env, capture_output=True, text=True, timeout=30)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout)["url"]


SEED = [
    # key, project, session, type, title, narrative, facts, files read, files modified, day
    ("cache", "/home/dev/shop", "shop-s1", "decision", "Chose Redis for the session cache",
     "Postgres advisory locks were too slow under load; Redis gives us expiry for free.",
     ["p99 fell from 180 ms to 12 ms"], ["docs/cache.md"], ["shop/cache.py"], 0),
    ("webhook", "/home/dev/shop", "shop-s1", "bugfix", "Fixed double charge on webhook retry",
     "Stripe retried the webhook; the handler now stores an idempotency key first.",
     ["idempotency key stored before charging"], ["shop/webhooks.py"],
     ["shop/webhooks.py", "tests/test_webhooks.py"], 1),
    ("invoice", "/home/dev/shop", "shop-s2", "feature", "Invoices as PDF",
     "Added a PDF renderer for invoices with WeasyPrint.", [], [], ["shop/invoice_pdf.py"], 2),
    ("retry", "/home/dev/cli", "cli-s1", "change", "Backoff on S3 upload retries",
     "Exponential backoff with jitter, at most 5 attempts.", ["max 5 attempts"], [],
     ["src/upload.rs"], 3),
    ("hostile", "/home/dev/cli", "cli-s1", "discovery",
     "<script>window.__pwned = 1</script> in a title stays text",
     "<img src=x onerror=\"window.__pwned=2\"> and '; DROP TABLE observations; --", [], [],
     ["../../etc/passwd"], 4),
]


def shot(page: Any, name: str) -> Path:
    """Save a full-page screenshot as ``test-output/screenshots/<name>.png``."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def forgive_refusals(page: Any, status: int = 400) -> list[str]:
    """Drop, and return, the console lines Chromium logs for fetches answered ``status``.

    A test that provokes a refusal on purpose calls this before it ends, so the ``page``
    fixture still fails on every other console error (a 500, an exception, a CSP report).
    """
    errors: list[str] = page.memlite_errors
    refused = [e for e in errors if f"the server responded with a status of {status} " in e]
    errors[:] = [e for e in errors if e not in refused]
    return refused


def db_rows(worker, sql, params=()):
    """Read the worker's database directly (read-only, beside the running worker)."""
    conn = apsw.Connection(str(db_path(worker.data_dir)), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()
