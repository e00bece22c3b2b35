"""One-shot replies for ``ActorRef.ask``: the answer slot, its deadline, and ``Reply``.

An ask needs a place for exactly one answer, a way to learn that the actor died before
giving it, and a deadline. A Trio memory channel pair and a cancel scope per ask do all of
that but cost ~20 µs, which the storage actor pays tens of thousands of times a second. So:

* ``_Answer`` is the slot the asking task parks on (``trio.lowlevel`` wait/reschedule);
* ``_AskTimer`` is one task per Trio run holding every waiting ask's deadline in a heap,
  instead of one cancel scope per ask;
* ``Reply`` is what the message carries: it behaves like the send side of a memory channel
  of size one (``send_nowait``, ``send``, ``clone``, ``close``, ``with``), and closing its
  last clone without answering wakes the asker with ``ActorDied``.

``memlite.actors.core`` re-exports ``Reply``; the rest is private to the runtime.
"""

from __future__ import annotations

import heapq
import itertools
import math
from typing import Any, Generic, TypeVar

import outcome
import trio

__all__ = ["Reply"]

T = TypeVar("T")


class _Answer:
    """What the asker waits on; shared by a ``Reply`` and its clones."""

    __slots__ = ("answered", "value", "open", "task", "timer", "timed_out", "gone")

    def __init__(self) -> None:
        self.answered = False
        self.value: Any = None
        self.open = 1  # reply handles not yet closed
        self.task: Any = None  # the asker, while it waits
        self.timer: _AskTimer | None = None  # holds this ask's deadline while it waits
        self.timed_out = False
        self.gone = False  # the asker stopped waiting (timed out or cancelled)

    def abort(self, _raise_cancel: object) -> trio.lowlevel.Abort:
        # Cancelled from outside. A later answer just stays here, as in a channel's buffer.
        self.task = None
        self.gone = True
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
            self.gone = True
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
        try:
            return cls._var.get()
        except LookupError:
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

    @property
    def abandoned(self) -> bool:
        """True once the asker stopped waiting (its timeout passed, or it was cancelled).

        An actor about to spend real work on an answer checks this first: nobody would
        read the answer, so the work is skipped (the embedder does, per query).
        """
        return self._answer.gone

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
