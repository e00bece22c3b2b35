"""The session supervisor's and session actors' messages and snapshots (split from
``session.py`` to keep it under 500 lines). Import them from ``memlite.actors.session``,
which re-exports every one.
"""

from __future__ import annotations

import attrs

from memlite.actors.core import Reply

__all__ = [
    "CountSessions",
    "Deliver",
    "EndSession",
    "Inbox",
    "ListSessions",
    "ReapIdle",
    "SessionCount",
    "SessionEvent",
    "SessionInfo",
    "SessionStatistics",
    "SupervisorStatistics",
]


# --- the supervisor's messages ------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Deliver:
    """A stored event of ``session_id``: route it to its session actor, creating it."""

    session_id: str
    event_id: int | None
    event_name: str
    tool_name: str | None = None


@attrs.frozen(kw_only=True)
class EndSession:
    """The session ended (SessionEnd): stop its actor once it has finished its mailbox."""

    session_id: str
    reason: str | None = None


@attrs.frozen(kw_only=True)
class ListSessions:
    """Answer: ``list[SessionInfo]`` of the running session actors, oldest first."""

    reply: Reply[list[SessionInfo]]


@attrs.frozen(kw_only=True)
class ReapIdle:
    """Stop the actors idle for ``max_idle_seconds`` or more. Answer: their session ids."""

    max_idle_seconds: float
    reply: Reply[list[str]]


@attrs.frozen(kw_only=True)
class CountSessions:
    """Answer: ``SessionCount`` (for idle shutdown)."""

    reply: Reply[SessionCount]


Inbox = Deliver | EndSession | ListSessions | ReapIdle | CountSessions


@attrs.frozen(kw_only=True)
class SessionInfo:
    """One session actor, as ``/api/debug/sessions`` shows it (times in seconds)."""

    session_id: str
    idle_seconds: float
    uptime_seconds: float
    mailbox_depth: int
    events_seen: int
    observer_pid: int | None = None
    backend: str | None = None
    tokens_used: int = 0
    observer_failures: int = 0


@attrs.frozen(kw_only=True)
class SessionCount:
    """How many session actors exist.

    Attributes:
        active: running and accepting events.
        ending: stopping, finishing their mailbox.
        empty_since: ``trio.current_time()`` when the last one went away (or the
            supervisor started); None while there is any.
    """

    active: int
    ending: int
    empty_since: float | None


@attrs.frozen(kw_only=True)
class SessionEvent:
    """The session actor's one message: an event of its session was stored."""

    event_id: int | None
    event_name: str
    tool_name: str | None = None
    delivered_at: float


@attrs.frozen(kw_only=True)
class SessionStatistics:
    """A snapshot of one session actor (``trio.current_time()`` values)."""

    session_id: str
    started_at: float
    last_active_at: float
    events_seen: int
    mailbox_depth: int
    busy: bool
    observer_pid: int | None
    backend: str | None = None
    tokens_used: int = 0
    observer_failures: int = 0


@attrs.frozen(kw_only=True)
class SupervisorStatistics:
    """Session actors now (active, ending) and since start (started, crashed), doorbells
    that could not be rung (undelivered), and doorbells held until the session's stopping
    actor was gone (deferred)."""

    active: int
    ending: int
    started: int
    crashed: int
    undelivered: int
    deferred: int = 0
