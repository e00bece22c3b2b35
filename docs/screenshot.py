"""Take the README's dashboard screenshot (docs/feed.png) from a throwaway worker.

The worker's data directory is seeded with one project of the retrieval eval's
hand-written observations (bench/eval/dataset.json) and a summary, so the picture shows
realistic memory. Needs Chromium (/usr/bin/chromium) and playwright, like the browser
tests. Usage: ``.venv/bin/python docs/screenshot.py``.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from memlite import storage  # noqa: E402
from memlite.spawn import stop_worker  # noqa: E402

PROJECT = "/home/dev/acme-billing"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def seed(data_dir: Path) -> None:
    data = json.loads((REPO / "bench/eval/dataset.json").read_text())
    chosen = [o for o in data["observations"] if o["project"] == PROJECT][-8:]
    now = int(time.time() * 1000)
    last = max(datetime.fromisoformat(o["created_at"].replace("Z", "+00:00")) for o in chosen)
    conn = storage.connect(data_dir)
    with conn:
        for o in chosen:
            at = datetime.fromisoformat(o["created_at"].replace("Z", "+00:00"))
            # Keep their spacing, the newest an hour ago (the stats bar's 7-day sparkline).
            shift = now - 3_600_000 - int(last.timestamp() * 1000)
            storage.insert_observation(conn, storage.NewObservation(
                session_id=o["session"], project=o["project"], type=o["type"],
                title=o["title"], subtitle=o["subtitle"], narrative=o["narrative"],
                facts=o["facts"], concepts=o["concepts"], files_read=o["files_read"],
                files_modified=o["files_modified"], at_ms=int(at.timestamp() * 1000) + shift))
    conn.close()


def main() -> int:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="memlite-shot-") as tmp:
        data_dir = Path(tmp) / "data"
        seed(data_dir)
        env = {**os.environ, "MEMLITE_DATA_DIR": str(data_dir), "MEMLITE_EMBEDDER": "none",
               "MEMLITE_OBSERVER": "rules", "MEMLITE_WORKER_PORT": str(free_port())}
        subprocess.run([sys.executable, "-m", "memlite", "worker", "start"], env=env,
                       check=True, capture_output=True, cwd=REPO)
        try:
            url = json.loads(subprocess.run(
                [sys.executable, "-m", "memlite", "dashboard", "--json"], env=env, check=True,
                capture_output=True, text=True, cwd=REPO).stdout)["url"]
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=[
                    "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
                page = browser.new_page(viewport={"width": 1280, "height": 860})
                page.goto(url)
                page.wait_for_selector("[data-testid=observation-card]")
                page.wait_for_selector("[data-testid=stat-sessions]")
                out = REPO / "docs" / "feed.png"
                page.screenshot(path=str(out))
                browser.close()
            print(f"wrote {out}")
        finally:
            stop_worker(data_dir, grace=5.0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
