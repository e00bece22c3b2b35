"""A worker started on a large database builds its in-memory full-text index at once, on
a thread of its own (``memlite.storage.bm25_index``), and its vector index likewise
(``memlite.storage.vector_warm``), before any search asks; and says so in its
log."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from functools import partial

import numpy as np
import trio

from memlite import storage
from memlite import tree as root
from memlite.config import load_settings
from memlite.storage import bm25_index, vector_index
from memlite.storage.db import db_path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _building() -> bool:
    return any(t.name == "memlite-bm25-build" for t in threading.enumerate())


async def _worker_until(data_dir, done: Callable[[], bool]) -> None:
    """Run the worker's root on ``data_dir`` until ``done()`` (30 s at most; no search
    is asked for anything), then stop it."""
    shutdown = trio.Event()
    async with trio.open_nursery() as nursery:
        await nursery.start(partial(root.run_root, load_settings(data_dir),
                                    shutdown=shutdown))
        for _ in range(1500):
            if done():
                break
            await trio.sleep(0.02)
        shutdown.set()


async def test_a_worker_on_a_large_database_builds_the_index_at_start(data_dir, monkeypatch,
                                                                      caplog):
    monkeypatch.setenv("MEMLITE_WORKER_PORT", str(_free_port()))
    monkeypatch.setattr(bm25_index, "MIN_ROWS", 20)  # "large": the real one is 2,500
    bm25_index.reset()
    conn = storage.connect(data_dir)
    try:
        with conn:
            for i in range(25):
                storage.insert_observation(conn, storage.NewObservation(
                    session_id="s1", project="/repo/a", type="discovery",
                    title=f"cache parser step {i}", narrative=f"retry number {i}"))
    finally:
        conn.close()
    key = str(db_path(data_dir))
    caplog.set_level("INFO", logger="memlite.storage.bm25_index")
    try:
        await _worker_until(data_dir, lambda: key in bm25_index._INDEXES and not _building())
        index = bm25_index._INDEXES[key]
        assert index.rows == 25
        assert any(bm25_index.BUILT in r.getMessage() for r in caplog.records)
    finally:
        bm25_index.reset()


async def test_a_worker_with_vectors_builds_its_vector_index_at_start(data_dir, monkeypatch,
                                                                      caplog):
    monkeypatch.setenv("MEMLITE_WORKER_PORT", str(_free_port()))
    monkeypatch.setattr(vector_index, "MIN_VECTORS", 20)  # the real one is 4,000
    vector_index.reset()
    rng = np.random.default_rng(3)
    conn = storage.connect(data_dir)
    try:
        storage.ensure_vector_table(conn, 16, "m")
        with conn:
            ids = [storage.insert_observation(conn, storage.NewObservation(
                session_id="s1", project="/repo/a", type="discovery",
                title=f"step {i}")).id for i in range(30)]
            storage.upsert_vectors(conn, [(oid, "/repo/a", rng.standard_normal(16).astype(
                np.float32).tobytes()) for oid in ids])
    finally:
        conn.close()
    key = (str(db_path(data_dir)), None)  # one project: the whole database's index
    caplog.set_level("INFO", logger="memlite.storage.vector_warm")
    try:
        await _worker_until(data_dir, lambda: any(
            "vector index built" in r.getMessage() for r in caplog.records))
        assert vector_index._INDEXES[key].size == 30
        assert any("vector index built for every project" in r.getMessage()
                   for r in caplog.records)
    finally:
        vector_index.reset()
