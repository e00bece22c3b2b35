"""A supervisor's bookkeeping for its children (split from ``supervisor.py``; internal).

``Child`` is one child across its incarnations; ``ChildRef`` is the stable ref callers
hold, which follows the child across restarts; ``ChildStatus`` is the ``task_status``
each incarnation reports its ref to.
"""

from __future__ import annotations

import collections
import enum
import math
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import attrs
import trio

from memlite.actors.core import ActorRef, MailboxStatistics, Reply
from memlite.actors.supervisor_events import ChildSpec
from memlite.errors import ActorDied

if TYPE_CHECKING:
    from memlite.actors.supervisor import Supervisor

__all__ = ["Child", "ChildRef", "ChildStatus", "Outcome"]

T = TypeVar("T")


class Outcome(enum.Enum):
    EXITED = "exited"
    CRASHED = "crashed"
    STOPPED = "stopped"


@attrs.define(eq=False)
class Child:
    """The supervisor's bookkeeping for one child, across its incarnations."""

    spec: ChildSpec
    target: ActorRef | None = None  # the running incarnation's own ref
    last_target: ActorRef | None = None
    has_ref: bool | None = None  # unknown until the first start reports
    scope: trio.CancelScope | None = None
    report_to: trio.TaskStatus[None] | None = None  # run() waits for the first start
    nested: Supervisor | None = None  # a child that is itself a Supervisor: stop it so too
    restarts: collections.deque[float] = attrs.Factory(collections.deque)  # escalate=False
    supervised: bool = False
    stopping: bool = False
    grace: float = 0.0  # the grace of the stop in progress (for the log)
    stop_deadline: float = math.inf  # when the stop in progress cancels it
    dynamic: bool = False  # added by ``start_child``: forgotten once it is gone
    gone: bool = False  # ended for good: no incarnation will follow
    changed: trio.Event = attrs.Factory(trio.Event)
    done: trio.Event = attrs.Factory(trio.Event)

    def notify(self) -> None:
        changed, self.changed = self.changed, trio.Event()
        changed.set()


class ChildRef(ActorRef):
    """A ref that follows a supervised child across restarts.

    It owns no mailbox: each call goes to the current incarnation's ref.
    """

    def __init__(self, child: Child) -> None:  # deliberately no super().__init__
        self.name = child.spec.name
        self._child = child

    def _current(self) -> ActorRef:
        target = self._child.target
        if target is None:
            raise ActorDied(f"actor {self.name!r} is not running")
        return target

    async def send(self, message: object) -> None:
        """Deliver ``message``; while the child restarts, wait for the next incarnation."""
        child, dead = self._child, None
        while True:
            target = child.target
            if target is not None and target is not dead:
                try:
                    return await target.send(message)
                except ActorDied:
                    dead = target  # not delivered: retry on the incarnation that follows
            elif child.gone:
                raise ActorDied(f"actor {self.name!r} has stopped")
            else:
                await child.changed.wait()

    def send_nowait(self, message: object) -> None:
        """Deliver ``message`` now, or raise ``MailboxFull`` / ``ActorDied``."""
        self._current().send_nowait(message)

    async def ask(
        self,
        make_message: Callable[[Reply[T]], object],
        *,
        timeout: float,  # noqa: ASYNC109 - the ask pattern's contract: the asker owns it
    ) -> T:
        """Ask the current incarnation; ``ActorDied`` at once while the child is down."""
        return await self._current().ask(make_message, timeout=timeout)

    def statistics(self) -> MailboxStatistics:
        """Statistics of the current (or last) incarnation's mailbox."""
        last = self._child.last_target
        if last is None:
            return MailboxStatistics(name=self.name, queued=0, size=0, blocked_senders=0)
        return attrs.evolve(last.statistics(), name=self.name)

    def _seal(self) -> None:
        pass

    def _close(self) -> None:
        pass

    def __repr__(self) -> str:
        return f"<ActorRef {self.name} (supervised)>"


class ChildStatus:
    """The ``task_status`` one incarnation reports to: ``report(value)`` once."""

    def __init__(self, report: Callable[[object], None]) -> None:
        self._report = report
        self._reported = False

    def started(self, value: object = None) -> None:
        if self._reported:
            raise RuntimeError("task_status.started() called more than once")
        self._reported = True
        self._report(value)
