"""The actor runtime: bounded mailboxes, refs, ask, and (re-exported) supervision.

The model
---------
An actor is a Trio task that owns some state and one :class:`Mailbox`. Nothing but
the actor touches its state; everyone else holds its :class:`ActorRef` and sends it
messages, which are ``@attrs.frozen(kw_only=True)`` classes dispatched with ``match``::

    class Storage:
        async def run(self, *, task_status=trio.TASK_STATUS_IGNORED):
            with Mailbox("storage", size=256) as mailbox:
                task_status.started(mailbox.ref)      # before any timed wait
                async for message in mailbox:         # ends when the mailbox closes
                    match message:
                        case Get(key=key, reply=reply):
                            with reply:
                                reply.send_nowait(self.rows.get(key))
                        case _:
                            assert_never(message)

Sending
    ``await ref.send(m)`` waits while the mailbox is full: that wait *is* the
    backpressure, so the caller owns a deadline around it. ``ref.send_nowait(m)``
    raises :class:`~memlite.errors.MailboxFull` instead. Both raise
    :class:`~memlite.errors.ActorDied` once the mailbox is closed.

Asking
    ``await ref.ask(lambda reply: Get(key=k, reply=reply), timeout=5)`` makes a
    one-shot reply channel (:class:`Reply`), sends the message and waits for one
    answer. The actor answers inside ``with msg.reply:`` so that the channel closes
    however the handler ends. An actor that wants the asker to fail sends an
    ``Exception`` *instance* as the answer and ``ask`` raises it. A closed channel
    without an answer raises ``ActorDied``; no answer in time raises
    :class:`~memlite.errors.AskTimeout`.

Death
    When the mailbox closes (the actor's ``with`` block ends, however it ends),
    new sends raise ``ActorDied`` and every ask still waiting on it, queued or
    already received but unanswered, raises ``ActorDied`` at once rather than
    at its timeout. To hand a request on to another actor, forward
    ``reply.clone()`` and close your own copy: the original dies with you.

A ``Reply`` behaves like the send side of a Trio memory channel of size one
(``send_nowait``, ``send``, ``clone``, ``close``, ``with``); it is a lighter object
because the storage actor answers tens of thousands of asks a second. A plain
``trio.MemorySendChannel`` is accepted as a message's ``reply`` too.

Supervision (``ChildSpec``, ``Supervisor``, the lifecycle events) lives in
``supervisor.py`` and is re-exported from here, so callers import one module.
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Generic, TypeVar

import attrs
import outcome
import trio

from memlite.errors import ActorDied, AskTimeout, MailboxFull

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

log = logging.getLogger(__name__)

T = TypeVar("T")


class _Answer:
    """What the asker waits on; shared by a ``Reply`` and its clones."""

    __slots__ = ("answered", "value", "open", "task", "timer", "timed_out")

    def __init__(self) -> None:
        self.answered = False
        self.value: Any = None
        self.open = 1  # reply handles not yet closed
        self.task: Any = None  # the asker, while it waits
        self.timer: _AskTimer | None = None  # holds this ask's deadline while it waits
        self.timed_out = False

    def abort(self, _raise_cancel: object) -> trio.lowlevel.Abort:
        # Cancelled from outside. A later answer just stays here, as in a channel's buffer.
        self.task = None
        if self.timer is not None:
            self.timer.forget(self)
        return trio.lowlevel.Abort.SUCCEEDED

    def wake(self) -> None:
        task = self.task
        if task is not None:
            self.task = None
            if self.timer is not None:
                self.timer.forget(self)
            trio.lowlevel.reschedule(task, outcome.Value(None))

    def expire(self) -> None:
        """The deadline passed (called by the timer, which already dropped it)."""
        task = self.task
        if task is not None:
            self.task = None
            self.timed_out = True
            trio.lowlevel.reschedule(task, outcome.Value(None))

    async def wait(self, deadline: float) -> None:
        """Return once answered, once every reply handle is closed, or at ``deadline``."""
        if self.answered or not self.open:
            await trio.lowlevel.cancel_shielded_checkpoint()
            return
        self.task = trio.lowlevel.current_task()
        if deadline != math.inf:
            self.timer = _AskTimer.current()
            self.timer.add(deadline, self)
        await trio.lowlevel.wait_task_rescheduled(self.abort)


class _AskTimer:
    """The deadlines of every waiting ask in a Trio run, served by one system task.

    A cancel scope per ask (``fail_after``) costs more than the rest of the ask; instead
    each ask puts ``(deadline, n, answer)`` in one heap, and the timer task sleeps in a
    single cancel scope until the earliest deadline in it, then times out the asks whose
    deadline has passed. Answered asks are dropped lazily (moving the scope's deadline
    on every answer would cost most of what this saves): the timer may wake at the
    deadline of an ask answered since, and then sleeps until the next one. Once no ask
    is waiting the heap is emptied and the scope has no deadline, so an idle program
    has no timer pending (as with one scope per ask).
    """

    _var: trio.lowlevel.RunVar[_AskTimer] = trio.lowlevel.RunVar("memlite_ask_timer")

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, _Answer]] = []
        self._count = itertools.count()
        self._waiting = 0
        self._scope: trio.CancelScope | None = None
        self._target = math.inf
        self._prune_at = 1024

    @classmethod
    def current(cls) -> _AskTimer:
        timer = cls._var.get(None)
        if timer is None:
            timer = cls()
            cls._var.set(timer)
            trio.lowlevel.spawn_system_task(timer._run, name="memlite ask timer")
        return timer

    def add(self, deadline: float, answer: _Answer) -> None:
        heap = self._heap
        self._waiting += 1
        heapq.heappush(heap, (deadline, next(self._count), answer))
        if deadline < self._target:
            self._retarget(deadline)
        if len(heap) >= self._prune_at:  # answered asks that never reached the top
            heap[:] = [entry for entry in heap if entry[2].task is not None]
            heapq.heapify(heap)
            self._prune_at = max(1024, 4 * len(heap))

    def forget(self, answer: _Answer) -> None:
        """``answer`` stopped waiting before its deadline (answered, or cancelled)."""
        self._waiting -= 1
        if not self._waiting:
            self._heap.clear()
            self._retarget(math.inf)

    def _retarget(self, deadline: float) -> None:
        if deadline != self._target:
            self._target = deadline
            if self._scope is not None:
                self._scope.deadline = deadline

    async def _run(self) -> None:
        heap = self._heap
        while True:
            with trio.CancelScope(deadline=self._target) as self._scope:
                await trio.sleep_forever()
            self._scope = None
            now = trio.current_time()
            while heap and (heap[0][2].task is None or heap[0][0] <= now):
                answer = heapq.heappop(heap)[2]
                if answer.task is not None:
                    self._waiting -= 1
                    answer.expire()
            self._target = heap[0][0] if heap else math.inf


class Reply(Generic[T]):
    """The one-shot reply channel of a request: annotate a message's field ``Reply[Answer]``.

    Made by :meth:`ActorRef.ask`. It acts as the send side of a Trio memory channel
    with room for one answer: ``send_nowait`` (``WouldBlock`` when already answered,
    ``ClosedResourceError`` after ``close``), ``send``, ``clone``, ``close`` and ``with``.
    Once it and all its clones are closed without an answer, the asker gets
    ``ActorDied``. An answer that comes after the asker gave up is dropped silently.
    """

    __slots__ = ("_answer", "_closed")

    def __init__(self, answer: _Answer) -> None:
        self._answer = answer
        self._closed = False

    def send_nowait(self, value: T) -> None:
        """Answer the asker.

        Raises:
            trio.ClosedResourceError: this reply was closed.
            trio.WouldBlock: it (or a clone) was already answered.
        """
        if self._closed:
            raise trio.ClosedResourceError
        answer = self._answer
        if answer.answered:
            raise trio.WouldBlock
        answer.answered = True
        answer.value = value
        answer.wake()

    async def send(self, value: T) -> None:
        """``send_nowait`` after a checkpoint (the buffer holds the one answer)."""
        await trio.lowlevel.checkpoint()
        self.send_nowait(value)

    def clone(self) -> Reply[T]:
        """Another handle on the same reply, to forward: the asker fails only once all close.

        Raises:
            trio.ClosedResourceError: this reply was closed.
        """
        if self._closed:
            raise trio.ClosedResourceError
        self._answer.open += 1
        return Reply(self._answer)

    def close(self) -> None:
        """Close this handle (idempotent); the last one closed unanswered fails the ask."""
        if self._closed:
            return
        self._closed = True
        answer = self._answer
        answer.open -= 1
        if not answer.open and not answer.answered:
            answer.wake()

    async def aclose(self) -> None:
        self.close()
        await trio.lowlevel.checkpoint()

    def __enter__(self) -> Reply[T]:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else "answered" if self._answer.answered else "open"
        return f"<Reply {state}>"


@attrs.frozen(kw_only=True)
class MailboxStatistics:
    """A snapshot of one mailbox, for ``/api/debug`` and tests.

    Attributes:
        name: The actor's name.
        queued: Messages waiting in the mailbox.
        size: The mailbox's capacity.
        blocked_senders: Tasks waiting in ``send`` because the mailbox is full.
    """

    name: str
    queued: int
    size: int
    blocked_senders: int


def _reply_of(message: object) -> Reply[Any] | trio.MemorySendChannel[Any] | None:
    reply = getattr(message, "reply", None)
    return reply if isinstance(reply, (Reply, trio.MemorySendChannel)) else None


def _unanswered(reply: Reply[Any] | trio.MemorySendChannel[Any]) -> bool:
    if type(reply) is Reply:
        return not reply._closed
    return bool(reply.statistics().open_send_channels)


class Mailbox:
    """An actor's bounded inbox, and the :class:`ActorRef` that writes to it.

    Args:
        name: The actor's name, used in errors, logs and statistics.
        size: Capacity; a full mailbox makes ``send`` wait. Must be a positive int:
            an unbounded mailbox hides overload until memory runs out.

    Raises:
        ValueError: ``size`` is not a positive int.
    """

    def __init__(self, name: str, size: int = 64) -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            raise ValueError(f"mailbox {name!r}: size must be a positive int, not {size!r}")
        self.name = name
        self._send, self._receive = trio.open_memory_channel[Any](size)
        # Reply channels of messages handed to the actor and not yet answered: closed
        # with the mailbox so their askers learn of a crash at once.
        self._held: list[Reply[Any] | trio.MemorySendChannel[Any]] = []
        self.ref = ActorRef(self)

    async def receive(self) -> Any:
        """Wait for the next message.

        Raises:
            trio.EndOfChannel: The mailbox is closed and empty.
        """
        message = await self._receive.receive()
        self._prune()
        self._hold(message)
        return message

    def receive_nowait_batch(self, limit: int) -> list[Any]:
        """Take up to ``limit`` messages that are already queued, without waiting.

        Returns an empty list when nothing is queued (or the mailbox is closed); a
        batching actor calls it after ``receive`` to group work, e.g. one commit.
        """
        self._prune()
        batch: list[Any] = []
        while len(batch) < limit:
            try:
                message = self._receive.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel):
                break
            self._hold(message)
            batch.append(message)
        return batch

    def close(self) -> None:
        """Stop accepting messages and fail every ask still waiting on this actor.

        Senders get ``ActorDied`` from now on, ``receive`` raises ``EndOfChannel``,
        and queued messages are dropped: those carrying a reply channel have it
        closed so their askers raise ``ActorDied`` immediately. Idempotent.
        """
        self._send.close()
        dropped = 0
        while True:
            try:
                message = self._receive.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel):
                break
            dropped += 1
            reply = _reply_of(message)
            if reply is not None:
                reply.close()
        for reply in self._held:
            reply.close()
        self._held.clear()
        if dropped:
            log.info("mailbox %s closed with %d unprocessed messages", self.name, dropped)

    def statistics(self) -> MailboxStatistics:
        """Return the current depth and capacity of this mailbox."""
        stats = self._send.statistics()
        return MailboxStatistics(
            name=self.name,
            queued=stats.current_buffer_used,
            size=int(stats.max_buffer_size),
            blocked_senders=stats.tasks_waiting_send,
        )

    def _seal(self) -> None:
        """Refuse new messages but let the actor drain the queued ones (graceful stop)."""
        self._send.close()

    def _prune(self) -> None:
        # Forget answered replies as we go so a long-lived actor does not accumulate them.
        if self._held:
            self._held = [r for r in self._held if _unanswered(r)]

    def _hold(self, message: object) -> None:
        reply = _reply_of(message)
        if reply is not None:
            self._held.append(reply)

    def __enter__(self) -> Mailbox:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __aiter__(self) -> Mailbox:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except trio.EndOfChannel:
            raise StopAsyncIteration from None


class ActorRef:
    """The handle through which everything else talks to one actor.

    A ref never exposes the actor's state; it only delivers messages. Refs are
    made by :class:`Mailbox` (and, for supervised children, by ``Supervisor.ref``).

    Attributes:
        name: The actor's name.
    """

    def __init__(self, mailbox: Mailbox) -> None:
        self.name = mailbox.name
        self._mailbox = mailbox

    async def send(self, message: object) -> None:
        """Deliver ``message``, waiting while the mailbox is full.

        Raises:
            ActorDied: The actor's mailbox is closed.
        """
        try:
            await self._mailbox._send.send(message)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            raise ActorDied(f"actor {self.name!r} is not running") from None

    def send_nowait(self, message: object) -> None:
        """Deliver ``message`` now or fail.

        Raises:
            MailboxFull: The mailbox is at capacity.
            ActorDied: The actor's mailbox is closed.
        """
        try:
            self._mailbox._send.send_nowait(message)
        except trio.WouldBlock:
            raise MailboxFull(f"mailbox of {self.name!r} is full") from None
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            raise ActorDied(f"actor {self.name!r} is not running") from None

    async def ask(
        self,
        make_message: Callable[[Reply[T]], object],
        *,
        timeout: float,  # noqa: ASYNC109 - the ask pattern's contract: the asker owns it
    ) -> T:
        """Send a request and wait for its answer.

        Args:
            make_message: Builds the message from a fresh one-shot reply channel.
            timeout: Seconds for the whole exchange, including waiting for
                mailbox space. There is no default: the caller owns the deadline.

        Returns:
            The answer the actor sent on the reply channel.

        Raises:
            AskTimeout: No answer within ``timeout``.
            ActorDied: The actor stopped, or closed the reply without answering.
            Exception: Whatever exception instance the actor sent as its answer.
        """
        if timeout < 0 or math.isnan(timeout):
            raise ValueError(f"ask timeout must be a non-negative number, not {timeout!r}")
        # After a timeout a late answer is kept by the reply and dropped with it; the
        # actor never sees an error for answering too late.
        pending = _Answer()
        message = make_message(Reply(pending))
        deadline = trio.current_time() + timeout
        # What ``send`` does, minus its extra trip through the scheduler when the mailbox
        # has room: the wait for the answer below is the checkpoint.
        await trio.lowlevel.checkpoint_if_cancelled()
        try:
            self._mailbox._send.send_nowait(message)
            delivered = True
        except trio.WouldBlock:
            delivered = False
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            raise ActorDied(f"actor {self.name!r} is not running") from None
        if delivered:  # the shared ask timer holds the deadline: no cancel scope per ask
            await pending.wait(deadline)
            timed_out = pending.timed_out
        else:  # a full mailbox: wait for room, then for the answer, in one cancel scope
            with trio.CancelScope(deadline=deadline) as scope:
                await self.send(message)
                await pending.wait(math.inf)
            timed_out = scope.cancelled_caught
        if timed_out:
            raise AskTimeout(f"actor {self.name!r} did not answer within {timeout}s")
        if not pending.answered:
            raise ActorDied(f"actor {self.name!r} stopped before answering")
        answer = pending.value
        if isinstance(answer, Exception):
            raise answer
        return answer

    def statistics(self) -> MailboxStatistics:
        """Return the depth and capacity of the actor's mailbox."""
        return self._mailbox.statistics()

    def _seal(self) -> None:
        self._mailbox._seal()

    def _close(self) -> None:
        self._mailbox.close()

    def __repr__(self) -> str:
        return f"<ActorRef {self.name}>"


