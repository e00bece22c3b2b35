"""The root of the worker's task tree: one supervisor over every actor and the HTTP front.

The composition root: it lives outside ``memlite/actors/`` because it wires the actors
to the web layer (Hypercorn, the Quart app); no actor imports it or any web code
(``tests/actors/test_layering.py``).

The contract of :func:`run_root` (all ``memlite/worker.py`` relies on)
    * Serve HTTP on 127.0.0.1:``settings.worker_port`` (never another address).
    * Call ``task_status.started(port)`` once requests are being answered.
    * Return after ``shutdown`` is set and everything has stopped cleanly, or return on
      its own (idle shutdown); the worker then exits 0 and removes its pid file.
    * Raise ``OSError`` (``EADDRINUSE``) if the port is taken, before touching anything.

Start order (the root ``Supervisor`` starts its children in this order, each once the
previous one reported it was up)::

    bind 127.0.0.1:port  (fails fast if taken; connections queue until we serve)
    storage    open memlite.db: checks, WAL, migrations          permanent
    snapshots  per-project context snapshots for a SessionStart   permanent
               the worker cannot answer (stopped after every
               writer but storage, so its last round sees all)
    bus        event fan-out for SSE                              permanent
    sessions   session supervisor (one actor per Claude session)  permanent
               its session actors are temporary children of a
               ``Supervisor`` of its own (the same class as this root's)
    optional   supervisor of the parts the worker can do without,   temporary
               each with its own restart budget (3 in 60 s), given
               up alone past it (``degraded`` in /api/health):
        reaper     every 60 s: stop idle session actors           permanent
        pruner     every hour: prune old event payloads, vacuum    permanent
        embedder   loads the model on a thread; vectors for new observations  permanent
        idle       no sessions, no requests: set shutdown         transient
        heap       a burst of requests over: trim the heap once    permanent
    spool      drain the hook spool, set ``ready``, then drain it   permanent
               every few seconds while the worker runs (``spooler.py``); once
               ready, start building the large database's in-memory indexes,
               each on a thread of its own: the full-text copy and the vector
               indexes, so that no search after a start builds them itself
    http       Hypercorn serving ``create_app(services)``; then asks the spooler for
               one more drain (events spooled while it was starting)  transient

Stop order: ``shutdown`` is set (a signal relayed from the worker, or the idle actor).
At once every session's AI is given ``SHUTDOWN_SUMMARY_WAIT_SECONDS`` (1.5 s) more: a
summary in progress that is not done by then is replaced by the rules summary.
Hypercorn stops accepting at once and gives open requests ``GRACEFUL_TIMEOUT`` (0.5 s);
SSE streams end by themselves on ``shutdown``. Then the supervisor stops the children in
reverse: the storage actor last, so every write already accepted is committed, then the
database is closed. Finally the reader pool is closed. Each child has a grace (its
``ChildSpec.shutdown``) before it is cancelled; the graces add up to ``ROOT_STOP``
(4.5 s), after which the worker cancels the root in any case: see the table in
``memlite.actors.graces``.

Failure: the root's children (storage, snapshots, bus, sessions, spool, http) are
restarted one-for-one (at most 3 restarts in 5 s, else the supervisor escalates and
``run_root`` raises: the worker exits non-zero with the reason in its log). A database
that cannot be opened therefore fails the start. The optional children never escalate.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import trio
from hypercorn.config import Config
from hypercorn.trio import serve

from memlite.actors.bus import EventBus
from memlite.actors.core import ActorRef, ChildSpec, Restart, Supervisor, lone_error
from memlite.actors.embedder import EmbedderActor
from memlite.actors.graces import (
    BUS_GRACE,
    GRACEFUL_TIMEOUT,
    HTTP_GRACE,
    OPTIONAL_CHILD_GRACE,
    OPTIONAL_GRACE,
    SESSION_STOP_GRACE,
    SESSIONS_GRACE,
    SNAPSHOTS_GRACE,
    SPOOL_GRACE,
    STORAGE_GRACE,
)
from memlite.actors.heap_keeper import HeapKeeper
from memlite.actors.idle import IdleShutdown
from memlite.actors.observer import ObserverHub
from memlite.actors.pruner import Pruner
from memlite.actors.reaper import Reaper
from memlite.actors.session import Deliver, SessionSupervisor
from memlite.actors.snapshots import Snapshotter
from memlite.actors.spooler import DrainNow, Spooler
from memlite.actors.storage import RequeueProcessingEvents, StorageActor
from memlite.config import Settings
from memlite.errors import ActorError, RestartIntensityExceeded
from memlite.http import create_app, load_or_create_token
from memlite.ingest import publish
from memlite.lifecycle import HOST, worker_version
from memlite.observer.backend import choose_backend, claude_factory
from memlite.observer.governor import Governor
from memlite.observer.registry import reap_with_retry
from memlite.services import Services
from memlite.storage import bm25_index, vector_warm
from memlite.storage.db import db_path
from memlite.storage.pool import ReaderPool

__all__ = ["GRACEFUL_TIMEOUT", "WorkerTree", "run_root"]

log = logging.getLogger(__name__)

T = TypeVar("T")

OPTIONAL_INTENSITY = 3
OPTIONAL_PERIOD = 60.0
"""Each optional child may restart 3 times in 60 s; one more and it is given up."""
BACKLOG = 128


def listen(port: int) -> socket.socket:
    """Bind and listen on 127.0.0.1:``port`` now, so a taken port fails before anything.

    Raises:
        OSError: ``EADDRINUSE`` (another program has the port), or another bind error.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Hypercorn does
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((HOST, port))
        sock.listen(BACKLOG)
    except BaseException:
        sock.close()
        raise
    return sock


