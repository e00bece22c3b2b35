"""The event bus: fan-out, a slow subscriber dropped (never the bus), bounded buffers."""

from __future__ import annotations

import pytest
import trio
import trio.testing

from memlite.actors.bus import (
    BusStatistics,
    EventBus,
    GetStatistics,
    Publish,
    Subscribe,
    Unsubscribe,
)
from memlite.actors.core import spawn


async def subscribe(bus, buffer=None):
    return await bus.ask(lambda reply: Subscribe(reply=reply, buffer=buffer), timeout=1)


async def stats(bus) -> BusStatistics:
    return await bus.ask(lambda reply: GetStatistics(reply=reply), timeout=1)


def event(i: int) -> dict:
    return {"type": "event", "eventId": i}


async def test_every_subscriber_gets_every_event_in_order(autojump_clock, hang_guard):
    async with spawn(EventBus().run) as bus:
        first, second = await subscribe(bus), await subscribe(bus)
        for i in range(3):
            await bus.send(Publish(event=event(i)))
        await stats(bus)  # the bus has handled everything before this
        for channel in (first, second):
            assert [channel.receive_nowait()["eventId"] for _ in range(3)] == [0, 1, 2]
        assert await stats(bus) == BusStatistics(subscribers=2, published=3, delivered=6,
                                                 dropped=0, gone=0)


async def test_a_slow_subscriber_is_dropped_while_a_fast_one_keeps_receiving(autojump_clock,
                                                                              hang_guard):
    async with spawn(EventBus(buffer=4).run) as bus:
        slow = await subscribe(bus)  # never reads
        fast = await subscribe(bus)
        received = []
        for i in range(20):
            await bus.send(Publish(event=event(i)))
            await stats(bus)
            received.append(fast.receive_nowait()["eventId"])
            # Bounded memory: the slow one never holds more than its buffer.
            assert slow.statistics().current_buffer_used <= 4
        assert received == list(range(20))
        # The slow one keeps what it had, then sees the end of its channel.
        assert [slow.receive_nowait()["eventId"] for _ in range(4)] == [0, 1, 2, 3]
        with pytest.raises(trio.EndOfChannel):
            await slow.receive()
        assert await stats(bus) == BusStatistics(subscribers=1, published=20, delivered=24,
                                                 dropped=1, gone=0)


async def test_the_subscriber_may_choose_its_buffer(autojump_clock, hang_guard):
    async with spawn(EventBus(buffer=256).run) as bus:
        small = await subscribe(bus, buffer=1)
        await bus.send(Publish(event=event(1)))
        await bus.send(Publish(event=event(2)))
        assert (await stats(bus)).dropped == 1
        assert small.receive_nowait() == event(1)


async def test_a_subscriber_that_left_is_forgotten(autojump_clock, hang_guard):
    async with spawn(EventBus().run) as bus:
        leaving = await subscribe(bus)
        staying = await subscribe(bus)
        leaving.close()
        await bus.send(Publish(event=event(1)))
        assert await stats(bus) == BusStatistics(subscribers=1, published=1, delivered=1,
                                                 dropped=0, gone=1)
        assert staying.receive_nowait() == event(1)


async def test_unsubscribe_ends_the_channel(autojump_clock, hang_guard):
    async with spawn(EventBus().run) as bus:
        channel = await subscribe(bus)
        await bus.send(Unsubscribe(channel=channel))
        await bus.send(Publish(event=event(1)))
        with pytest.raises(trio.EndOfChannel):
            await channel.receive()
        assert (await stats(bus)).subscribers == 0


async def test_a_stopped_bus_ends_every_subscription(autojump_clock, hang_guard):
    bus_actor = EventBus()
    async with spawn(bus_actor.run) as bus:
        channels = [await subscribe(bus) for _ in range(3)]
    for channel in channels:
        with pytest.raises(trio.EndOfChannel):
            await channel.receive()
    assert bus_actor.statistics().subscribers == 0


async def test_a_subscribe_whose_asker_gave_up_opens_nothing(autojump_clock, hang_guard):
    """Issue 17: the bus waited for a ``BrokenResourceError`` that a ``Reply`` never
    raises, so a subscription for an asker that timed out stayed open until it filled."""
    from memlite.actors.reply import Reply, _Answer

    bus_actor = EventBus()
    answer = _Answer()
    reply = Reply(answer)
    await answer.wait(trio.current_time() + 1)  # the asker's own timeout passes
    assert answer.timed_out and reply.abandoned
    bus_actor._handle(Subscribe(reply=reply))
    assert bus_actor.statistics().subscribers == 0
    assert bus_actor.statistics().gone == 1


async def test_publishing_never_waits_on_a_stuck_reader(autojump_clock, hang_guard):
    """A thousand events with a reader that never reads: the publisher never blocks."""
    async with spawn(EventBus(buffer=8).run) as bus:
        await subscribe(bus)
        start = trio.current_time()
        for i in range(1000):
            await bus.send(Publish(event=event(i)))
        assert (await stats(bus)).dropped == 1
        assert trio.current_time() == start


def test_buffer_must_be_positive():
    with pytest.raises(ValueError, match="positive"):
        EventBus(buffer=0)
