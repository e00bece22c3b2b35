"""Helpers for tests that need the worker's real actors without the HTTP front.

``running_services(data_dir)`` starts the real storage actor (on the test's data
directory), event bus and session supervisor, and yields the ``Services`` record that
ingestion and the spool drain take. These tests run on the real clock: the storage actor
works in a thread, which an autojump clock would skip over (STYLE #22).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import trio
import trio.testing

from memlite.actors.bus import EventBus, Subscribe
from memlite.actors.core import spawn
from memlite.actors.session import ListSessions, SessionInfo, SessionSupervisor
from memlite.actors.storage import StorageActor
from memlite.config import load_settings
from memlite.services import Services
from memlite.storage import connect
from memlite.storage.db import db_path

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "claude-code" / "v2.1.332" / "hooks"


def fixture(name: str, **changes: Any) -> dict[str, Any]:
    """A captured hook payload (``tests/fixtures``), with ``changes`` applied."""
    payload = json.loads((FIXTURES / f"{name}.json").read_text())
    payload.update(changes)
    return payload


@contextlib.asynccontextmanager
async def running_services(data_dir: Path) -> AsyncIterator[Services]:
    settings = load_settings(data_dir)
    async with (
        spawn(StorageActor(data_dir).run) as storage,
        spawn(EventBus(buffer=1024).run) as bus,
        spawn(SessionSupervisor(stop_grace=1.0).run) as sessions,
    ):
        services = Services(
            settings=settings, data_dir=data_dir, db_path=db_path(data_dir), token="t" * 43,
            version="0.0.0-test", pid=os.getpid(), started_at=trio.current_time(),
            started_at_wall_ms=int(time.time() * 1000), storage=storage, sessions=sessions,
            bus=bus,
        )
        yield services


async def subscribe(services: Services) -> trio.MemoryReceiveChannel[dict[str, Any]]:
    return await services.bus.ask(lambda reply: Subscribe(reply=reply), timeout=5)


async def published(channel: trio.MemoryReceiveChannel[dict[str, Any]]) -> list[dict[str, Any]]:
    """Everything the bus has handed this subscriber so far (once the bus is idle)."""
    await trio.testing.wait_all_tasks_blocked()
    found = []
    while True:
        try:
            found.append(channel.receive_nowait())
        except trio.WouldBlock:
            return found


async def session_actors(services: Services) -> list[SessionInfo]:
    await trio.testing.wait_all_tasks_blocked()
    return await services.sessions.ask(lambda reply: ListSessions(reply=reply), timeout=5)


def query(data_dir: Path, sql: str, params: Any = ()) -> list[tuple[Any, ...]]:
    """Rows from the committed database, read on a separate connection."""
    conn = connect(data_dir, writer=False)
    try:
        return [tuple(row) for row in conn.execute(sql, params)]
    finally:
        conn.close()