class WorkerTree:
    """The worker's supervisor, its ``Services`` and the start functions of its children.

    Built before anything runs: ``Supervisor.ref(name)`` gives stable refs up front, so
    ``services`` can be handed to every child that needs it.
    """

    def __init__(self, settings: Settings, *, token: str, listener: socket.socket) -> None:
        self.listener = listener
        self.port: int = listener.getsockname()[1]
        data_dir = settings.data_dir
        self.optional = Supervisor([
            ChildSpec(name="reaper", start=self._run_reaper, shutdown=OPTIONAL_CHILD_GRACE),
            ChildSpec(name="pruner", start=self._run_pruner, shutdown=OPTIONAL_CHILD_GRACE),
            ChildSpec(name="embedder", start=self._run_embedder, shutdown=OPTIONAL_CHILD_GRACE),
            ChildSpec(name="idle", start=self._run_idle, restart=Restart.TRANSIENT,
                      shutdown=OPTIONAL_CHILD_GRACE),
            ChildSpec(name="heap", start=self._run_heap, shutdown=OPTIONAL_CHILD_GRACE),
        ], name="optional", escalate=False, intensity=OPTIONAL_INTENSITY,
            period=OPTIONAL_PERIOD)
        self.supervisor = Supervisor([
            # Graces: memlite.actors.graces, one table that adds up to the worker's cap.
            ChildSpec(name="storage", start=StorageActor(data_dir).run,
                      shutdown=STORAGE_GRACE),
            ChildSpec(name="snapshots", start=self._run_snapshots, shutdown=SNAPSHOTS_GRACE),
            ChildSpec(name="bus", start=self._run_bus, shutdown=BUS_GRACE),
            ChildSpec(name="sessions", start=self._run_sessions, shutdown=SESSIONS_GRACE),
            # The children the worker can do without, under their own supervisor with a
            # budget per child: one that keeps failing is given up (and reported in
            # /api/health and `memlite doctor`), never escalating to storage or HTTP.
            ChildSpec(name="optional", start=self.optional.run, restart=Restart.TEMPORARY,
                      shutdown=OPTIONAL_GRACE),
            ChildSpec(name="spool", start=self._run_spooler, shutdown=SPOOL_GRACE),
            ChildSpec(name="http", start=self._serve_http, restart=Restart.TRANSIENT,
                      shutdown=HTTP_GRACE),
        ], name="root")
        self.services = Services(
            settings=settings, data_dir=data_dir, db_path=db_path(data_dir), token=token,
            version=worker_version(), pid=os.getpid(), started_at=trio.current_time(),
            started_at_wall_ms=int(time.time() * 1000),
            storage=self.supervisor.ref("storage"), sessions=self.supervisor.ref("sessions"),
            bus=self.supervisor.ref("bus"), embedder=self.optional.ref("embedder"),
            degraded=lambda: dict(self.optional.given_up),
        )
        self.readers = ReaderPool(self.services.db_path)
        bm25_index.allow_builds()  # a large database's full-text index, on a thread
        governor = Governor(concurrency=settings["OBSERVER_CONCURRENCY"],
                            daily_tokens=settings["OBSERVER_DAILY_TOKENS"])
        backend = choose_backend(settings["OBSERVER"])
        log.info("observer backend: %s (OBSERVER=%s)", backend, settings["OBSERVER"])
        self.services.observer = ObserverHub(
            storage=self.services.storage, read=self._read, governor=governor,
            make_ai=claude_factory(settings, governor) if backend == "claude" else None,
            idle_seconds=settings["OBSERVER_IDLE_MINUTES"] * 60,
            publish=partial(publish, self.services))

    async def _read(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        async with self.readers.borrow() as conn:
            result: T = await conn.async_run(  # type: ignore[attr-defined]
                fn, conn, *args, **kwargs)
            return result

    # Each start function builds a fresh actor, so a restarted child starts clean.

    async def _run_snapshots(self, *, task_status: trio.TaskStatus[ActorRef]) -> None:
        services = self.services
        await Snapshotter(services.data_dir, self._read, lambda: services.settings,
                          bus=services.bus).run(task_status=task_status)

    async def _run_bus(self, *, task_status: trio.TaskStatus[ActorRef]) -> None:
        await EventBus().run(task_status=task_status)

    async def _run_sessions(self, *, task_status: trio.TaskStatus[ActorRef]) -> None:
        # Durable replay: observer processes of a dead worker are killed, and events it
        # left ``processing`` go back to pending, for fresh conversations. Reaping never
        # raises (an error is logged and retried): it must not crash-loop this child.
        killed = await trio.to_thread.run_sync(reap_with_retry, self.services.data_dir)
        if killed:
            log.warning("killed %d observer processes left by a previous worker", len(killed))
        requeued: int = await self.services.storage.ask(
            lambda reply: RequeueProcessingEvents(reply=reply), timeout=30)
        if requeued:
            log.info("requeued %d events left processing by a previous worker", requeued)
        await SessionSupervisor(factory=self.services.observer.factory,
                                stop_grace=SESSION_STOP_GRACE,
                                shutdown=self.services.shutdown).run(task_status=task_status)

    async def _run_pruner(self, *, task_status: trio.TaskStatus[ActorRef]) -> None:
        settings = self.services.settings
        pruner = Pruner(self.services.storage,
                        retention_days=lambda: settings["EVENT_RETENTION_DAYS"])
        await pruner.run(task_status=task_status)

    async def _run_embedder(self, *, task_status: trio.TaskStatus[ActorRef]) -> None:
        from memlite.embed import load_embedder

        settings = self.services.settings
        load = partial(load_embedder, settings["EMBEDDER"], ollama_url=settings["OLLAMA_URL"],
                       ollama_model=settings["OLLAMA_MODEL"], data_dir=settings.data_dir)
        await EmbedderActor(self.services.storage, self.services.db_path, load=load).run(
            task_status=task_status)

    async def _run_reaper(self, *, task_status: trio.TaskStatus[ActorRef]) -> None:
        services = self.services
        reaper = Reaper(services.sessions,
                        max_idle_seconds=lambda: services.settings.session_idle_minutes * 60)
        await reaper.run(task_status=task_status)

    async def _run_idle(self, *, task_status: trio.TaskStatus[ActorRef]) -> None:
        services = self.services
        idle = IdleShutdown(services.sessions, services.activity, services.shutdown,
                            idle_seconds=lambda: services.settings.idle_shutdown_minutes * 60)
        await idle.run(task_status=task_status)

    async def _run_heap(self, *, task_status: trio.TaskStatus[ActorRef]) -> None:
        await HeapKeeper(self.services.activity).run(task_status=task_status)

    async def _run_spooler(self, *, task_status: trio.TaskStatus[ActorRef]) -> None:
        """Drain the spool, declare readiness (the database is open and caught up), ring
        the sessions with pending events, then keep draining while the worker runs."""

        async def ready() -> None:
            self.services.ready.set()

        await Spooler(self.services, on_ready=ready, after_start=self._after_start).run(
            task_status=task_status)

    async def _after_start(self) -> None:
        await self._resume_pending()
        try:  # a large database's in-memory full-text index, built on a thread of its own
            await self._read(bm25_index.build_soon)
        except Exception:
            log.exception("the full-text index build was not started; the first search "
                          "starts it")
        try:  # and its vector indexes, likewise: not inside the first search
            await self._read(vector_warm.warm_soon)
        except Exception:
            log.exception("the vector indexes' build was not started; the first search "
                          "builds them")

    async def _resume_pending(self) -> None:
        """Ring each session that has pending events, so they are observed now."""
        try:
            sessions = await self._read(_sessions_with_pending)
            for session_id in sessions:
                await self.services.sessions.send(Deliver(
                    session_id=session_id, event_id=None, event_name="Resume"))
        except Exception:
            log.exception("could not resume pending events; the next event of each "
                          "session will")

    async def _serve_http(self, *, task_status: trio.TaskStatus[None]) -> None:
        config = Config()
        # Hypercorn takes ownership of the fd it is given: hand it a duplicate, so a
        # restarted front can serve the same listening socket again.
        config.bind = [f"fd://{os.dup(self.listener.fileno())}"]
        config.accesslog = None
        config.errorlog = log
        config.graceful_timeout = GRACEFUL_TIMEOUT
        app = create_app(self.services, readers=self.readers, port=self.port)
        async with trio.open_nursery() as nursery:
            await nursery.start(partial(serve, app, config,
                                        shutdown_trigger=self.services.shutdown.wait))
            task_status.started()
            try:  # events spooled while the worker was starting
                self.supervisor.ref("spool").send_nowait(DrainNow())
            except ActorError as exc:
                log.warning("late spool drain not requested (%s); the next periodic "
                            "drain takes them", exc)


def _sessions_with_pending(conn, limit: int = 1000) -> list[str]:  # type: ignore[no-untyped-def]
    rows = conn.execute("SELECT DISTINCT session_id FROM events WHERE status = 'pending' "
                        "LIMIT ?", (limit,)).fetchall()
    return [str(r[0]) for r in rows]


async def _relay(source: trio.Event, target: trio.Event) -> None:
    await source.wait()
    target.set()


async def run_root(settings: Settings, *, shutdown: trio.Event,
                   task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
    """Run the whole tree until ``shutdown`` (or idle); see the module docstring."""
    with listen(settings.worker_port) as listener:
        token = await trio.to_thread.run_sync(load_or_create_token, settings.data_dir)
        tree = WorkerTree(settings, token=token, listener=listener)
        services = tree.services
        started = False
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_relay, shutdown, services.shutdown, name="root:relay")
                await nursery.start(tree.supervisor.run, name="root:supervisor")
                log.info("serving on http://%s:%d/", HOST, tree.port)
                started = True
                task_status.started(tree.port)
                await services.shutdown.wait()
                log.info("stopping: %s", "signal" if shutdown.is_set() else "idle")
                await tree.supervisor.stop()
                nursery.cancel_scope.cancel(reason="the supervisor stopped")
        except BaseExceptionGroup as group:
            raise _one_error(group, started=started) from None
        finally:
            with trio.CancelScope(shield=True):
                await tree.readers.close()


def _one_error(group: BaseExceptionGroup[BaseException], *, started: bool) -> BaseException:
    """The error to raise for a failed tree: the lone error, not a group of one.

    A child that kept failing while the worker was starting (a database that cannot be
    opened) escalates as ``RestartIntensityExceeded``; the person starting the worker
    needs its cause (e.g. ``NotADatabaseError``, which says what to do), so that is raised.
    """
    error = lone_error(group)
    if error is group:
        return group
    if isinstance(error, RestartIntensityExceeded) and not started and error.__cause__:
        return error.__cause__
    return error
