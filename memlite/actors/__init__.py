"""The actor runtime and memlite's actors; see :mod:`memlite.actors.core` for the model."""

from memlite.actors import core
from memlite.actors.core import (
    Actor,
    ActorRef,
    ChildCrashed,
    ChildExited,
    ChildGaveUp,
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

__all__ = core.__all__  # one export list: memlite.actors.core's
