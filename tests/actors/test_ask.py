"""The one-shot ``Reply`` and the shared ask timer, on virtual time with exact assertions."""

from __future__ import annotations

import math

import attrs
import pytest
import trio
import trio.testing

from memlite.actors.core import Mailbox, Reply, spawn
from memlite.errors import ActorDied, AskTimeout


@attrs.frozen(kw_only=True)
class Ask:
    reply: Reply[str]


def next_deadline_in() -> float:
    return trio.lowlevel.current_statistics().seconds_to_next_deadline


async def test_the_reply_acts_as_a_one_slot_send_channel(autojump_clock, hang_guard):
    mailbox = Mailbox("m", size=4)
    async with trio.open_nursery() as nursery:
        answers: list[str] = []

        async def asker():
            answers.append(await mailbox.ref.ask(lambda reply: Ask(reply=reply), timeout=5))

        nursery.start_soon(asker)
        message = await mailbox.receive()
        reply = message.reply
        assert isinstance(reply, Reply) and repr(reply) == "<Reply open>"
        with reply:
            reply.send_nowait("first")
            with pytest.raises(trio.WouldBlock):
                reply.send_nowait("second")
        with pytest.raises(trio.ClosedResourceError):
            reply.send_nowait("after close")
        with pytest.raises(trio.ClosedResourceError):
            reply.clone()
        reply.close()  # idempotent
    assert answers == ["first"]


async def test_a_forwarded_clone_keeps_the_ask_alive(autojump_clock, hang_guard):
    front = Mailbox("front", size=4)
    back = Mailbox("back", size=4)

    async def forwarder():
        message = await front.receive()
        with message.reply:  # closes the front's own copy at once
            await back.ref.send(Ask(reply=message.reply.clone()))

    async def backend():
        message = await back.receive()
        await trio.sleep(3)
        with message.reply:
            await message.reply.send("from the back")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(forwarder)
        nursery.start_soon(backend)
        assert await front.ref.ask(lambda reply: Ask(reply=reply), timeout=5) == "from the back"
    assert trio.current_time() == 3


async def test_the_last_copy_closed_unanswered_fails_the_ask_at_once(autojump_clock, hang_guard):
    mailbox = Mailbox("m", size=4)

    async def drop_both():
        message = await mailbox.receive()
        copy = message.reply.clone()
        message.reply.close()
        await trio.sleep(1)
        await copy.aclose()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(drop_both)
        with pytest.raises(ActorDied):
            await mailbox.ref.ask(lambda reply: Ask(reply=reply), timeout=5)
    assert trio.current_time() == 1


async def test_asks_time_out_each_at_its_own_deadline(autojump_clock, hang_guard):
    mailbox = Mailbox("mute", size=8)
    timed_out: dict[float, float] = {}

    async def asker(seconds: float):
        with pytest.raises(AskTimeout):
            await mailbox.ref.ask(lambda reply: Ask(reply=reply), timeout=seconds)
        timed_out[seconds] = trio.current_time()

    async with trio.open_nursery() as nursery:
        for seconds in (3, 1, 2.5, 1):
            nursery.start_soon(asker, seconds)
    assert timed_out == {1: 1, 2.5: 2.5, 3: 3}


async def test_answered_asks_leave_no_deadline_behind(autojump_clock):
    async def echo(*, task_status=trio.TASK_STATUS_IGNORED):
        with Mailbox("echo", size=4) as mailbox:
            task_status.started(mailbox.ref)
            async for message in mailbox:
                with message.reply:
                    message.reply.send_nowait("pong")

    async with spawn(echo) as ref:
        for _ in range(3):
            assert await ref.ask(lambda reply: Ask(reply=reply), timeout=5) == "pong"
        assert next_deadline_in() == math.inf  # idle: the clock has nothing to jump to
        await trio.sleep(10)
    assert trio.current_time() == 10


async def test_an_ask_cancelled_from_outside_drops_the_late_answer(autojump_clock, hang_guard):
    mailbox = Mailbox("slow", size=4)
    with trio.move_on_after(1):
        await mailbox.ref.ask(lambda reply: Ask(reply=reply), timeout=5)
    assert trio.current_time() == 1
    late = await mailbox.receive()
    with late.reply:
        late.reply.send_nowait("too late")  # no error for the actor
    assert next_deadline_in() > 900  # only the hang guard's; the ask's 5 s is gone


async def test_many_answered_asks_do_not_pile_up(autojump_clock, hang_guard):
    """Thousands of asks answered while one stays waiting: its timeout still fires."""
    mailbox = Mailbox("m", size=4)
    outcome: list[float] = []

    async def waiting_one():
        with pytest.raises(AskTimeout):
            await mailbox.ref.ask(lambda reply: Ask(reply=reply), timeout=50)
        outcome.append(trio.current_time())

    async def answer_all():
        async for message in mailbox:
            if message.reply is not first:
                with message.reply:
                    message.reply.send_nowait("ok")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(waiting_one)
        first = (await mailbox.receive()).reply
        nursery.start_soon(answer_all)
        for _ in range(5000):
            assert await mailbox.ref.ask(lambda reply: Ask(reply=reply), timeout=100) == "ok"
        await trio.sleep(60)
        nursery.cancel_scope.cancel()
    assert outcome == [50]


@pytest.mark.parametrize("seconds", [-1, math.nan])
async def test_ask_refuses_a_negative_or_nan_timeout(autojump_clock, hang_guard, seconds):
    with pytest.raises(ValueError, match="timeout"):
        await Mailbox("m").ref.ask(lambda reply: Ask(reply=reply), timeout=seconds)
