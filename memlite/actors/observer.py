"""The observing session actor: a ``SessionActor`` that feeds its events to a backend.

``ObserverHub`` is what every observing session shares (the storage ref, a reader, the
governor, the backend factory, the health threshold); ``ObservingSession`` is the session
actor the supervisor's ``factory`` builds with it (``hub.factory``).

What one doorbell does (``SessionEvent``; the data is in the database): read the
session's pending events, oldest first, and for each one

* ``Stop``: mark it ``processing``; once every pending event before it is observed, make
  the session's summary and store it with the Stop marked ``done`` in one transaction
  (several Stops pending at once, after a crash, get one summary of the session so far);
* ``SessionEnd`` after a prompt that no Stop followed (a turn interrupted with Esc, then
  ``/exit``): the same as a Stop, so the session's only content, its prompt, still gets
  a summary and reaches the next session; otherwise it is skipped like any other event;
* another event that is not a tool event (prompt, SessionEnd, ...): mark it ``skipped``
  (the summary reads it later);
* rules backend (OBSERVER=rules, no CLI, or today's token budget spent): store the plain
  observation and mark the event done, in one transaction (or ``skipped``: nothing to say);
* Claude backend: mark it ``processing``, ask, store the AI observations with their source
  event ids (``supersedes`` = the event's provisional rules observations) and mark it done
  in one transaction (``StoreObservations``); a replay of an event already observed is a
  no-op, enforced by the database (``storage.observing``).

A ``QuotaPaused`` reply pauses the AI for every session (``Governor.pause``, backoff 1 min,
2, 4 ... 1 h): the session's pending events get provisional rules observations (left
pending), the actor sleeps until the pause ends, then the AI observes them again. Any
other failure drops the conversation (the retry goes to a fresh one) and counts one
failure in a row; after ``max_attempts`` failures on one event the rules observation is
kept as final. ``health_threshold`` failures in a row are recorded on the session row,
which SessionStart context and ``/api/health`` report.

Durable summaries: a Stop is ``done`` only together with its summary (AI or rules). An
actor cut off mid-summary (cancelled, crashed, the worker killed) leaves the Stop
``processing``: the next actor of the session (or the next worker, at start) puts it back
to pending and makes the summary then. A stopping actor (``request_stop``: SessionEnd, idle
reaping, worker shutdown) keeps using the AI for the supervisor's summary wait (20 s after
SessionEnd, 1.5 s at worker shutdown); an AI turn still running then is cut: the summary
is the rules one, and the events not yet observed get a provisional rules observation (for
the context) and stay pending for the AI, which observes them at the next start.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any

import attrs
import trio

from memlite.actors.core import ActorRef
from memlite.actors.graces import AI_CLOSE_SECONDS
from memlite.actors.session import SessionActor, SessionEvent, SessionStatistics
from memlite.actors.storage import (
    SetEventStatus,
    SetObserverHealth,
    SetSdkSessionId,
    StoreObservations,
    StoreSummary,
)
from memlite.errors import ObserverError, ObserverUnavailable
from memlite.observer.backend import (
    OBSERVABLE_EVENTS,
    ObserverBackend,
    QuotaPaused,
    RulesBackend,
)
from memlite.observer.governor import Governor
from memlite.storage import observing, reads
from memlite.storage.records import Event, NewObservation, NewSummary

__all__ = ["ObserverHub", "ObservingSession"]

log = logging.getLogger(__name__)

PAUSE_POLL_SECONDS = 2.0
"""While the AI is paused, how often a session looks for new events to give a provisional
(rules) observation."""

Read = Callable[..., Awaitable[Any]]
"""``await read(fn, *args, **kwargs)`` runs ``fn(conn, *args, **kwargs)`` on a reader."""


@attrs.define(kw_only=True, eq=False)
class ObserverHub:
    """What every observing session shares.

    Attributes:
        storage: the storage actor.
        read: runs a read function on a reader connection.
        governor: concurrency, daily budget, quota backoff.
        make_ai: builds the AI backend of a session, or None (rules only).
        health_threshold: failures in a row that the health line reports.
        max_attempts: failed AI turns on one event before its rules observation is final.
        ask_timeout: seconds a storage ask may take.
        idle_seconds: an unused AI conversation is closed after this (OBSERVER_IDLE_MINUTES).
        failing: session id -> (failures in a row, last error), for ``/api/health``.
        publish: tells live subscribers (the bus: the dashboard's feed) what was stored:
            ``{"type": "observation"|"summary", "id", "sessionId", "project", "at"}``.
    """

    storage: ActorRef
    read: Read
    governor: Governor = attrs.field(factory=Governor)
    make_ai: Callable[[str], ObserverBackend] | None = None
    health_threshold: int = 3
    max_attempts: int = 3
    ask_timeout: float = 30.0
    idle_seconds: float = 300.0
    failing: dict[str, tuple[int, str]] = attrs.field(factory=dict)
    publish: Callable[[dict[str, Any]], None] | None = None

    def factory(self, session_id: str) -> ObservingSession:
        """The ``SessionSupervisor`` factory."""
        return ObservingSession(session_id, hub=self)

    def health_line(self) -> str | None:
        """One line when a session has ``health_threshold`` failures in a row (or the AI
        is paused), else None."""
        bad = [(sid, n, err) for sid, (n, err) in self.failing.items()
               if n >= self.health_threshold]
        if not bad:
            paused = self.governor.paused_for()
            if paused:
                return (f"AI observer paused for {paused:.0f} s more "
                        f"({self.governor.pause_reason}); events stay pending")
            return None
        sid, n, err = bad[-1]
        return (f"AI observer failing: {n} failures in a row for session {sid} ({err}); "
                "events stay pending, rules observations are used meanwhile")

    async def ask(self, make: Callable[[Any], Any]) -> Any:
        return await self.storage.ask(make, timeout=self.ask_timeout)

    async def store_observations(self, found: Sequence[NewObservation], *,
                                 mark_done: bool = True) -> None:
        results = await self.ask(lambda reply: StoreObservations(
            observations=found, mark_done=mark_done, reply=reply))
        for obs, result in zip(found, results or (), strict=False):
            if result.created:
                self._announce("observation", result.id, obs.session_id, obs.project)

    async def store_summary(self, summary: NewSummary, *,
                            done_event_ids: Sequence[int] = ()) -> None:
        """Store the summary and mark ``done_event_ids`` (its Stops) done, atomically."""
        summary_id = await self.ask(lambda reply: StoreSummary(
            summary=summary, done_event_ids=done_event_ids, reply=reply))
        self._announce("summary", summary_id, summary.session_id, summary.project)

    def _announce(self, kind: str, row_id: Any, session_id: str, project: str) -> None:
        if self.publish is None or not isinstance(row_id, int):
            return
        try:
            self.publish({"type": kind, "id": row_id, "sessionId": session_id,
                          "project": project, "at": int(time.time() * 1000)})
        except Exception:  # noqa: BLE001 - live updates are best effort, never a failure
            log.debug("could not publish a %s", kind, exc_info=True)


class ObservingSession(SessionActor):
    """A session actor that observes its session's events (see the module docstring).

    Mailbox:
        As ``SessionActor``: ``SessionEvent`` doorbells; the events are in the database.
    Lifecycle:
        The AI backend (a conversation) is made on first need and closed when the actor
        ends. The first doorbell first requeues this session's ``processing`` events (left
        by an actor that died or was cut off mid-turn; the supervisor never runs two actors
        of one session, so none is another live actor's), so they go to a fresh
        conversation. A Stop is ``processing`` until its summary is stored with it.
    Failure:
        Observer failures never end the actor (see the module docstring); storage errors
        do, and the session's next event starts a fresh actor: nothing is lost, the events
        stay pending.
    Timeouts:
        Each AI turn has the backend's deadline; each storage ask ``hub.ask_timeout``; a
        quota pause sleeps until ``Governor.paused_until`` (cancelled by a stop). An AI
        conversation unused for ``hub.idle_seconds`` is closed by a watcher task. Once
        stopping, AI turns end at ``observe_until`` / ``ai_until`` (summaries), set by
        ``request_stop``; rules from then on. Closing the AI at the end is shielded but
        bounded: by the stop deadline, or ``AI_CLOSE_SECONDS`` once cancelled (its CLI is
        SIGKILLed then).
    """

    def __init__(self, session_id: str, *, hub: ObserverHub, mailbox_size: int = 128) -> None:
        super().__init__(session_id, mailbox_size=mailbox_size)
        self.hub = hub
        self.rules = RulesBackend()
        self.ai: ObserverBackend | None = None
        self.failures = 0
        self.last_error = ""
        self.no_ai = False
        self._nursery: trio.Nursery | None = None
        self.backend_name = "rules" if hub.make_ai is None else "claude"
        self._requeued = False
        self._sdk_session_id: str | None = None
        self._provisioned: set[int] = set()  # events given a rules observation in a pause
        self._ai_scopes: dict[trio.CancelScope, bool] = {}  # AI turns: scope -> summary?

    def request_stop(self, summary_wait: float, *, observe_wait: float | None = None) -> None:
        """Cut the AI turn in progress (and any later one) when its kind's wait is over."""
        super().request_stop(summary_wait, observe_wait=observe_wait)
        for scope, summary in self._ai_scopes.items():
            scope.deadline = min(scope.deadline, self._until(summary))

    @contextlib.contextmanager
    def _bounded(self, *, summary: bool = False) -> Iterator[trio.CancelScope]:
        """A cancel scope around one AI turn, which a stop cuts (see ``_until``)."""
        with trio.CancelScope(deadline=self._until(summary)) as scope:
            self._ai_scopes[scope] = summary
            try:
                yield scope
            finally:
                del self._ai_scopes[scope]

    def _until(self, summary: bool) -> float:
        """When a stopping actor's AI turns of this kind end (inf while not stopping)."""
        return self.ai_until if summary else self.observe_until

    def statistics(self) -> SessionStatistics:
        stats = super().statistics()
        return attrs.evolve(stats, backend=self.backend_name,
                            tokens_used=self.ai.tokens_used if self.ai else 0,
                            observer_failures=self.failures)

    async def run(
        self, *, task_status: trio.TaskStatus[ActorRef] = trio.TASK_STATUS_IGNORED
    ) -> None:
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery  # only for the AI's idle watcher, never passed on
                await super().run(task_status=task_status)
                nursery.cancel_scope.cancel(reason="session actor stopped")
        finally:
            self._nursery = None
            self.hub.failing.pop(self.session_id, None)  # the health line is for live ones
            if self.ai is not None:
                # Shielded, but bounded: by this actor's stop deadline when it has one
                # (the conversation's close fits its kill into it), else AI_CLOSE_SECONDS
                # once it was cancelled; with no deadline, the conversation's own bound.
                deadline = max(trio.current_effective_deadline(),
                               trio.current_time() + AI_CLOSE_SECONDS)
                with trio.CancelScope(shield=True, deadline=deadline):
                    await self.ai.aclose()

    async def handle(self, message: SessionEvent) -> None:
        self.events_seen += 1
        if not self._requeued:
            await self._requeue_own()
        await self.feed()

    # --- observing ----------------------------------------------------------------------

    async def _requeue_own(self) -> None:
        stuck = await self.hub.read(observing.processing_event_ids, self.session_id)
        if stuck:
            await self._set_status(stuck, "pending")
        self._requeued = True

    async def feed(self) -> None:
        """Observe every pending event of the session, oldest first; then, if a Stop was
        among them, store the summary (the Stops ``done`` with it)."""
        stops: list[int] = []
        after = 0  # events left pending (cut off by a stop) are not read again
        while events := await self.hub.read(observing.pending_events_after, self.session_id, after):
            project = await self._project(events[0])
            for index, event in enumerate(events):
                after = event.id
                if event.event_name == "Stop" or (
                        event.event_name == "SessionEnd"
                        and await self.hub.read(observing.prompt_without_stop, self.session_id)):
                    await self._set_status([event.id], "processing")
                    stops.append(event.id)
                    continue
                await self._observe(event, events[index:], project)
        if stops:
            await self.summarize(stops)
        if self.ai is not None:
            await self.ai.idle()

    def _cut_off(self) -> bool:
        """Stopping, past the summary wait, though the AI would otherwise observe."""
        return (trio.current_time() >= self.observe_until and self.hub.make_ai is not None
                and not self.no_ai and self.hub.governor.budget_left())

    def _use_ai(self, *, summary: bool = False) -> bool:
        if (self.hub.make_ai is None or self.no_ai or not self.hub.governor.budget_left()
                or trio.current_time() >= self._until(summary)):
            self.backend_name = "rules"
            return False
        self.backend_name = "claude"
        if self.ai is None:
            self.ai = self.hub.make_ai(self.session_id)
            watch = getattr(self.ai, "close_when_idle", None)
            if watch is not None and self._nursery is not None:
                self._nursery.start_soon(watch, self.hub.idle_seconds,
                                         name=f"observer-idle:{self.session_id}")
        return True

    async def _observe(self, event: Event, rest: Sequence[Event], project: str) -> None:
        if event.event_name not in OBSERVABLE_EVENTS:
            await self._set_status([event.id], "skipped")
            return
        attempts = 0
        while self._use_ai():
            assert self.ai is not None
            if self.hub.governor.paused_for():  # another session hit the quota
                await self._sit_out_pause(rest, project)
                continue
            await self._set_status([event.id], "processing")
            try:
                with self._bounded() as turn:
                    found = await self.ai.observe([event], project=project)
                if turn.cancelled_caught:
                    break
            except QuotaPaused as exc:
                await self._set_status([event.id], "pending")
                self.hub.governor.pause(f"{exc.kind}: {exc}")
                await self._sit_out_pause(rest, project)
                continue
            except ObserverUnavailable as exc:  # no CLI after all: rules from now on
                await self._set_status([event.id], "pending")
                await self._failed(exc)
                self.no_ai = True
                break
            except ObserverError as exc:
                attempts += 1
                await self._failed(exc)
                if attempts < self.hub.max_attempts:
                    continue
                break  # this event gets its rules observation as final
            self.hub.governor.succeeded()
            await self._succeeded()
            await self._note_sdk_session()
            await self._store(event, found, supersede=True)
            return
        if self._cut_off() and attempts < self.hub.max_attempts:
            # The session is stopping: a provisional rules observation for the context;
            # the event stays pending for the AI (the next actor or the next start).
            await self._set_status([event.id], "pending")
            await self._provisional([event], project)
            return
        await self._store(event, await self.rules.observe([event], project=project))

    async def _note_sdk_session(self) -> None:
        """Record the conversation's SDK session id (fire-and-forget) when it changed.

        For diagnosis only: replay never resumes it (pending events go to a fresh one)."""
        sid = getattr(self.ai, "sdk_session_id", None)
        if not sid or sid == self._sdk_session_id:
            return
        self._sdk_session_id = sid
        try:
            await self.hub.storage.send(SetSdkSessionId(session_id=self.session_id,
                                                        sdk_session_id=sid))
        except Exception:  # noqa: BLE001 - a diagnostic: never fails the observation
            log.debug("session %s: could not record the SDK session id", self.session_id,
                      exc_info=True)

    async def _store(self, event: Event, found: list[NewObservation], *,
                     supersede: bool = False) -> None:
        if not found:
            await self._set_status([event.id], "skipped")
            return
        if supersede:
            old = await self.hub.read(observing.observed_by, [event.id], "rules")
            if old:
                found = [attrs.evolve(o, supersedes=(*o.supersedes, *old)) for o in found]
        await self.hub.store_observations(found)

    async def _sit_out_pause(self, rest: Sequence[Event], project: str) -> None:
        """Wait out the AI's pause, giving every pending event of this session a rules
        observation meanwhile, those that arrive during the pause included (it can last an
        hour: the next session's context must not miss them). They stay pending for the AI.
        """
        await self._provisional(rest, project)
        governor = self.hub.governor
        while (left := governor.paused_for()) > 0:
            if (stopping := self.observe_until - trio.current_time()) <= 0:
                return  # the session ended: rules from now on (``_use_ai`` says no)
            with trio.move_on_after(min(left, PAUSE_POLL_SECONDS, stopping)):
                await governor.wait_resumed()
            pending = await self.hub.read(reads.pending_events, session_id=self.session_id,
                                          limit=200)
            await self._provisional(pending, project)

    async def _provisional(self, events: Sequence[Event], project: str) -> None:
        """Rules observations for context while the AI is paused; events stay pending.

        ``_provisioned`` keeps only ids still pending (``events`` are the oldest pending
        ones, so an id dropped here is done and never comes back): it stays within the
        read's limit however long the pause and the conversation.
        """
        self._provisioned &= {event.id for event in events}
        for event in events:
            if event.id in self._provisioned:
                continue
            self._provisioned.add(event.id)
            found = await self.rules.observe([event], project=project)
            if found:
                await self.hub.store_observations(found, mark_done=False)

    async def _failed(self, exc: Exception) -> None:
        self.failures += 1
        self.last_error = f"{type(exc).__name__}: {str(exc)[:200]}"
        log.warning("session %s: observer failure %d in a row: %s", self.session_id,
                    self.failures, self.last_error)
        self.hub.failing[self.session_id] = (self.failures, self.last_error)
        if self.failures == self.hub.health_threshold:
            await self._record_health()

    async def _succeeded(self) -> None:
        was = self.failures
        self.failures = 0
        self.hub.failing.pop(self.session_id, None)
        if was >= self.hub.health_threshold:
            await self._record_health()

    async def _record_health(self) -> None:
        failures, error = self.failures, self.last_error if self.failures else None
        await self.hub.ask(lambda reply: SetObserverHealth(
            session_id=self.session_id, failures=failures, error=error, reply=reply))

    async def _set_status(self, ids: Sequence[int], status: str) -> None:
        await self.hub.ask(lambda reply: SetEventStatus(event_ids=ids, status=status,
                                                        reply=reply))

    async def _project(self, event: Event) -> str:
        session = await self.hub.read(reads.get_session, self.session_id)
        if session is not None and session.project:
            return str(session.project)
        cwd: object = event.data().get("cwd")
        return str(cwd or "") or "unknown"

    # --- the summary --------------------------------------------------------------------

    async def summarize(self, stops: Sequence[int] = ()) -> None:
        """Make the session's summary (the rules one when the AI cannot give it in time)
        and store it with the ``stops`` (Stop event ids) marked done, in one transaction.
        With nothing to summarize the Stops are marked ``skipped``."""
        events = await self.hub.read(observing.session_events, self.session_id)
        summary = None
        if events:
            prompts = [p.prompt_text for p in await self.hub.read(reads.get_prompts,
                                                                    self.session_id)]
            project = await self._project(events[0])
            summary = await self._ai_summary(events, prompts, project)
            if summary is None:
                summary = await self.rules.summarize(events, prompts, project=project,
                                                     session_id=self.session_id)
        if summary is not None:
            await self.hub.store_summary(summary, done_event_ids=stops)
        elif stops:
            await self._set_status(stops, "skipped")

    async def _ai_summary(self, events: Sequence[Event], prompts: list[str],
                          project: str) -> NewSummary | None:
        """The AI's summary, or None (no AI, paused, failed, or cut by a stop)."""
        if not self._use_ai(summary=True) or self.hub.governor.paused_for() > 0:
            return None
        assert self.ai is not None
        summary = None
        try:
            with self._bounded(summary=True) as turn:
                summary = await self.ai.summarize(events, prompts, project=project,
                                                  session_id=self.session_id)
            if turn.cancelled_caught:
                log.warning("session %s: the AI summary was not done within the stop's "
                            "summary wait; the rules summary is stored", self.session_id)
                return None
            await self._note_sdk_session()
        except QuotaPaused as exc:
            self.hub.governor.pause(f"{exc.kind}: {exc}")
        except ObserverError as exc:
            await self._failed(exc)
        return summary

