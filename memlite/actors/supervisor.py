"""One-for-one supervision in OTP's words: child specs, restart intensity, ordered stop.

A :class:`Supervisor` owns the only nursery its children run in. It starts them in
order, restarts each one on its own when it ends (according to its
:class:`Restart` policy), and stops them in reverse order. Callers reach a child
through ``sup.ref(name)``, a ref that survives the child's restarts. Children can also
be added while it runs (``start_child``, OTP's ``start_child``) and stopped one by one
with a grace of the caller's (``stop_child``): the session supervisor runs its session
actors that way, so there is one stop logic.

The specs and lifecycle events are in ``supervisor_events.py``, the per-child
bookkeeping in ``supervisor_child.py``; every public name is re-exported here and from
:mod:`memlite.actors.core`, so callers import one module.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Sequence
from typing import Literal

import trio

from memlite.actors.core import ActorRef
from memlite.actors.supervisor_child import Child, ChildRef, ChildStatus, Outcome
from memlite.actors.supervisor_events import (
    ChildCrashed,
    ChildExited,
    ChildGaveUp,
    ChildRestarted,
    ChildSpec,
    ChildStarted,
    ChildStopped,
    EventLog,
    Restart,
    SupervisorEscalated,
)
from memlite.errors import ActorDied, RestartIntensityExceeded

__all__ = ["Supervisor"]  # its specs and events: memlite.actors.supervisor_events

log = logging.getLogger(__name__)


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
        in order. While it runs, ``start_child`` adds a child (started like the others,
        stopped in reverse order with them; once a dynamic child is gone for good its
        name is free again) and ``stop_child`` stops one child with a grace of the
        caller's, without waiting.
    Failure:
        A child's ``Exception`` is logged and recorded; ``trio.Cancelled`` and other
        ``BaseException`` pass through. No restarts happen once stopping begins. More
        than ``intensity`` restarts within ``period`` seconds stop the remaining
        children and raise ``RestartIntensityExceeded`` from ``run`` (also kept in
        ``error``) so the parent decides; with ``escalate=False`` only that child is
        given up (``given_up``: name -> last error).
    Timeouts:
        Each child's ``shutdown`` grace (or the one given to ``stop_child``): its
        mailbox is sealed so its loop can drain and return; at ``now + grace`` its
        scope's deadline cancels it. A later stop only ever brings that deadline nearer.
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
        self._children = [Child(spec) for spec in specs]
        self._by_name = {child.spec.name: child for child in self._children}
        self._refs = {child.spec.name: ChildRef(child) for child in self._children}
        self._restarts: collections.deque[float] = collections.deque()
        self._wakeup = trio.Event()  # set by a stop request or an escalation
        self._stopping = False
        self._started_run = False
        self._nursery: trio.Nursery | None = None
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

    async def start_child(self, spec: ChildSpec) -> ActorRef | None:
        """Start one more child while the supervisor runs; return once it has started.

        The child is supervised like those given to the constructor (restart policy,
        budget, events, stopped in reverse start order when the supervisor stops). A
        dynamic child that is gone for good (ended, stopped, given up) is forgotten, so
        its name can be used again.

        Returns:
            The ref its first incarnation reported (closed if that one ended already),
            or None when it ended before it started or reported no ``ActorRef``.

        Raises:
            ActorDied: The supervisor is not running, or is stopping.
            ValueError: A child named ``spec.name`` is still there.
        """
        nursery = self._nursery
        if nursery is None or self._wakeup.is_set():
            raise ActorDied(f"supervisor {self.name!r} is not running; {spec.name!r} not started")
        old = self._by_name.get(spec.name)
        if old is not None and not old.gone:
            raise ValueError(f"supervisor {self.name!r} already has a child {spec.name!r}")
        if old is not None:
            self._forget(old)
        child = Child(spec, dynamic=True, supervised=True)
        self._children.append(child)
        self._by_name[spec.name] = child
        self._refs[spec.name] = ChildRef(child)
        await nursery.start(self._supervise, child, name=f"{self.name}/{spec.name}")
        return child.last_target

    def stop_child(self, name: str, *, grace: float | None = None) -> bool:
        """Begin stopping child ``name`` (no restart follows); do not wait for it.

        Its mailbox is sealed and it is cancelled ``grace`` seconds from now (default:
        its spec's ``shutdown``), or sooner if an earlier stop said so.

        Returns:
            False when there is no such child or it is already gone.
        """
        child = self._by_name.get(name)
        if child is None or child.gone or not child.supervised:
            return False
        self._begin_stop(child, child.spec.shutdown if grace is None else grace)
        return True

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
                self._nursery = nursery
                for child in list(self._children):
                    if self._wakeup.is_set():
                        break
                    child.supervised = True
                    name = f"{self.name}/{child.spec.name}"
                    await nursery.start(self._supervise, child, name=name)
                if self.error is None:
                    task_status.started(self)
                await self._wakeup.wait()
                self._stopping = True
                for child in list(reversed(self._children)):
                    await self._stop_child(child)
        finally:
            self._nursery = None
            self._stopped.set()
        if self.error is not None:
            raise self.error

    async def _supervise(self, child: Child, *, task_status: trio.TaskStatus[None]) -> None:
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
            if child.dynamic:
                self._forget(child)
        report = child.report_to
        if report is not None:  # it ended for good before it ever started
            child.report_to = None
            report.started()

    async def _run_once(self, child: Child, attempt: int) -> tuple[Outcome, BaseException | None]:
        spec = child.spec
        try:
            with trio.CancelScope(deadline=child.stop_deadline) as scope:
                child.scope = scope
                status = ChildStatus(lambda value: self._child_started(child, attempt, value))
                await spec.start(task_status=status)
        except Exception as exc:
            log.error(
                "%s: child %s crashed (attempt %d)", self.name, spec.name, attempt, exc_info=exc
            )
            self.events.append(
                ChildCrashed(name=spec.name, at=_now(), error=f"{type(exc).__name__}: {exc}")
            )
            return Outcome.CRASHED, exc
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
                    self.name, spec.name, child.grace,
                )  # fmt: skip
            else:
                log.info("%s: child %s stopped", self.name, spec.name)
            self.events.append(ChildStopped(name=spec.name, at=_now(), how=how))
            return Outcome.STOPPED, None
        self.events.append(ChildExited(name=spec.name, at=_now()))
        return Outcome.EXITED, None

    def _restart(self, child: Child, outcome: tuple[Outcome, BaseException | None]) -> bool:
        """Decide whether ``child`` starts again; escalate when the budget is spent."""
        kind, cause = outcome
        policy = child.spec.restart
        if self._stopping or child.stopping or kind is Outcome.STOPPED:
            return False
        if policy is Restart.TEMPORARY or (policy is Restart.TRANSIENT and kind is Outcome.EXITED):
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

    def _child_started(self, child: Child, attempt: int, value: object) -> None:
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

    async def _stop_child(self, child: Child) -> None:
        if not child.supervised:  # never started: nothing to stop, but its ref must fail
            child.gone = True
            child.notify()
            return
        if child.done.is_set():
            return
        self._begin_stop(child, child.spec.shutdown)
        await child.done.wait()

    def _begin_stop(self, child: Child, grace: float) -> None:
        """Seal the child's mailbox and cancel it ``grace`` seconds from now (the one
        stop logic: the root, the optional children and every session actor)."""
        deadline = _now() + grace
        if not child.stopping or deadline < child.stop_deadline:
            child.grace, child.stop_deadline = grace, deadline
        child.stopping = True
        if child.target is not None:
            child.target._seal()
        if child.nested is not None:  # a nested supervisor stops its own children in order
            child.nested.request_stop()
        if child.scope is not None:
            child.scope.deadline = min(child.scope.deadline, child.stop_deadline)

    def _forget(self, child: Child) -> None:
        """Drop a dynamic child that is gone for good, so its name is free again."""
        if self._by_name.get(child.spec.name) is child:
            del self._by_name[child.spec.name]
            del self._refs[child.spec.name]
        if child in self._children:
            self._children.remove(child)


def _now() -> float:
    return trio.current_time()
