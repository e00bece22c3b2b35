"""What a supervisor is told and what it records: child specs, restart policies and the
lifecycle events (split from ``supervisor.py``, which re-exports every name here).

A :class:`ChildSpec` says how to run one child; the ``Child*`` events are what a
:class:`~memlite.actors.supervisor.Supervisor` appends to its ``events`` (an
:class:`EventLog` of the newest ``EVENTS_KEPT``) as its children start, end and restart.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from typing import Literal

import attrs

__all__ = [
    "EVENTS_KEPT",
    "ChildCrashed",
    "ChildExited",
    "ChildGaveUp",
    "ChildRestarted",
    "ChildSpec",
    "ChildStarted",
    "ChildStopped",
    "EventLog",
    "LifecycleEvent",
    "Restart",
    "SupervisorEscalated",
]


class Restart(enum.Enum):
    """When a child that ended starts again: always, only after a crash, or never."""

    PERMANENT = "permanent"
    TRANSIENT = "transient"
    TEMPORARY = "temporary"


@attrs.frozen(kw_only=True)
class ChildSpec:
    """How to run one child.

    Attributes:
        name: Unique among the supervisor's children; the name of its stable ref.
        start: An async function accepting ``task_status=``, e.g. ``actor.run``. It is
            called again on each restart, so pass a factory when every incarnation
            needs fresh state. It should report ``task_status.started(mailbox.ref)``.
        restart: The restart policy.
        shutdown: Seconds a stopping child gets to finish on its own (its mailbox
            is sealed, its scope's deadline moved) before it is cancelled.
    """

    name: str
    start: Callable[..., Awaitable[object]]
    restart: Restart = Restart.PERMANENT
    shutdown: float = attrs.field(default=5.0, validator=attrs.validators.ge(0))


@attrs.frozen(kw_only=True)
class ChildStarted:
    """The child reported ``task_status.started``; ``attempt`` counts from 1."""

    name: str
    attempt: int
    at: float


@attrs.frozen(kw_only=True)
class ChildExited:
    """The child returned without being asked to stop."""

    name: str
    at: float


@attrs.frozen(kw_only=True)
class ChildCrashed:
    """The child raised; ``error`` is ``"Type: message"``."""

    name: str
    at: float
    error: str


@attrs.frozen(kw_only=True)
class ChildRestarted:
    """The supervisor is starting incarnation ``attempt`` of the child."""

    name: str
    attempt: int
    at: float


@attrs.frozen(kw_only=True)
class ChildStopped:
    """The child ended after a stop: by itself within its grace, or cancelled."""

    name: str
    at: float
    how: Literal["graceful", "cancelled"]


@attrs.frozen(kw_only=True)
class SupervisorEscalated:
    """The supervisor ``name`` gave up: too many restarts. It stops and raises."""

    name: str
    at: float
    error: str


@attrs.frozen(kw_only=True)
class ChildGaveUp:
    """A supervisor that does not escalate (``escalate=False``) gave up on child ``name``:
    it spent its own restart budget. It stays down; its siblings run on."""

    name: str
    at: float
    error: str


LifecycleEvent = (
    ChildStarted | ChildExited | ChildCrashed | ChildRestarted | ChildStopped
    | SupervisorEscalated | ChildGaveUp
)


EVENTS_KEPT = 256
"""Lifecycle events a supervisor keeps: the newest ones (a crash loop of a week-long
worker must not grow a list forever). ``events_dropped`` counts the older ones."""


class EventLog(list[LifecycleEvent]):
    """A list of the newest ``cap`` lifecycle events; older ones are dropped.

    A list (not a deque) so it compares and slices as one: ``sup.events[-2:]``.
    """

    def __init__(self, cap: int = EVENTS_KEPT) -> None:
        super().__init__()
        self.cap = cap
        self.dropped = 0

    def append(self, event: LifecycleEvent) -> None:
        super().append(event)
        over = len(self) - self.cap
        if over > 0:
            del self[:over]
            self.dropped += over


