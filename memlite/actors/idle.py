"""Idle shutdown: the worker exits by itself when nobody has needed it for a while.

The worker is started on demand by the first hook, so it should not linger: with no
session actor and no API request for IDLE_SHUTDOWN_MINUTES it sets ``shutdown`` and the
root stops everything cleanly (the process exits 0). The next hook starts a new one.

"Quiet since" is the latest of: the actor's start, the last API request
(``Activity.last_request_at``, touched by the HTTP front), the last ``Touch``, and the
moment the last session actor went away. All times are ``trio.current_time()``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import assert_never

import attrs
import trio

from memlite.actors.core import ActorRef, Mailbox, Reply
from memlite.actors.session import CountSessions
from memlite.actors.session_messages import SessionCount
from memlite.errors import ActorError
from memlite.services import Activity

__all__ = [
    "GetIdleStatus",
    "IdleShutdown",
    "IdleStatus",
    "Inbox",
    "RECHECK_SECONDS",
]

log = logging.getLogger(__name__)

RECHECK_SECONDS = 60.0
ASK_TIMEOUT = 5.0


@attrs.frozen(kw_only=True)
class Touch:
    """Something happened that is not an HTTP request: restart the countdown now.

    Test-only: not in ``__all__`` (the worker counts requests through ``Activity``)."""


@attrs.frozen(kw_only=True)
class GetIdleStatus:
    """Answer: ``IdleStatus``."""

    reply: Reply[IdleStatus]


Inbox = Touch | GetIdleStatus


@attrs.frozen(kw_only=True)
class IdleStatus:
    """When the actor will look again (``deadline``) and what it knows (Trio times)."""

    deadline: float
    quiet_since: float
    idle_seconds: float


class IdleShutdown:
    """Sets ``shutdown`` after ``idle_seconds`` with no session actor and no request.

    Args:
        sessions: the session supervisor (asked ``CountSessions``).
        activity: the HTTP front's request clock.
        shutdown: the event that stops the worker.
        idle_seconds: read at every check, so a settings change applies at the next one
            (the root passes ``IDLE_SHUTDOWN_MINUTES * 60`` from the live settings).
        recheck: while session actors exist, look again this often (60 s).

    Mailbox:
        ``Touch`` and ``GetIdleStatus`` (size 8), both handled at once.
    Lifecycle:
        ``run`` reports its ref and waits in one entered timer scope whose deadline is
        the earliest moment the worker could be idle enough; ``Touch`` moves that
        deadline. When it passes, the actor looks before it leaps: requests or sessions
        since then move the deadline and it waits again; otherwise it sets ``shutdown``
        and returns (a normal exit: run it as a transient child). A closed mailbox also
        ends it.
    Failure:
        A failed ``CountSessions`` ask counts as "busy": it looks again after
        ``recheck``. Never shutting down by mistake beats exiting under a live session.
    Timeouts:
        ``ASK_TIMEOUT`` (5 s) per ask; the idle threshold itself.
    """

    def __init__(self, sessions: ActorRef, activity: Activity, shutdown: trio.Event, *,
                 idle_seconds: Callable[[], float], recheck: float = RECHECK_SECONDS) -> None:
        self.sessions = sessions
        self.activity = activity
        self.shutdown = shutdown
        self.idle_seconds = idle_seconds
        self.recheck = recheck
        self._quiet_since = self._deadline = 0.0

    async def run(
        self, *, task_status: trio.TaskStatus[ActorRef] = trio.TASK_STATUS_IGNORED
    ) -> None:
        with Mailbox("idle", size=8) as mailbox:
            self._quiet_since = trio.current_time()
            self._deadline = self._quiet_since + self.idle_seconds()
            task_status.started(mailbox.ref)
            while True:
                with trio.move_on_at(self._deadline) as timer:
                    async for message in mailbox:
                        self._handle(message, timer)
                    return  # the mailbox closed: stopped
                if await self._idle_enough():
                    minutes = self.idle_seconds() / 60
                    log.info("idle for %g min (no session, no request): shutting down", minutes)
                    self.shutdown.set()
                    return

    def _handle(self, message: Inbox, timer: trio.CancelScope) -> None:
        match message:
            case Touch():
                self._quiet_since = trio.current_time()
                self._deadline = self._quiet_since + self.idle_seconds()
                timer.deadline = self._deadline  # reset: move the entered scope's deadline
            case GetIdleStatus(reply=reply):
                with reply:
                    reply.send_nowait(IdleStatus(deadline=self._deadline,
                                                 quiet_since=self._quiet_since,
                                                 idle_seconds=self.idle_seconds()))
            case _:
                assert_never(message)

    async def _idle_enough(self) -> bool:
        """At the deadline: True if still idle; else set the next deadline."""
        try:
            count: SessionCount = await self.sessions.ask(
                lambda reply: CountSessions(reply=reply), timeout=ASK_TIMEOUT)
        except ActorError as exc:
            now = trio.current_time()
            log.warning("idle shutdown: cannot count sessions (%s); looking again later", exc)
            self._deadline = now + self.recheck
            return False
        now = trio.current_time()
        if count.active or count.ending or count.empty_since is None:
            self._deadline = now + self.recheck
            return False
        self._quiet_since = max(self._quiet_since, self.activity.last_request_at,
                                count.empty_since)
        self._deadline = self._quiet_since + self.idle_seconds()
        return self._deadline <= now
