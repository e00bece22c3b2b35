"""Mailbox, ActorRef, ask, spawn and the exported surface, on virtual time with exact assertions."""

from __future__ import annotations

import math

import attrs
import pytest
import trio
import trio.testing

import memlite.actors.core as core
from memlite.actors.core import (
    Actor,
    ActorRef,
    ChildSpec,
    Mailbox,
    MailboxStatistics,
    Reply,
    Restart,
    Supervisor,
    spawn,
)
from memlite.errors import ActorDied, AskTimeout, MailboxFull


@attrs.frozen(kw_only=True)
class Ping:
    reply: Reply[str]


@attrs.frozen(kw_only=True)
class Lookup:
    """Answered with an exception instance: the asker should raise it."""

    reply: Reply[str]


@attrs.frozen(kw_only=True)
class Boom:
    """Crash inside ``with reply:``."""

    reply: Reply[str]


@attrs.frozen(kw_only=True)
class Ghost:
    """Crash after receiving, without ever touching the reply."""

    reply: Reply[str]


@attrs.frozen(kw_only=True)
class Stop:
    pass


Inbox = Ping | Lookup | Boom | Ghost | Stop


class Echo:
    """A tiny actor written the way the module docstring says actors are written."""

    def __init__(self, name: str = "echo") -> None:
        self.name = name

    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED):
        with Mailbox(self.name, size=4) as mailbox:
            task_status.started(mailbox.ref)
            async for message in mailbox:
                match message:
                    case Ping(reply=reply):
                        with reply:
                            reply.send_nowait(f"pong from {self.name}")
                    case Lookup(reply=reply):
                        with reply:
                            reply.send_nowait(LookupError("no such key"))
                    case Boom(reply=reply):
                        with reply:
                            raise ValueError("boom")
                    case Ghost():
                        raise ValueError("ghosted")
                    case Stop():
                        return


async def test_tests_run_on_the_autojump_clock(autojump_clock, hang_guard):
    assert trio.lowlevel.current_clock() is autojump_clock
    start = trio.current_time()
    await trio.sleep(100)
    assert trio.current_time() == start + 100


async def test_ask_returns_the_answer(autojump_clock, hang_guard):
    async with spawn(Echo().run) as ref:
        assert isinstance(ref, ActorRef)
        assert ref.name == "echo"
        assert await ref.ask(lambda reply: Ping(reply=reply), timeout=5) == "pong from echo"


async def test_ask_raises_the_exception_the_actor_answers_with(autojump_clock, hang_guard):
    async with spawn(Echo().run) as ref:
        with pytest.raises(LookupError, match="no such key"):
            await ref.ask(lambda reply: Lookup(reply=reply), timeout=5)
        assert await ref.ask(lambda reply: Ping(reply=reply), timeout=5) == "pong from echo"


async def test_a_stopped_actor_raises_actor_died(autojump_clock, hang_guard):
    async with spawn(Echo().run) as ref:
        await ref.send(Stop())
        await trio.testing.wait_all_tasks_blocked()
        with pytest.raises(ActorDied):
            await ref.ask(lambda reply: Ping(reply=reply), timeout=5)
        with pytest.raises(ActorDied):
            await ref.send(Stop())
        with pytest.raises(ActorDied):
            ref.send_nowait(Stop())
    assert trio.current_time() == 0


@pytest.mark.parametrize("message", [Boom, Ghost], ids=["inside-with-reply", "reply-untouched"])
async def test_ask_fails_at_once_when_the_actor_crashes_holding_the_message(
    autojump_clock, hang_guard, message
):
    crashes: list[str] = []

    async def echo_that_crashes(*, task_status=trio.TASK_STATUS_IGNORED):
        # Contain the crash here so it does not cancel the asker before it sees ActorDied.
        try:
            await Echo().run(task_status=task_status)
        except ValueError as exc:
            crashes.append(str(exc))

    async with spawn(echo_that_crashes) as ref:
        with pytest.raises(ActorDied):
            await ref.ask(lambda reply: message(reply=reply), timeout=5)
        assert trio.current_time() == 0  # not at the 5 s timeout
    assert crashes == ["boom" if message is Boom else "ghosted"]


async def test_ask_queued_when_the_mailbox_closes_fails_at_once(autojump_clock, hang_guard):
    mailbox = Mailbox("idle", size=4)
    outcome: list[str] = []

    async def asker():
        try:
            await mailbox.ref.ask(lambda reply: Ping(reply=reply), timeout=5)
        except ActorDied:
            outcome.append("died")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(asker)
        await trio.testing.wait_all_tasks_blocked()
        assert mailbox.statistics().queued == 1
        mailbox.close()
    assert outcome == ["died"]
    assert trio.current_time() == 0


async def test_ask_times_out_at_exactly_its_timeout(autojump_clock, hang_guard):
    mailbox = Mailbox("mute", size=4)
    with pytest.raises(AskTimeout) as raised:
        await mailbox.ref.ask(lambda reply: Ping(reply=reply), timeout=2.5)
    assert trio.current_time() == 2.5
    assert isinstance(raised.value, TimeoutError)
    # An answer that arrives after the asker gave up must not crash the actor.
    late = await mailbox.receive()
    with late.reply:
        late.reply.send_nowait("too late")


