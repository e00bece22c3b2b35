"""One-for-one supervision in OTP's words: child specs, restart intensity, ordered stop.

A :class:`Supervisor` owns the only nursery its children run in. It starts them in
order, restarts each one on its own when it ends (according to its
:class:`Restart` policy), and stops them in reverse order. Callers reach a child
through ``sup.ref(name)``, a ref that survives the child's restarts.

Import these names from :mod:`memlite.actors.core`, which re-exports them.
"""

from __future__ import annotations

import collections
import enum
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Literal, TypeVar

import attrs
import trio

from memlite.actors.core import ActorRef, MailboxStatistics, Reply
from memlite.errors import ActorDied, RestartIntensityExceeded

__all__ = [
    "ChildCrashed",
    "ChildExited",
    "ChildGaveUp",
    "ChildRestarted",
    "ChildSpec",
    "ChildStarted",
    "ChildStopped",
    "LifecycleEvent",
    "Restart",
    "Supervisor",
    "SupervisorEscalated",
]

log = logging.getLogger(__name__)

T = TypeVar("T")


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


class _Outcome(enum.Enum):
    EXITED = "exited"
    CRASHED = "crashed"
    STOPPED = "stopped"


@attrs.define(eq=False)
class _Child:
    """The supervisor's bookkeeping for one child, across its incarnations."""

    spec: ChildSpec
    target: ActorRef | None = None  # the running incarnation's own ref
    last_target: ActorRef | None = None
    has_ref: bool | None = None  # unknown until the first start reports
    scope: trio.CancelScope | None = None
    report_to: trio.TaskStatus[None] | None = None  # run() waits for the first start
    nested: Supervisor | None = None  # a child that is itself a Supervisor: stop it so
    restarts: collections.deque[float] = attrs.Factory(collections.deque)  # escalate=False
    supervised: bool = False
    stopping: bool = False
    gone: bool = False  # ended for good: no incarnation will follow
    changed: trio.Event = attrs.Factory(trio.Event)
    done: trio.Event = attrs.Factory(trio.Event)

    def notify(self) -> None:
        changed, self.changed = self.changed, trio.Event()
        changed.set()


class _ChildRef(ActorRef):
    """A ref that follows a supervised child across restarts.

    It owns no mailbox: each call goes to the current incarnation's ref.
    """

    def __init__(self, child: _Child) -> None:  # deliberately no super().__init__
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


class _ChildStatus:
    """The ``task_status`` one incarnation reports to."""

    def __init__(self, supervisor: Supervisor, child: _Child, attempt: int) -> None:
        self._supervisor, self._child, self._attempt = supervisor, child, attempt
        self._reported = False

    def started(self, value: object = None) -> None:
        if self._reported:
            raise RuntimeError("task_status.started() called more than once")
        self._reported = True
        self._supervisor._child_started(self._child, self._attempt, value)


