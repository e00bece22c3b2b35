"""Scripted child fakes for the supervisor's tests (``test_supervisor*.py``).

Incarnation ``n`` of a :class:`Scripted` child follows ``steps[n-1]`` (then serves
forever); all its timing is virtual sleeps inside the fake, and it records what it did
(``history``) so tests wait on its own signals, never on wall time.
"""

from __future__ import annotations

import attrs
import trio

from memlite.actors.core import ChildCrashed, ChildSpec, Mailbox, Reply

__all__ = ["Boom", "Crash", "Deaf", "Exit", "FailStart", "Linger", "Ping", "Scripted",
           "Serve", "Step", "crashed"]


@attrs.frozen  # positional, so the class itself can be ask()'s message factory
class Ping:
    reply: Reply[str]


@attrs.frozen
class Boom:  # crash inside `with reply:`
    reply: Reply[str] | None


@attrs.frozen(kw_only=True)
class Serve:  # answer pings until the mailbox closes, then take `cleanup` seconds to return
    start_delay: float = 0.0
    cleanup: float = 0.0


@attrs.frozen(kw_only=True)
class Crash:  # start, then raise after `after` seconds
    after: float = 0.0


@attrs.frozen(kw_only=True)
class Exit:  # start, then return normally after `after` seconds
    after: float = 0.0


@attrs.frozen(kw_only=True)
class Deaf:  # start, then never read the mailbox nor return: only a cancel ends it
    pass


@attrs.frozen(kw_only=True)
class Linger:  # start, close the mailbox at once, then return after `after` seconds
    after: float = 0.0


@attrs.frozen(kw_only=True)
class FailStart:  # raise after `after` seconds, before reporting started()
    after: float = 0.0


Step = Serve | Crash | Exit | Deaf | Linger | FailStart


class Scripted:
    """A child fake whose incarnations follow a script, recording what they do."""

    def __init__(self, name: str, *steps: Step) -> None:
        self.name = name
        self.steps = steps
        self.attempts = 0
        self.history: list[tuple[str, int, float]] = []  # (entered|started|ended, attempt, at)
        self.stop_deadline: float | None = None
        self._changed = trio.Event()

    def spec(self, **options) -> ChildSpec:
        return ChildSpec(name=self.name, start=self.run, **options)

    async def wait_for(self, what: str, attempt: int) -> None:
        while not any(w == what and a == attempt for w, a, _ in self.history):
            await self._changed.wait()

    def _note(self, what: str, attempt: int) -> None:
        self.history.append((what, attempt, trio.current_time()))
        self._changed.set()
        self._changed = trio.Event()

    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED):
        self.attempts += 1
        attempt = self.attempts
        step = self.steps[attempt - 1] if attempt <= len(self.steps) else Serve()
        self._note("entered", attempt)
        try:
            match step:
                case FailStart(after=after):
                    await trio.sleep(after)
                    raise ValueError(f"{self.name} failed to start")
                case Serve(start_delay=delay):
                    await trio.sleep(delay)  # a slow start, deliberately before started()
            with Mailbox(self.name, size=4) as mailbox:
                task_status.started(mailbox.ref)
                self._note("started", attempt)
                await self._behave(step, attempt, mailbox)
            if isinstance(step, Linger):
                await trio.sleep(step.after)  # a dead mailbox in a task that is still running
        finally:
            self._note("ended", attempt)

    async def _behave(self, step: Step, attempt: int, mailbox: Mailbox) -> None:
        match step:
            case Crash(after=after):
                await trio.sleep(after)
                raise ValueError(f"{self.name} crashed in attempt {attempt}")
            case Exit(after=after):
                await trio.sleep(after)
            case Deaf():
                await trio.sleep_forever()
            case Serve(cleanup=cleanup):
                async for message in mailbox:
                    match message:
                        case Ping(reply=reply):
                            with reply:
                                reply.send_nowait(f"{self.name}#{attempt}")
                        case Boom(reply=reply):
                            with reply:
                                raise ValueError("boom")
                self.stop_deadline = trio.current_effective_deadline()
                await trio.sleep(cleanup)


def crashed(name: str, at: float, attempt: int) -> ChildCrashed:
    return ChildCrashed(name=name, at=at, error=f"ValueError: {name} crashed in attempt {attempt}")
