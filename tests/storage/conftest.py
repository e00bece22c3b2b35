"""Fixtures for storage tests: a migrated database in the test's data directory."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import pytest

from memlite import storage


@pytest.fixture(autouse=True)
def no_leaked_db_threads():
    """Fail a test that leaves an async connection's worker thread running.

    APSW's worker threads are not daemons: one leaked connection keeps the process alive.
    """
    yield
    leaked = [t.name for t in threading.enumerate() if t.name.startswith("memlite-db-")]
    assert not leaked, f"database connections left open: {leaked}"


@pytest.fixture
def db(data_dir):
    """A migrated synchronous writer connection on ``data_dir/memlite.db``."""
    conn = storage.connect(data_dir)
    yield conn
    conn.close()


@pytest.fixture
def file_hash():
    """``file_hash(path)``: the SHA-256 of a file's bytes, to prove it was not touched."""

    def digest(path: Path) -> str:
        return hashlib.sha256(path.read_bytes()).hexdigest()

    return digest


@pytest.fixture
def add_observation(db):
    """``add_observation(**fields)``: store one with sensible defaults, return its id."""

    def add(**overrides) -> int:
        fields = {"session_id": "s1", "project": "/repo/a", "type": "discovery", "title": "t"}
        fields.update(overrides)
        return storage.insert_observation(db, storage.NewObservation(**fields)).id

    return add


DAY_MS = 86_400_000


@pytest.fixture
def add(db):
    """``add(title, type, day, **fields)``: store one observation (project ``/repo/a``,
    session ``s1``, ``day`` days after a fixed date), return its id."""

    def store(title: str, type_: str = "decision", day: int = 0, **overrides) -> int:
        fields = {"session_id": "s1", "project": "/repo/a", "type": type_, "title": title,
                  "at_ms": 1_700_000_000_000 + day * DAY_MS}
        fields.update(overrides)
        return storage.insert_observation(db, storage.NewObservation(**fields)).id

    return store


@pytest.fixture
def superseded_by(db):
    """``superseded_by(oid)``: the id that replaced ``oid``, or None."""

    def link(oid: int) -> int | None:
        return db.execute("SELECT superseded_by FROM observations WHERE id = ?",
                          (oid,)).fetchall()[0][0]

    return link


@pytest.fixture
def small_index(monkeypatch):
    """The in-memory vector index for every project, however small (the real threshold is
    thousands of vectors); ``pytest.mark.usefixtures("small_index")`` in a module."""
    from memlite.storage import vector_index

    monkeypatch.setattr(vector_index, "MIN_VECTORS", 1)
    monkeypatch.setattr(vector_index, "CANDIDATES", 60)
    vector_index.reset()
    yield
    vector_index.reset()
