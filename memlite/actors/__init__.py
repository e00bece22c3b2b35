"""The actor runtime and memlite's actors; see :mod:`memlite.actors.core` for the model."""

from memlite.actors.core import (
    Actor,
    ActorRef,
    ChildCrashed,
    ChildExited,
    ChildRestarted,
    ChildSpec,
    ChildStarted,
    ChildStopped,
    LifecycleEvent,
    Mailbox,
    MailboxStatistics,
    Reply,
    Restart,
    Supervisor,
    SupervisorEscalated,
    spawn,
)

__all__ = [
    "Actor",
    "ActorRef",
    "ChildCrashed",
    "ChildExited",
    "ChildRestarted",
    "ChildSpec",
    "ChildStarted",
    "ChildStopped",
    "LifecycleEvent",
    "Mailbox",
    "MailboxStatistics",
    "Reply",
    "Restart",
    "Supervisor",
    "SupervisorEscalated",
    "spawn",
]
