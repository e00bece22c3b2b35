"""The servers ``bench_peer_http.py`` measures: a memlite worker on a copy of the cached
database (started with ``EMBEDDER``, waited until its embedder and full-text copy are
ready, stopped by its pid) and plain processes (claude-mem's worker under Bun, the bare
floors), with the small reads the bench makes of them (JSON over loopback, resident size,
liveness, the database's row count).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from bench_http import Client, _free_port, _memlite, _rss_kb

__all__ = ["EMBEDDER", "MemliteWorker", "Plain", "get_json"]

EMBEDDER = "minilm"


def get_json(port: int, path: str, token: str | None = None) -> dict:
    client = Client(port, token or "")
    if token is None:
        client.prefix = f"Host: 127.0.0.1:{port}\r\n"
    try:
        status, body = client.call("GET", path)
    finally:
        client.close()
    if status != 200:
        raise ValueError(f"HTTP {status} for {path}")
    return json.loads(body)


def _rss_mb(pid: int) -> float | None:
    """Resident memory of ``pid`` in MB, where ``/proc`` tells it (Linux); else None."""
    try:
        return _rss_kb(pid) / 1024
    except (OSError, StopIteration):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _observations(db: Path) -> int:
    import apsw

    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return int(conn.execute("SELECT count(*) FROM observations").fetchall()[0][0])
    finally:
        conn.close()


class MemliteWorker:
    """memlite's worker on a copy of ``db``; ``stop`` asks it, then makes sure by pid."""

    def __init__(self, db: Path, data: Path, model_cache: Path) -> None:
        data.mkdir(parents=True)
        shutil.copy(db, data / db.name)
        self.data = data
        self.size = _observations(data / db.name)
        self.env = {**os.environ, "MEMLITE_DATA_DIR": str(data), "MEMLITE_EMBEDDER": EMBEDDER,
                    "MEMLITE_MODEL_CACHE": str(model_cache),
                    "MEMLITE_WORKER_PORT": str(_free_port())}
        info = json.loads(_memlite("worker", "start", "--json", env=self.env))
        self.pid, self.port = info["pid"], info["port"]
        self.token = (data / "token").read_text().strip()

    def wait_ready(self, timeout: float = 900) -> dict:
        """Wait for the embedder: a search answered without vectors is not the one measured."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            status = get_json(self.port, "/api/embedder", self.token)
            if status.get("state") == "ready":
                self.wait_full_text_index(end)
                return status
            if status.get("state") in ("failed", "off"):
                raise RuntimeError(f"memlite's embedder: {status}")
            time.sleep(0.5)
        raise RuntimeError("memlite's embedder did not become ready")

    def wait_full_text_index(self, end: float) -> None:
        """A database of ``bm25_index.MIN_ROWS`` observations or more: wait until the
        worker's in-memory full-text index is built (its log says so; started at the
        worker's start, ~1 s at 10,000, FTS5 answering meanwhile)."""
        from memlite.storage import bm25_index

        if self.size < bm25_index.MIN_ROWS:
            return
        logfile = self.data / "worker.log"
        while time.monotonic() < end:
            if logfile.exists() and bm25_index.BUILT in logfile.read_text(errors="replace"):
                return
            time.sleep(0.5)
        raise RuntimeError("memlite's full-text index was not built")

    def stop(self) -> None:
        try:
            _memlite("worker", "stop", env=self.env)
        finally:
            end = time.monotonic() + 20
            while _alive(self.pid) and time.monotonic() < end:
                time.sleep(0.2)
            if _alive(self.pid):
                os.kill(self.pid, signal.SIGKILL)


class Plain(subprocess.Popen):
    """A floor server: a child process stopped by its pid."""

    def stop(self) -> None:
        if self.poll() is None:
            self.terminate()
            try:
                self.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()
                self.wait(10)