class Actor:
    """Optional base for an actor that handles one message at a time.

    Subclasses set ``name`` and ``mailbox_size`` and implement :meth:`handle`.

    Mailbox:
        ``mailbox_size`` messages, whatever ``handle`` accepts.
    Lifecycle:
        ``run`` opens the mailbox, reports its ref, then handles messages in
        order until the mailbox is closed (returns) or ``handle`` raises.
    Failure:
        An exception from ``handle`` ends the actor; its mailbox closes and
        pending asks raise ``ActorDied``. Its supervisor decides what follows.
    Timeouts:
        None of its own; ``handle`` owns the deadlines of its awaits.
    """

    name: str = "actor"
    mailbox_size: int = 64

    async def run(
        self, *, task_status: trio.TaskStatus[ActorRef] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Serve the mailbox until it closes."""
        with Mailbox(self.name, size=self.mailbox_size) as mailbox:
            task_status.started(mailbox.ref)
            async for message in mailbox:
                await self.handle(message)

    async def handle(self, message: Any) -> None:
        """Handle one message; override this."""
        raise NotImplementedError


@contextlib.asynccontextmanager
async def spawn(start: Callable[..., Awaitable[object]], *args: object) -> AsyncIterator[Any]:
    """Run ``start`` in a private nursery for the duration of an ``async with`` block.

    Test and top-level sugar: ``start`` (e.g. ``actor.run``) is started with
    ``nursery.start``, the block receives what it passed to ``task_status.started``
    (usually its ``ActorRef``), and leaving the block cancels it. In production only
    supervisors own nurseries.

    A lone error from the block or the actor is raised as itself, not wrapped in an
    ``ExceptionGroup``; several at once stay grouped.
    """
    try:
        async with trio.open_nursery() as nursery:
            value = await nursery.start(start, *args)
            try:
                yield value
            finally:
                nursery.cancel_scope.cancel(reason="spawn() block exited")
    except BaseExceptionGroup as group:
        if len(group.exceptions) != 1:
            raise
        lone = group.exceptions[0]
        raise lone from lone.__cause__


# supervisor.py builds on the classes above, so it is imported after them.
from memlite.actors.supervisor import (  # noqa: E402
    ChildCrashed,
    ChildExited,
    ChildRestarted,
    ChildSpec,
    ChildStarted,
    ChildStopped,
    LifecycleEvent,
    Restart,
    Supervisor,
    SupervisorEscalated,
)