async def test_ask_timeout_includes_waiting_for_mailbox_space(autojump_clock, hang_guard):
    mailbox = Mailbox("busy", size=1)
    mailbox.ref.send_nowait(Stop())
    with pytest.raises(AskTimeout):
        await mailbox.ref.ask(lambda reply: Ping(reply=reply), timeout=3)
    assert trio.current_time() == 3
    assert mailbox.statistics().queued == 1


async def test_full_mailbox_refuses_send_nowait_and_makes_send_wait(autojump_clock, hang_guard):
    mailbox = Mailbox("storage", size=2)
    ref = mailbox.ref
    ref.send_nowait(1)
    ref.send_nowait(2)
    with pytest.raises(MailboxFull):
        ref.send_nowait(3)
    delivered_at: list[float] = []

    async def sender():
        await ref.send(3)
        delivered_at.append(trio.current_time())

    async with trio.open_nursery() as nursery:
        nursery.start_soon(sender)
        await trio.testing.wait_all_tasks_blocked()
        assert delivered_at == []  # backpressure: the sender waits
        assert ref.statistics() == MailboxStatistics(
            name="storage", queued=2, size=2, blocked_senders=1
        )
        await trio.sleep(7)  # the actor is slow: the sender keeps waiting
        assert await mailbox.receive() == 1
    assert delivered_at == [7]
    assert mailbox.receive_nowait_batch(10) == [2, 3]


async def test_statistics_report_name_depth_and_capacity(autojump_clock, hang_guard):
    mailbox = Mailbox("storage", size=256)
    assert mailbox.ref.statistics() == MailboxStatistics(
        name="storage", queued=0, size=256, blocked_senders=0
    )
    for n in range(3):
        await mailbox.ref.send(n)
    assert mailbox.ref.statistics().queued == 3


async def test_receive_nowait_batch_takes_only_what_is_queued(autojump_clock, hang_guard):
    mailbox = Mailbox("batch", size=8)
    assert mailbox.receive_nowait_batch(4) == []
    for n in range(6):
        mailbox.ref.send_nowait(n)
    assert mailbox.receive_nowait_batch(4) == [0, 1, 2, 3]
    assert mailbox.receive_nowait_batch(4) == [4, 5]
    mailbox.close()
    assert mailbox.receive_nowait_batch(4) == []


async def test_a_closed_mailbox_refuses_senders_and_ends_the_receive_loop(
    autojump_clock, hang_guard
):
    mailbox = Mailbox("closing", size=1)
    mailbox.ref.send_nowait("queued")
    outcome: list[str] = []

    async def blocked_sender():
        try:
            await mailbox.ref.send("waiting")
        except ActorDied:
            outcome.append("died")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(blocked_sender)
        await trio.testing.wait_all_tasks_blocked()
        with mailbox:
            pass
    assert outcome == ["died"]
    with pytest.raises(ActorDied):
        mailbox.ref.send_nowait("late")
    with pytest.raises(trio.EndOfChannel):
        await mailbox.receive()
    assert [message async for message in mailbox] == []
    mailbox.close()  # idempotent


@pytest.mark.parametrize("size", [0, -1, math.inf, 1.5, True])
async def test_mailbox_size_must_be_a_positive_int(autojump_clock, hang_guard, size):
    with pytest.raises(ValueError, match="positive int"):
        Mailbox("bad", size=size)


async def test_child_specs_and_supervisors_reject_bad_settings(autojump_clock, hang_guard):
    spec = ChildSpec(name="a", start=Echo().run)
    assert (spec.restart, spec.shutdown) == (Restart.PERMANENT, 5.0)
    with pytest.raises(ValueError):
        ChildSpec(name="a", start=Echo().run, shutdown=-1)
    with pytest.raises(ValueError, match="unique"):
        Supervisor([spec, spec])
    with pytest.raises(ValueError):
        Supervisor([spec], intensity=-1)
    sup = Supervisor([])
    sup.request_stop()
    await sup.run()  # a supervisor stopped before it ran starts nothing and returns
    with pytest.raises(RuntimeError):
        await sup.run()


async def test_leaving_spawn_cancels_the_actor_and_closes_its_mailbox(autojump_clock, hang_guard):
    async with spawn(Echo().run) as ref:
        pass
    with pytest.raises(ActorDied):
        ref.send_nowait(Stop())
    assert trio.current_time() == 0


async def test_spawn_raises_a_lone_error_as_itself(autojump_clock, hang_guard):
    with pytest.raises(KeyError, match="from the block"):
        async with spawn(Echo().run):
            raise KeyError("from the block")


async def test_actor_base_class_serves_its_mailbox(autojump_clock, hang_guard):
    class Doubler(Actor):
        name = "doubler"
        mailbox_size = 2

        def __init__(self) -> None:
            self.seen: list[int] = []

        async def handle(self, message):
            self.seen.append(message)

    doubler = Doubler()
    async with spawn(doubler.run) as ref:
        await ref.send(1)
        await ref.send(2)
        await trio.testing.wait_all_tasks_blocked()
        assert ref.statistics().size == 2
    assert doubler.seen == [1, 2]


async def test_core_exports_the_whole_runtime(autojump_clock, hang_guard):
    promised = {
        "Mailbox", "ActorRef", "spawn", "Restart", "ChildSpec", "Supervisor",
        "ChildStarted", "ChildExited", "ChildCrashed", "ChildRestarted", "ChildStopped",
        "SupervisorEscalated",
    }  # fmt: skip
    assert promised <= set(core.__all__)
    assert core.__all__ == sorted(core.__all__)
    assert all(hasattr(core, name) for name in core.__all__)