class Supervisor:
    """Runs children one-for-one: a child that ends is restarted alone.

    Args:
        specs: The children, in start order (dependencies first, e.g. storage).
        intensity: Restarts allowed within ``period``; one more escalates.
        period: The sliding window, in seconds of ``trio.current_time()``.
        name: For logs, errors and :class:`SupervisorEscalated`.
        escalate: True (OTP's way): one budget for all children, spent -> stop them all
            and raise. False, for children the worker can do without (the embedder, the
            pruner...): each child has its own budget of ``intensity`` restarts in
            ``period``; a child past it is given up (``ChildGaveUp``, listed in
            ``given_up``), stays down, and nothing else stops.

    Mailbox:
        None; it is driven through ``run``, ``request_stop``/``stop`` and ``ref``.
    Lifecycle:
        ``await nursery.start(sup.run)`` starts each child with ``nursery.start``, in
        order, and returns the supervisor once all are up. ``stop`` stops them in
        reverse order, after which ``run`` returns. ``events`` records every
        transition (the newest ``EVENTS_KEPT``). A stop requested while a child is
        starting takes effect once it has started. A child that is itself a
        ``Supervisor`` (it reported itself as started) is asked to stop its children
        in order.
    Failure:
        A child's ``Exception`` is logged and recorded; ``trio.Cancelled`` and other
        ``BaseException`` pass through. No restarts happen once stopping begins. More
        than ``intensity`` restarts within ``period`` seconds stop the remaining
        children and raise ``RestartIntensityExceeded`` from ``run`` (also kept in
        ``error``) so the parent decides; with ``escalate=False`` only that child is
        given up (``given_up``: name -> last error).
    Timeouts:
        Each child's ``shutdown`` grace: its mailbox is sealed so its loop can drain
        and return; at ``now + shutdown`` its scope's deadline cancels it.
    """

    def __init__(
        self,
        specs: Sequence[ChildSpec],
        *,
        intensity: int = 3,
        period: float = 5.0,
        name: str = "root",
        escalate: bool = True,
    ) -> None:
        names = [spec.name for spec in specs]
        if len(set(names)) != len(names):
            raise ValueError(f"supervisor {name!r}: child names must be unique: {names}")
        if intensity < 0 or period <= 0:
            raise ValueError(f"supervisor {name!r}: need intensity >= 0 and period > 0")
        self.name, self.intensity, self.period = name, intensity, period
        self.escalate = escalate
        self.given_up: dict[str, str] = {}
        self.events = EventLog()
        self.error: RestartIntensityExceeded | None = None
        self._children = [_Child(spec) for spec in specs]
        self._by_name = {child.spec.name: child for child in self._children}
        self._refs = {child.spec.name: _ChildRef(child) for child in self._children}
        self._restarts: collections.deque[float] = collections.deque()
        self._wakeup = trio.Event()  # set by a stop request or an escalation
        self._stopping = False
        self._started_run = False
        self._stopped = trio.Event()

    def ref(self, name: str) -> ActorRef:
        """Return the stable ref of child ``name``.

        Raises:
            KeyError: No such child, or its ``start`` did not report an ``ActorRef``.
        """
        if self._by_name[name].has_ref is False:
            raise KeyError(f"child {name!r} of {self.name!r} did not report an ActorRef")
        return self._refs[name]

    def request_stop(self) -> None:
        """Ask ``run`` to stop every child in reverse order and return."""
        self._wakeup.set()

    async def stop(self) -> None:
        """Request a stop and wait until ``run`` has finished."""
        self.request_stop()
        await self.wait_stopped()

    async def wait_stopped(self) -> None:
        """Wait until ``run`` has finished; then ``error`` says whether it escalated."""
        await self._stopped.wait()

    async def run(
        self, *, task_status: trio.TaskStatus[Supervisor] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Start the children, supervise them until stopped, then stop them.

        Raises:
            RestartIntensityExceeded: Too many restarts; the children were stopped first.
        """
        if self._started_run:
            raise RuntimeError(f"supervisor {self.name!r} can only run once")
        self._started_run = True
        try:
            async with trio.open_nursery() as nursery:
                for child in self._children:
                    if self._wakeup.is_set():
                        break
                    child.supervised = True
                    name = f"{self.name}/{child.spec.name}"
                    await nursery.start(self._supervise, child, name=name)
                if self.error is None:
                    task_status.started(self)
                await self._wakeup.wait()
                self._stopping = True
                for child in reversed(self._children):
                    await self._stop_child(child)
        finally:
            self._stopped.set()
        if self.error is not None:
            raise self.error

    async def _supervise(self, child: _Child, *, task_status: trio.TaskStatus[None]) -> None:
        child.report_to = task_status
        try:
            attempt = 1
            while True:
                outcome = await self._run_once(child, attempt)
                if not self._restart(child, outcome):
                    break
                attempt += 1
                self.events.append(ChildRestarted(name=child.spec.name, attempt=attempt, at=_now()))
        finally:
            child.gone = True
            child.notify()
            child.done.set()
        report = child.report_to
        if report is not None:  # it ended for good before it ever started
            child.report_to = None
            report.started()

    async def _run_once(self, child: _Child, attempt: int) -> tuple[_Outcome, BaseException | None]:
        spec = child.spec
        try:
            with trio.CancelScope() as scope:
                child.scope = scope
                await spec.start(task_status=_ChildStatus(self, child, attempt))
        except Exception as exc:
            log.error(
                "%s: child %s crashed (attempt %d)", self.name, spec.name, attempt, exc_info=exc
            )
            self.events.append(
                ChildCrashed(name=spec.name, at=_now(), error=f"{type(exc).__name__}: {exc}")
            )
            return _Outcome.CRASHED, exc
        finally:
            child.scope = None
            if child.target is not None:
                # An actor that forgot `with mailbox:` must still fail its pending asks.
                child.target._close()
                child.target = None
                child.notify()
        if child.stopping:
            how: Literal["graceful", "cancelled"] = (
                "cancelled" if scope.cancelled_caught else "graceful"
            )
            if how == "cancelled":
                log.warning(
                    "%s: child %s ignored the stop for %gs and was cancelled",
                    self.name, spec.name, spec.shutdown,
                )  # fmt: skip
            else:
                log.info("%s: child %s stopped", self.name, spec.name)
            self.events.append(ChildStopped(name=spec.name, at=_now(), how=how))
            return _Outcome.STOPPED, None
        self.events.append(ChildExited(name=spec.name, at=_now()))
        return _Outcome.EXITED, None

    def _restart(self, child: _Child, outcome: tuple[_Outcome, BaseException | None]) -> bool:
        """Decide whether ``child`` starts again; escalate when the budget is spent."""
        kind, cause = outcome
        policy = child.spec.restart
        if self._stopping or child.stopping or kind is _Outcome.STOPPED:
            return False
        if policy is Restart.TEMPORARY or (policy is Restart.TRANSIENT and kind is _Outcome.EXITED):
            return False
        now = _now()
        restarts = self._restarts if self.escalate else child.restarts
        # The window is half-open: a restart exactly `period` ago no longer counts.
        while restarts and now - restarts[0] >= self.period:
            restarts.popleft()
        restarts.append(now)
        if len(restarts) <= self.intensity:
            log.info("%s: restarting %s", self.name, child.spec.name)
            return True
        if not self.escalate:
            reason = f"{type(cause).__name__}: {cause}" if cause is not None else "it exited"
            self.given_up[child.spec.name] = reason
            log.error("%s: gave up on %s after %d restarts within %gs (the rest runs on): %s",
                      self.name, child.spec.name, len(restarts) - 1, self.period, reason)
            self.events.append(ChildGaveUp(name=child.spec.name, at=now, error=reason))
            return False
        error = RestartIntensityExceeded(
            f"supervisor {self.name!r} escalates: restarting {child.spec.name!r} would make "
            f"{len(self._restarts)} restarts within {self.period:g}s (intensity {self.intensity})"
        )
        error.__cause__ = cause
        self.error = error
        log.error("%s", error)
        self.events.append(SupervisorEscalated(name=self.name, at=now, error=str(error)))
        self._wakeup.set()
        return False

    def _child_started(self, child: _Child, attempt: int, value: object) -> None:
        child.has_ref = isinstance(value, ActorRef)
        if isinstance(value, Supervisor):
            child.nested = value
            if child.stopping:
                value.request_stop()
        if isinstance(value, ActorRef):
            child.target = child.last_target = value
            if child.stopping:  # a stop arrived while it was starting
                value._seal()
            child.notify()
        self.events.append(ChildStarted(name=child.spec.name, attempt=attempt, at=_now()))
        report = child.report_to
        if report is not None:
            child.report_to = None
            report.started()

    async def _stop_child(self, child: _Child) -> None:
        if not child.supervised:  # never started: nothing to stop, but its ref must fail
            child.gone = True
            child.notify()
            return
        if child.done.is_set():
            return
        child.stopping = True
        if child.target is not None:
            child.target._seal()
        if child.nested is not None:  # a nested supervisor stops its own children in order
            child.nested.request_stop()
        if child.scope is not None:
            child.scope.deadline = min(child.scope.deadline, _now() + child.spec.shutdown)
        await child.done.wait()


def _now() -> float:
    return trio.current_time()
