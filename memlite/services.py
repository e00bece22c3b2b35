"""What the worker's parts hand each other: refs to the actors and the worker's own facts.

The root of the worker (``memlite.tree``) builds one ``Services`` before the actors
start, from its supervisor's refs, and passes it to the children that need it, the HTTP
app and ingestion. Nothing in it owns a nursery: the actors live under the supervisor; this
record only holds the refs (stable across restarts) and a few values.

Shared mutable state, all touched only from the Trio thread: ``Activity`` (the HTTP
front touches it on every request, the idle-shutdown actor reads it), ``settings``
(replaced by ``PUT /api/settings``), the ``ObserverHub`` (its ``failing`` map and its
``Governor``: concurrency token, daily budget, pause, shared by every session and the
cleanup review) and ``degraded`` (a view of the optional supervisor's given-up children).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import trio

if TYPE_CHECKING:
    from memlite.actors.core import ActorRef
    from memlite.config import Settings

__all__ = ["Activity", "Services"]


@attrs.define
class Activity:
    """When the worker last did something for someone (Trio time), for idle shutdown."""

    last_request_at: float = 0.0
    requests: int = 0

    def touch(self) -> None:
        self.last_request_at = trio.current_time()
        self.requests += 1


@attrs.define(kw_only=True)
class Services:
    """Refs and facts the HTTP app, ingestion and the actors share.

    Attributes:
        settings: validated settings (re-read by ``PUT /api/settings``, see ``replace``).
        data_dir: the data directory (``memlite.db``, token, spool, logs live there).
        db_path: the database file.
        token: the install's API token (never logged, never returned by the API).
        version: memlite's version, as the pid file says.
        pid: the worker's pid.
        started_at: ``trio.current_time()`` at start (uptime in /api/debug/sessions).
        started_at_wall_ms: wall clock at start, epoch ms (for display only).
        storage: the storage actor (the only writer).
        sessions: the session supervisor actor (one session actor per Claude session).
        bus: the event bus (SSE fan-out).
        embedder: the embedder actor (query vectors, reindex); None outside a worker.
        degraded: optional children given up for failing too often (name -> last
            error), for /api/health and ``memlite doctor``; the worker runs on without.
        activity: last request time, for idle shutdown.
        observer: the observing sessions' shared hub (None outside a worker).
        ready: set once the database is open and migrated and the spool was drained.
        shutdown: set to ask the whole worker to stop (idle shutdown, signals).
    """

    settings: Settings
    data_dir: Path
    db_path: Path
    token: str
    version: str
    pid: int
    started_at: float
    started_at_wall_ms: int
    storage: ActorRef
    sessions: ActorRef
    bus: ActorRef
    embedder: ActorRef | None = None
    degraded: Callable[[], dict[str, str]] = attrs.field(default=dict)
    activity: Activity = attrs.field(factory=Activity)
    observer: Any = None  # memlite.actors.observer.ObserverHub (health, token counts)
    ready: trio.Event = attrs.field(factory=trio.Event)
    shutdown: trio.Event = attrs.field(factory=trio.Event)
