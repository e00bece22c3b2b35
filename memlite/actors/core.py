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
import logging
import math
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Generic, TypeVar, cast

import attrs
import trio

from memlite.actors.reply import Reply, _Answer
from memlite.errors import ActorDied, AskTimeout, MailboxFull

__all__ = [
    "ActorRef",
    "ChildCrashed",
    "ChildExited",
    "ChildGaveUp",
    "ChildRestarted",
    "ChildSpec",
    "ChildStarted",
    "ChildStopped",
    "LifecycleEvent",
    "Mailbox",
    "MailboxStatistics",
    "Reply",
    "ReportedStatus",
    "Restart",
    "Supervisor",
    "SupervisorEscalated",
    "lone_error",
    "spawn",
]

log = logging.getLogger(__name__)

T = TypeVar("T")


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
    if isinstance(reply, Reply):
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

    async def receive_before(self, deadline: float) -> Any | None:
        """The next message, or None once ``deadline`` (Trio time) has passed first: for
        actors that also act on a schedule (the reaper, the heap keeper).

        Raises:
            trio.EndOfChannel: The mailbox is closed and empty.
        """
        with trio.move_on_at(deadline):
            return await self.receive()
        return None

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
        return cast(T, answer)

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
    """Optional base for an actor that handles one message at a time (test sugar: not in
    ``__all__``; memlite's own actors own their loops).

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
        lone = lone_error(group)
        if lone is group:
            raise
        raise lone from lone.__cause__


class ReportedStatus(Generic[T]):
    """A ``task_status`` that passes ``started()`` through and remembers it was called
    (the session supervisor and the worker ask "did it ever start?")."""

    def __init__(self, inner: trio.TaskStatus[T]) -> None:
        self.inner, self.called = inner, False

    def started(self, value: Any = None) -> None:
        self.called = True
        self.inner.started(value)


def lone_error(exc: BaseException) -> BaseException:
    """The one error inside (nested) exception groups, else ``exc`` itself.

    Nurseries wrap a lone failure in groups; the runtime, the tree and the worker all
    report that failure as itself (the one unwrapper: ``spawn``, the storage actor,
    ``memlite.tree``, ``memlite.worker``).
    """
    leaves: list[BaseException] = []
    pending = [exc]
    while pending:
        item = pending.pop()
        if isinstance(item, BaseExceptionGroup):
            pending.extend(item.exceptions)
        else:
            leaves.append(item)
    return leaves[0] if len(leaves) == 1 else exc


# supervisor.py builds on the classes above, so it is imported after them.
from memlite.actors.supervisor import Supervisor  # noqa: E402
from memlite.actors.supervisor_events import (  # noqa: E402
    ChildCrashed,
    ChildExited,
    ChildGaveUp,
    ChildRestarted,
    ChildSpec,
    ChildStarted,
    ChildStopped,
    LifecycleEvent,
    Restart,
    SupervisorEscalated,
)
