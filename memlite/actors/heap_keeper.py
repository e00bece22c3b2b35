"""The heap keeper: hands freed memory back to the system once the worker goes quiet.

Why: a search frees everything it allocated, but the C allocator keeps the freed pages
for reuse, so a burst of searches leaves the worker larger for the rest of its life.
Measured at 100,000 observations in one project (one process, 50 hybrid searches, glibc,
one arena): 115.7 MB of anonymous memory after the searches, 91.4 MB after one trim (the
in-memory vector index, ~44 MB of it, is live and stays); the rescoring of 8,000
candidates alone builds a ~12 MB float copy per search. The embedder already trims after
each backlog of embeddings (``embedder.py``); searches and hook traffic had nothing.
A trim walks the heap (~1 ms for ~100 MB) and takes the allocator's lock, so it is never
run per request: once, ``quiet`` seconds after the last request of a burst, on a thread.
Where the platform has no such call (``memlite.heap``: musl, Windows) it does nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, assert_never

import attrs
import trio

from memlite.actors.core import ActorRef, Mailbox, Reply
from memlite.heap import release_free_memory
from memlite.services import Activity

__all__ = ["HeapKeeper", "HeapStatus", "Inbox", "QUIET_SECONDS"]

log = logging.getLogger(__name__)

QUIET_SECONDS = 5.0
"""How long after the last request the heap is trimmed (one trim per burst)."""
IDLE_POLL_SECONDS = QUIET_SECONDS
"""With nothing new since the last trim, how often the keeper looks at the clock (a
request does not wake it: the trim comes ``quiet`` to ``quiet + idle_poll`` seconds after
a burst's last request)."""


@attrs.frozen(kw_only=True)
class GetHeapStatus:
    """Answer: ``HeapStatus``."""

    reply: Reply[HeapStatus]


Inbox = GetHeapStatus


@attrs.frozen(kw_only=True)
class HeapStatus:
    """Trims run, trims that failed, and the request count at the last trim."""

    releases: int
    failures: int
    requests_at_release: int


class HeapKeeper:
    """Trims the heap once after each burst of requests, when the worker is quiet.

    Args:
        activity: the HTTP front's request clock (``last_request_at``, ``requests``).
        release: what trims (``memlite.heap.release_free_memory``; tests pass their own).
        quiet: seconds with no request before a trim (``QUIET_SECONDS``).
        idle_poll: with no request since the last trim, seconds between two looks.
        offload: runs ``release`` off the event loop (``trio.to_thread.run_sync``; tests
            on virtual time run it inline, where a thread would let the clock jump).

    Mailbox:
        ``GetHeapStatus`` only (size 8), answered at once.
    Lifecycle:
        ``run`` reports its ref, then waits: until ``quiet`` seconds after the last
        request when requests came since the last trim, else ``idle_poll`` seconds. Once
        the worker has been quiet that long after new requests, it runs ``release`` on a
        thread, once; the next trim needs new requests. Ends when its mailbox closes.
    Failure:
        A ``release`` that raises is logged and counted; the keeper goes on (the next
        burst tries again). Nothing else can fail.
    Timeouts:
        None of its own: a trim is bounded by the heap's size (milliseconds); a stop
        abandons the thread (``abandon_on_cancel``).
    """

    def __init__(self, activity: Activity, *, release: Callable[[], object] =
                 release_free_memory, quiet: float = QUIET_SECONDS,
                 idle_poll: float = IDLE_POLL_SECONDS,
                 offload: Callable[..., Awaitable[Any]] = trio.to_thread.run_sync) -> None:
        if quiet <= 0 or idle_poll <= 0:
            raise ValueError(f"quiet and idle_poll must be positive, not {quiet!r}, "
                             f"{idle_poll!r}")
        self.activity = activity
        self.release = release
        self.quiet = quiet
        self.idle_poll = idle_poll
        self.offload = offload
        self._releases = self._failures = 0
        self._requests_at_release = activity.requests

    def status(self) -> HeapStatus:
        return HeapStatus(releases=self._releases, failures=self._failures,
                          requests_at_release=self._requests_at_release)

    def _next_look(self) -> float:
        """When to look next (Trio time)."""
        now = trio.current_time()
        if self.activity.requests == self._requests_at_release:
            return now + self.idle_poll
        return max(now, self.activity.last_request_at + self.quiet)

    async def run(
        self, *, task_status: trio.TaskStatus[ActorRef] = trio.TASK_STATUS_IGNORED
    ) -> None:
        with Mailbox("heap", size=8) as mailbox:
            task_status.started(mailbox.ref)
            while True:
                try:
                    message: Inbox | None = await mailbox.receive_before(self._next_look())
                except trio.EndOfChannel:
                    return  # the mailbox closed: stopped
                if message is not None:
                    self._handle(message)
                    continue
                seen = self.activity.requests
                if seen == self._requests_at_release:
                    continue
                if trio.current_time() - self.activity.last_request_at < self.quiet:
                    continue  # a request came meanwhile: wait for quiet again
                await self._release(seen)

    def _handle(self, message: Inbox) -> None:
        match message:
            case GetHeapStatus(reply=reply):
                with reply:
                    reply.send_nowait(self.status())
            case _:
                assert_never(message)

    async def _release(self, seen: int) -> None:
        self._requests_at_release = seen
        try:
            await self.offload(self.release, abandon_on_cancel=True)
        except Exception as exc:  # noqa: BLE001 - a failed trim must not stop the keeper
            self._failures += 1
            log.warning("heap keeper: releasing freed memory failed: %s", exc)
            return
        self._releases += 1
