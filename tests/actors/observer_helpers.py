"""Helpers for the observing-session tests: a real storage actor and reader, scripted AI."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import attrs
import trio

from memlite.actors.core import spawn
from memlite.actors.observer import ObserverHub
from memlite.actors.session import SessionEvent
from memlite.actors.storage import StartSession, StorageActor, StoreEvent
from memlite.observer.governor import Governor
from memlite.storage import connect
from memlite.storage.db import db_path
from memlite.storage.pool import ReaderPool
from memlite.storage.records import NewObservation

PROJECT = "/work/p"


@asynccontextmanager
async def observing(data_dir, **hub_kw: Any) -> AsyncIterator[ObserverHub]:
    """A storage actor, a reader pool and an ``ObserverHub`` over them."""
    async with spawn(StorageActor(data_dir).run) as storage:
        pool = ReaderPool(db_path(data_dir))

        async def read(fn, *args, **kwargs):
            async with pool.borrow() as conn:
                return await conn.async_run(fn, conn, *args, **kwargs)

        hub_kw.setdefault("governor", Governor())
        try:
            yield ObserverHub(storage=storage, read=read, **hub_kw)
        finally:
            with trio.CancelScope(shield=True):
                await pool.close()


def edit(i: int, session_id: str = "s1") -> StoreEvent:
    payload = {"hook_event_name": "PostToolUse", "session_id": session_id, "cwd": PROJECT,
               "tool_name": "Edit", "tool_use_id": f"toolu_{session_id}_{i}",
               "tool_input": {"file_path": f"{PROJECT}/m{i}.py", "old_string": f"a = {i}",
                              "new_string": f"a = {i + 1}"},
               "tool_response": {"filePath": f"{PROJECT}/m{i}.py"}}
    return StoreEvent(session_id=session_id, event_name="PostToolUse", payload=payload,
                      tool_name="Edit", tool_use_id=f"toolu_{session_id}_{i}")


async def add_events(hub: ObserverHub, count: int, session_id: str = "s1",
                     start: int = 0) -> list[int]:
    await hub.ask(lambda reply: StartSession(session_id=session_id, project=PROJECT,
                                             reply=reply))
    ids = []
    for i in range(start, start + count):
        result = await hub.ask(lambda reply, i=i: attrs.evolve(edit(i, session_id),
                                                               reply=reply))
        ids.append(result.id)
    return ids


def doorbell(name: str = "PostToolUse") -> SessionEvent:
    return SessionEvent(event_id=None, event_name=name, delivered_at=0.0)


def db_rows(data_dir, sql: str, params: Any = ()) -> list[tuple]:
    conn = connect(data_dir, writer=False)
    try:
        return [tuple(r) for r in conn.execute(sql, params)]
    finally:
        conn.close()


class ScriptedAI:
    """An AI backend whose ``observe`` follows a script: an exception to raise, or
    "obs" (one AI observation per event), or "skip"."""

    name = "claude"

    def __init__(self, *script: Any, tokens: int = 0, default: Any = "obs",
                 governor: Governor | None = None) -> None:
        self.script = list(script)
        self.governor = governor
        self.default = default
        self.tokens = tokens
        self.tokens_used = 0
        self.calls: list[tuple[float, tuple[int, ...]]] = []
        self.closed = False

    async def observe(self, events, *, project):
        self.calls.append((trio.current_time(), tuple(e.id for e in events)))
        step = self.script.pop(0) if self.script else self.default
        if isinstance(step, BaseException):
            raise step
        self.tokens_used += self.tokens
        if self.governor is not None:  # as ClaudeBackend does after each turn
            self.governor.spend(self.tokens)
        if step == "skip":
            return []
        return [NewObservation(session_id=e.session_id, project=project, type="change",
                               title=f"AI: edited m{e.id}", source_event_ids=(e.id,),
                               backend="ai") for e in events]

    async def summarize(self, events, prompts, *, project, session_id):
        return None

    async def idle(self):
        return None

    async def aclose(self):
        self.closed = True
