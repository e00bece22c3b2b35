"""Session actors: one per Claude Code session, under the session supervisor.

A ``SessionActor`` is where everything about one live Claude Code session happens. The
base class counts the events it is told about and keeps its last-activity time; the
observing session (``memlite.actors.observer.ObservingSession``) overrides
``SessionActor.handle`` to feed the session's pending events to its observer. The
events themselves are already durable (the ``events`` table is the queue), so a
``Deliver`` is a doorbell, not the data: a doorbell that cannot be rung (the session's
mailbox is full) loses nothing, the session reads its pending events from the database.

The ``SessionSupervisor`` owns every session actor: it starts one on a session's first
``Deliver``, stops it gracefully on ``EndSession`` or when the reaper finds it idle, and
answers ``ListSessions`` for ``/api/debug/sessions``. It is built on the shared
:class:`~memlite.actors.supervisor.Supervisor`: each session actor is a temporary
dynamic child of it (``start_child``, ``stop_child``), named ``session:<id>``, so the
starting, stopping, cancelling and crash reports are the same code as the root's, and
its lifecycle events are in ``SessionSupervisor.supervisor.events``.

At most one actor per session id, at any moment: a ``Deliver`` that arrives while the
session's actor is stopping does not start a second one (which would requeue the first
one's ``processing`` events and spend AI tokens on them twice); it is held until the
stopping actor is gone, then the session's next actor starts and reads its pending events.

Stopping waits for a summary in progress, within a bound: a stopping actor may use the AI
for ``summary_wait`` more seconds (``SUMMARY_WAIT_SECONDS``, 20 s, on ``EndSession`` and
idle reaping; ``SHUTDOWN_SUMMARY_WAIT_SECONDS``, 1.5 s, when the worker stops); past it
the observing actor stores the rules summary instead (milliseconds), then ends. When the
worker stops, AI observation turns are cut at once (their events stay pending for the
next start): only a summary is worth delaying the exit for.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from functools import partial
from typing import assert_never

import attrs
import trio

from memlite.actors.core import ActorRef, Mailbox
from memlite.actors.session_messages import (
    CountSessions,
    Deliver,
    EndSession,
    Inbox,
    ListSessions,
    ReapIdle,
    SessionCount,
    SessionEvent,
    SessionInfo,
    SessionStatistics,
    SupervisorStatistics,
)
from memlite.actors.supervisor import Supervisor
from memlite.actors.supervisor_events import ChildSpec, Restart
from memlite.errors import ActorDied, ActorError, MailboxFull

__all__ = [
    "SHUTDOWN_SUMMARY_WAIT_SECONDS",
    "SUMMARY_WAIT_SECONDS",
    "CountSessions",
    "Deliver",
    "EndSession",
    "Inbox",
    "ListSessions",
    "ReapIdle",
    "SessionActor",
    "SessionCount",
    "SessionEvent",
    "SessionInfo",
    "SessionStatistics",
    "SessionSupervisor",
    "SupervisorStatistics",
]

log = logging.getLogger(__name__)

SUMMARY_WAIT_SECONDS = 20.0
"""After ``EndSession`` (or idle reaping), seconds a session actor may still spend on an AI
summary (or AI observations before it); past them it stores the rules summary."""
SHUTDOWN_SUMMARY_WAIT_SECONDS = 1.5
"""The same when the worker stops, counted from its signal (it must exit within
``SHUTDOWN_GRACE_SECONDS``, 4 s); AI observation turns are cut at once then."""


# --- the session actor --------------------------------------------------------------------


class SessionActor:
    """The actor of one Claude Code session.

    Mailbox:
        ``mailbox_size`` (default 128) ``SessionEvent`` doorbells. Its supervisor never
        waits on it (``send_nowait``): when it is full the doorbell is dropped and the
        event stays pending in the database.
    Lifecycle:
        Started by the session supervisor on the session's first event. ``run`` reports
        its ref, then handles one message at a time. A stop seals its mailbox: it finishes
        what is queued and returns (graceful); past its grace it is cancelled.
    Failure:
        An exception ends this actor only: the supervisor logs it and forgets the
        session; the session's next event starts a fresh actor (its events wait in the
        database). It never affects other sessions.
    Timeouts:
        The base class waits on nothing; ``request_stop`` tells a subclass how long it
        may still wait on the AI (``ObservingSession`` states its own deadlines).
    """

    def __init__(self, session_id: str, *, mailbox_size: int = 128) -> None:
        self.session_id = session_id
        self.mailbox_size = mailbox_size
        self.events_seen = 0
        self.observer_pid: int | None = None
        self.ai_until = math.inf  # trio time after which a stopping actor asks no summary
        self.observe_until = math.inf  # ... and no observation of the AI
        self._started_at = self._last_active_at = 0.0
        self._busy = False
        self._mailbox: Mailbox | None = None

    def statistics(self) -> SessionStatistics:
        depth = self._mailbox.statistics().queued if self._mailbox is not None else 0
        return SessionStatistics(
            session_id=self.session_id, started_at=self._started_at,
            last_active_at=self._last_active_at, events_seen=self.events_seen,
            mailbox_depth=depth, busy=self._busy, observer_pid=self.observer_pid,
        )

    async def run(
        self, *, task_status: trio.TaskStatus[ActorRef] = trio.TASK_STATUS_IGNORED
    ) -> None:
        with Mailbox(f"session:{self.session_id}", size=self.mailbox_size) as mailbox:
            self._mailbox = mailbox
            self._started_at = self._last_active_at = trio.current_time()
            task_status.started(mailbox.ref)
            async for message in mailbox:
                self._busy = True
                try:
                    await self.handle(message)
                finally:
                    self._busy = False
                    self._last_active_at = trio.current_time()

    def request_stop(self, summary_wait: float, *, observe_wait: float | None = None) -> None:
        """The supervisor is stopping this actor: it may still use the AI for
        ``summary_wait`` seconds for a summary and ``observe_wait`` (default the same) for
        observations; then rules only."""
        now = trio.current_time()
        self.ai_until = min(self.ai_until, now + summary_wait)
        wait = summary_wait if observe_wait is None else observe_wait
        self.observe_until = min(self.observe_until, now + wait)

    async def handle(self, message: SessionEvent) -> None:
        """Handle one message; the observer will feed its conversation from here."""
        match message:
            case SessionEvent():
                self.events_seen += 1
            case _:
                assert_never(message)


# --- the supervisor -----------------------------------------------------------------------


@attrs.define(eq=False)
class _Entry:
    actor: SessionActor
    ref: ActorRef | None = None


def child_name(session_id: str) -> str:
    """The name of a session's actor among the shared supervisor's children."""
    return f"session:{session_id}"


class SessionSupervisor:
    """Starts, routes to, and stops the session actors (temporary children).

    Args:
        factory: builds the actor of a new session (the observer issue passes one that
            gives it an observer; tests pass scripted fakes).
        stop_grace: seconds a stopping session actor gets to finish its mailbox, on top
            of its summary wait.
        summary_wait: seconds a session actor stopped by ``EndSession`` or ``ReapIdle``
            may still spend on the AI (a summary in progress); then rules only.
        shutdown_summary_wait: the same when the supervisor itself stops (the worker is
            stopping).
        shutdown: set when the worker starts stopping (its signal); from then every
            session's AI is cut ``shutdown_summary_wait`` later, without waiting for the
            children stopped before this supervisor.

    Mailbox:
        ``mailbox_size`` (default 256) of ``Deliver``, ``EndSession``, ``ListSessions``,
        ``ReapIdle``, ``CountSessions``. Every message is handled without waiting on a
        session actor, so one busy session never holds up the others.
    Lifecycle:
        Session actors are temporary children of a shared ``Supervisor`` (``supervisor``, a
        fresh one per run) that runs in this actor's nursery. One starts on its session's first
        ``Deliver`` (``start_child``); ``EndSession`` and ``ReapIdle`` stop it gracefully
        (``stop_child``: mailbox sealed; AI cut after ``summary_wait``; cancelled after
        ``summary_wait + stop_grace``). A ``Deliver`` for a session whose actor is stopping is
        held (``deferred``) and rung again once that actor is gone, so a session never has two
        actors. When the supervisor's own mailbox closes it stops every session actor the same
        way (with ``shutdown_summary_wait``), holds no more doorbells, and returns once they are
        gone (the shared supervisor's ordered stop).
    Failure:
        Session actors are temporary: one that raises is logged (``ChildCrashed`` in
        ``supervisor.events``) and removed, never restarted and never a failure of this
        supervisor.
        An error in the supervisor itself cancels its session actors and propagates.
    Timeouts:
        ``summary_wait + stop_grace`` per stopping session actor. Nothing else waits.
    """

    def __init__(self, *, factory: Callable[[str], SessionActor] = SessionActor,
                 stop_grace: float = 5.0, summary_wait: float = SUMMARY_WAIT_SECONDS,
                 shutdown_summary_wait: float = SHUTDOWN_SUMMARY_WAIT_SECONDS,
                 shutdown: trio.Event | None = None, mailbox_size: int = 256) -> None:
        self.factory = factory
        self.stop_grace = stop_grace
        self.summary_wait = summary_wait
        self.shutdown_summary_wait = shutdown_summary_wait
        self.mailbox_size = mailbox_size
        self.crashed = self.started = self.undelivered = self.deferred = 0
        self._live: dict[str, _Entry] = {}
        self._ending: set[_Entry] = set()
        self._held: set[str] = set()  # sessions with a doorbell held for a stopping actor
        self._closing = False
        self._empty_since: float | None = None
        self._nursery: trio.Nursery | None = None
        self.supervisor = Supervisor([], name="sessions", escalate=False)
        self._ref: ActorRef | None = None
        self._shutdown = shutdown
        self._watcher = trio.CancelScope()

    async def run(
        self, *, task_status: trio.TaskStatus[ActorRef] = trio.TASK_STATUS_IGNORED
    ) -> None:
        self._live, self._ending = {}, set()  # a restarted supervisor starts empty
        self._held, self._closing = set(), False
        self._empty_since = trio.current_time()
        self.supervisor = supervisor = Supervisor([], name="sessions", escalate=False)
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            await nursery.start(supervisor.run)
            self._watcher = trio.CancelScope()
            if self._shutdown is not None:
                nursery.start_soon(self._cut_ai_at_shutdown, self._shutdown,
                                   name="sessions:shutdown")
            try:
                with Mailbox("sessions", size=self.mailbox_size) as mailbox:
                    self._ref = mailbox.ref
                    task_status.started(mailbox.ref)
                    async for message in mailbox:
                        await self._handle(message)
            finally:
                self._closing = True  # held doorbells: their events wait in the database
                self._held.clear()
                for session_id in list(self._live):
                    self._stop(session_id, "the worker is stopping",
                               summary_wait=self.shutdown_summary_wait, observe_wait=0.0)
                self._watcher.cancel()
                supervisor.request_stop()  # returns once every session actor is gone

    async def _cut_ai_at_shutdown(self, shutdown: trio.Event) -> None:
        """At the worker's signal: every session may use the AI for
        ``shutdown_summary_wait`` more seconds (then rules), counted from the signal."""
        with self._watcher:
            await shutdown.wait()
            log.info("the worker is stopping: AI summaries end within %.1f s",
                     self.shutdown_summary_wait)
            for entry in [*self._live.values(), *self._ending]:
                entry.actor.request_stop(self.shutdown_summary_wait, observe_wait=0.0)

    async def _handle(self, message: Inbox) -> None:
        match message:
            case Deliver(session_id=session_id):
                await self._deliver(session_id, message)
            case EndSession(session_id=session_id, reason=reason):
                if not self._stop(session_id, f"session ended ({reason or 'no reason'})",
                                  summary_wait=self.summary_wait):
                    log.debug("EndSession for %s, which has no actor", session_id)
            case ListSessions(reply=reply):
                with reply:
                    reply.send_nowait(self._infos())
            case ReapIdle(max_idle_seconds=max_idle, reply=reply):
                reaped = self._reap(max_idle)
                with reply:
                    reply.send_nowait(reaped)
            case CountSessions(reply=reply):
                with reply:
                    reply.send_nowait(SessionCount(active=len(self._live) + len(self._held),
                                                   ending=len(self._ending),
                                                   empty_since=self._empty_since))
            case _:
                assert_never(message)

    async def _deliver(self, session_id: str, message: Deliver) -> None:
        entry = self._live.get(session_id)
        if entry is None and self._stopping(session_id):
            # Never a second actor beside one still stopping: ring again once it is gone.
            if session_id not in self._held:
                self.deferred += 1
                log.info("session %s: its actor is stopping; event %s waits for it",
                         session_id, message.event_id)
            self._held.add(session_id)
            return
        if entry is None:
            entry = await self._spawn(session_id)
            if entry is None:
                return
        assert entry.ref is not None
        event = SessionEvent(event_id=message.event_id, event_name=message.event_name,
                             tool_name=message.tool_name, delivered_at=trio.current_time())
        try:
            entry.ref.send_nowait(event)
        except (MailboxFull, ActorDied) as exc:
            # The event is pending in the database; the session picks it up from there.
            self.undelivered += 1
            log.warning("session %s: event %s not delivered (%s)", session_id,
                        message.event_id, type(exc).__name__)

    async def _spawn(self, session_id: str) -> _Entry | None:
        entry = _Entry(actor=self.factory(session_id))
        if self._shutdown is not None and self._shutdown.is_set():
            entry.actor.request_stop(self.shutdown_summary_wait, observe_wait=0.0)
        self._live[session_id] = entry
        self._empty_since = None
        spec = ChildSpec(name=child_name(session_id), restart=Restart.TEMPORARY,
                         start=partial(self._run_session, session_id, entry),
                         shutdown=self.shutdown_summary_wait + self.stop_grace)
        entry.ref = await self.supervisor.start_child(spec)
        if entry.ref is None:  # it failed before it started (already logged and removed)
            return None
        self.started += 1
        log.info("session %s: actor started", session_id)
        return entry

    async def _run_session(self, session_id: str, entry: _Entry, *,
                           task_status: trio.TaskStatus[ActorRef]) -> None:
        """One session actor, as the shared supervisor's child: its crash is the
        supervisor's to log and record; here the session is only counted and forgotten."""
        try:
            await entry.actor.run(task_status=task_status)
        except Exception:
            self.crashed += 1
            log.info("session %s: its events stay pending for its next actor", session_id)
            raise
        finally:
            self._forget(session_id, entry)

    def _stopping(self, session_id: str) -> bool:
        return any(entry.actor.session_id == session_id for entry in self._ending)

    def _forget(self, session_id: str, entry: _Entry) -> None:
        if self._live.get(session_id) is entry:
            del self._live[session_id]
        self._ending.discard(entry)
        if entry.ref is not None:
            entry.ref._close()  # fail anything still queued for it at once
        if session_id in self._held and not self._stopping(session_id):
            self._held.discard(session_id)
            if not self._closing and self._nursery is not None:
                # Through our own mailbox: only the supervisor's loop starts actors.
                self._nursery.start_soon(self._ring_again, session_id,
                                         name=f"session:{session_id}:again")
        if not self._live and not self._ending and not self._held:
            self._empty_since = trio.current_time()

    async def _ring_again(self, session_id: str) -> None:
        """The held doorbell of a session whose stopping actor is gone: a new actor."""
        assert self._ref is not None
        try:
            await self._ref.send(Deliver(session_id=session_id, event_id=None,
                                         event_name="Resume"))
        except ActorError as exc:  # stopping: the events wait in the database
            log.info("session %s: held event not rung again (%s); it stays pending",
                     session_id, type(exc).__name__)

    def _stop(self, session_id: str, reason: str, *, summary_wait: float,
              observe_wait: float | None = None) -> bool:
        entry = self._live.pop(session_id, None)
        if entry is None:
            return False
        log.info("session %s: stopping its actor: %s", session_id, reason)
        self._ending.add(entry)
        entry.actor.request_stop(summary_wait, observe_wait=observe_wait)
        # Sealed: it finishes what is queued, then its loop ends; cancelled past the grace.
        self.supervisor.stop_child(child_name(session_id),
                                   grace=summary_wait + self.stop_grace)
        return True

    def _infos(self) -> list[SessionInfo]:
        now = trio.current_time()
        infos = []
        for session_id, entry in self._live.items():
            stats = entry.actor.statistics()
            infos.append(SessionInfo(
                session_id=session_id, idle_seconds=now - stats.last_active_at,
                uptime_seconds=now - stats.started_at, mailbox_depth=stats.mailbox_depth,
                events_seen=stats.events_seen, observer_pid=stats.observer_pid,
                backend=stats.backend, tokens_used=stats.tokens_used,
                observer_failures=stats.observer_failures,
            ))
        return infos

    def _reap(self, max_idle: float) -> list[str]:
        now = trio.current_time()
        idle = [
            session_id for session_id, entry in self._live.items()
            if (stats := entry.actor.statistics()).mailbox_depth == 0 and not stats.busy
            and now - stats.last_active_at >= max_idle
        ]
        for session_id in idle:
            self._stop(session_id, f"idle for {max_idle:g} s or more",
                       summary_wait=self.summary_wait)
        return idle

    def statistics(self) -> SupervisorStatistics:
        return SupervisorStatistics(active=len(self._live), ending=len(self._ending),
                                    started=self.started, crashed=self.crashed,
                                    undelivered=self.undelivered, deferred=self.deferred)
