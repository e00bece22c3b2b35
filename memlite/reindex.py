"""``memlite reindex``: embed every observation again, with a progress bar.

The worker's embedder actor does the work (it owns the model, and the storage actor is
the only writer): this command starts the worker if needed, asks it to reindex
(``POST /api/reindex``: the vector table is dropped and recreated for the current model)
and follows ``GET /api/embedder`` until nothing is pending, drawing a bar on stderr (one
line per 10% when stderr is not a terminal). Searches keep working meanwhile: until an
observation has its vector again it is found by full text.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, TextIO

from memlite.errors import WorkerError
from memlite.workerapi import call

__all__ = ["bar", "reindex"]

POLL_SECONDS = 0.25
WIDTH = 30


def bar(done: int, total: int, rate: float | None) -> str:
    """``[#########.....................]  3,001/10,000 vectors  512/s``."""
    filled = WIDTH if total <= 0 else min(WIDTH, WIDTH * done // total)
    speed = f"  {rate:,.0f}/s" if rate else ""
    return f"[{'#' * filled}{'.' * (WIDTH - filled)}] {done:>7,}/{total:,} vectors{speed}"


def _call(port: int, token: str, method: str, path: str) -> tuple[int, Any]:
    status, answer = call(port, token, method, path)
    return status, answer if isinstance(answer, dict) else {}


def reindex(data_dir: Path, *, timeout: float = 20.0, out: TextIO = sys.stderr,
            max_seconds: float | None = None) -> dict[str, Any]:
    """Reindex through the worker of ``data_dir``; returns the embedder's final status.

    Raises:
        WorkerError: the worker cannot start, refuses (no model: the message says why),
            or the embedder fails mid-way; ``max_seconds`` passed.
    """
    from memlite.http.credentials import load_or_create_token
    from memlite.spawn import start_worker

    info = start_worker(data_dir, timeout=timeout).info
    assert info is not None  # start_worker waits for readiness
    token = load_or_create_token(data_dir)
    status, body = _call(info.port, token, "POST", "/api/reindex")
    if status != 202:
        message = body.get("error") if isinstance(body, dict) else None
        raise WorkerError(f"the worker refused to reindex: {message or f'HTTP {status}'}")
    tty = out.isatty()
    started = time.monotonic()
    shown = -1
    while True:
        time.sleep(POLL_SECONDS)
        _, state = _call(info.port, token, "GET", "/api/embedder")
        done, pending = int(state.get("embedded") or 0), int(state.get("pending") or 0)
        total = done + pending
        elapsed = time.monotonic() - started
        line = bar(done, total, done / elapsed if elapsed > 0 else None)
        if tty:
            out.write("\r" + line)
        elif total and done * 10 // total != shown:
            shown = done * 10 // total
            out.write(line + "\n")
        out.flush()
        if state.get("state") == "failed":
            raise WorkerError(f"the embedder failed: {state.get('error')}")
        if state.get("state") == "ready" and pending == 0:
            if tty:
                out.write("\n")
            out.write(f"reindexed {done:,} observations with {state.get('model')} "
                      f"({state.get('dim')} dimensions) in {elapsed:.1f} s\n")
            return dict(state)
        if max_seconds is not None and elapsed > max_seconds:
            raise WorkerError(f"reindex still running after {max_seconds:.0f} s "
                              f"({done:,}/{total:,}); it goes on in the worker")
