"""The event bus: fans out what the worker stores to live subscribers (the SSE stream).

Publishers (ingestion, later the observer) send small dicts such as
``{"type": "event", "sessionId": ..., "eventId": ..., "eventName": ..., "toolName": ...,
"at": <epoch ms>}``; each subscriber gets its own bounded trio channel of them.

Usage::

    channel = await bus.ask(lambda reply: Subscribe(reply=reply), timeout=2)
    with channel:
        async for event in channel:   # ends when the bus drops or closes the subscription
            ...
"""

from __future__ import annotations

import logging
from typing import Any, assert_never

import attrs
import trio

from memlite.actors.core import ActorRef, Mailbox, Reply

__all__ = [
    "BusStatistics",
    "DEFAULT_BUFFER",
    "EventBus",
    "GetStatistics",
    "Inbox",
    "Publish",
    "Subscribe",
]

log = logging.getLogger(__name__)

DEFAULT_BUFFER = 256
"""Events a subscriber may fall behind by before it is dropped."""


@attrs.frozen(kw_only=True)
class Subscribe:
    """Open a subscription. Answer: a ``trio.MemoryReceiveChannel`` of event dicts.

    ``buffer`` (default: the bus's) bounds how far this subscriber may fall behind.
    """

    reply: Reply[trio.MemoryReceiveChannel[dict[str, Any]]]
    buffer: int | None = None


@attrs.frozen(kw_only=True)
class Unsubscribe:
    """Close the subscription whose receive channel is ``channel``. No answer.

    Test-only: not in ``__all__`` (a subscriber closes its channel; the bus forgets it)."""

    channel: trio.MemoryReceiveChannel[dict[str, Any]]


@attrs.frozen(kw_only=True)
class Publish:
    """Hand ``event`` to every subscriber, never waiting. No answer."""

    event: dict[str, Any]


@attrs.frozen(kw_only=True)
class GetStatistics:
    """Answer: ``BusStatistics``."""

    reply: Reply[BusStatistics]


Inbox = Subscribe | Unsubscribe | Publish | GetStatistics


@attrs.frozen(kw_only=True)
class BusStatistics:
    """Counters since start.

    Attributes:
        subscribers: subscriptions open now.
        published: events published.
        delivered: event copies handed to subscribers.
        dropped: subscribers closed because their buffer was full.
        gone: subscribers that went away by themselves (closed their channel).
    """

    subscribers: int
    published: int
    delivered: int
    dropped: int
    gone: int


class EventBus:
    """Fans each published event out to every subscriber's bounded channel.

    Mailbox:
        ``mailbox_size`` (default 256) of ``Subscribe``, ``Unsubscribe``, ``Publish``,
        ``GetStatistics``. Publishers use ``send_nowait`` and drop the event if even the
        bus's mailbox is full: live updates are best-effort, the database is the record.
    Lifecycle:
        ``run`` reports its ref and serves until its mailbox closes; then it closes every
        subscription, so each subscriber sees the end of its channel.
    Failure:
        A subscriber whose buffer is full is *dropped*: its channel is closed (it drains
        what it has, then sees ``EndOfChannel``) and counted in ``dropped``. One slow
        reader never blocks the bus, the publishers or the other readers, and memory stays
        bounded by ``buffer`` per subscriber. A subscriber that closed its own channel is
        forgotten at the next publish. The bus has nothing to crash on.
    Timeouts:
        None: it never waits on anyone (``send_nowait`` only).
    """

    def __init__(self, *, buffer: int = DEFAULT_BUFFER, mailbox_size: int = 256) -> None:
        if buffer < 1:
            raise ValueError(f"subscriber buffer must be positive, not {buffer!r}")
        self.buffer = buffer
        self.mailbox_size = mailbox_size
        # Keyed by the subscriber's receive channel (hashed by identity).
        self._subscribers: dict[Any, trio.MemorySendChannel[dict[str, Any]]] = {}
        self._published = self._delivered = self._dropped = self._gone = 0

    def statistics(self) -> BusStatistics:
        return BusStatistics(subscribers=len(self._subscribers), published=self._published,
                             delivered=self._delivered, dropped=self._dropped, gone=self._gone)

    async def run(
        self, *, task_status: trio.TaskStatus[ActorRef] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Serve the mailbox; close every subscription when it ends."""
        try:
            with Mailbox("bus", size=self.mailbox_size) as mailbox:
                task_status.started(mailbox.ref)
                async for message in mailbox:
                    self._handle(message)
        finally:
            subscribers, self._subscribers = self._subscribers, {}
            for send in subscribers.values():
                send.close()

    def _handle(self, message: Inbox) -> None:
        match message:
            case Publish(event=event):
                self._publish(event)
            case Subscribe(reply=reply, buffer=buffer):
                with reply:
                    if reply.abandoned:  # the asker gave up: no subscription to orphan
                        self._gone += 1
                        return
                    send, receive = trio.open_memory_channel[dict[str, Any]](
                        buffer or self.buffer)
                    reply.send_nowait(receive)
                self._subscribers[receive] = send
            case Unsubscribe(channel=channel):
                if channel in self._subscribers:
                    self._subscribers.pop(channel).close()
            case GetStatistics(reply=reply):
                with reply:
                    reply.send_nowait(self.statistics())
            case _:
                assert_never(message)

    def _publish(self, event: dict[str, Any]) -> None:
        self._published += 1
        for key, send in list(self._subscribers.items()):
            try:
                send.send_nowait(event)
            except trio.WouldBlock:
                log.warning("bus: a subscriber is %d events behind; dropping it",
                            send.statistics().current_buffer_used)
                del self._subscribers[key]
                send.close()
                self._dropped += 1
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                del self._subscribers[key]
                self._gone += 1
            else:
                self._delivered += 1
