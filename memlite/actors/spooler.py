"""The spooler: drains the hook spool at the worker's start and then while it runs.

Hooks spool an event when the worker is down, but also when it is up and slow (past the
hook's deadline), answers 5xx (a storage restart), or while it is starting. Draining
only at start left those events waiting for the next start, maybe days away (issue 13).
So one actor owns every drain of a running worker: one at start (before readiness), one
on request (``DrainNow``: the HTTP front asks once it serves), and one every ``period``
seconds when the spool holds a file (a ``listdir``, microseconds, when it holds none).
Drains never overlap: only this actor runs them.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable
from typing import assert_never

import attrs
import trio

from memlite.actors.core import ActorRef, Mailbox, Reply
from memlite.drain import DrainReport, drain_spool
from memlite.hooks import spool
from memlite.services import Services

__all__ = [
    "DrainNow",
    "Inbox",
    "PERIOD_SECONDS",
    "Spooler",
    "SpoolerStatistics",
    "spool_waiting",
]

log = logging.getLogger(__name__)

PERIOD_SECONDS = 5.0


@attrs.frozen(kw_only=True)
class DrainNow:
    """Drain now (the periodic schedule is unchanged). Answer: the ``DrainReport``,
    when ``reply`` is given."""

    reply: Reply[DrainReport] | None = None


Inbox = DrainNow


@attrs.frozen(kw_only=True)
class SpoolerStatistics:
    """Drains run, lines ingested and quarantined by them, drains that failed or stopped
    early (the database was down), and the last drain's report."""

    drains: int
    ingested: int
    quarantined: int
    failed: int
    last: DrainReport | None


def spool_waiting(data_dir: os.PathLike[str] | str) -> bool:
    """Whether the spool holds a file to drain (live or claimed)."""
    try:
        names = os.listdir(spool.spool_dir(data_dir))
    except OSError:
        return False
    return any(spool.is_spool_file(name) for name in names)


class Spooler:
    """Drains the spool at start, on request and periodically.

    Args:
        services: the worker's refs (ingestion needs storage, sessions, bus).
        period: seconds between checks of the spool directory (``PERIOD_SECONDS``).
        on_ready: awaited once after the start drain, before the actor reports its ref
            (the root sets ``services.ready`` there).
        after_start: awaited once after the actor reported its ref (the root rings
            the sessions that have pending events).
        drain: the drain function (``drain_spool``; tests inject a scripted one).

    Mailbox:
        ``DrainNow`` only (size 16). A ``DrainNow`` sent while a drain runs waits for it
        and runs one more (what it asks for may have been spooled meanwhile).
    Lifecycle:
        ``run`` drains once, awaits ``on_ready``, reports its ref, awaits ``after_start``,
        then handles messages and checks the spool at ``start + n * period``; it returns
        when its mailbox closes. A restart (one-for-one) drains again at its start, which
        is harmless: ingestion is idempotent.
    Failure:
        A drain that raises (a bug) is logged and counted, never fatal: the files stay
        claimed and the next drain retries them; a drain stopped by a database outage is
        counted the same. One bad line never fails a drain (``drain.py`` quarantines it).
    Timeouts:
        None of its own: each ingestion is bounded by ``ingest.STORE_TIMEOUT`` and
        ``ingest.PROJECT_TIMEOUT``. At shutdown the supervisor's grace cancels a drain in
        progress; its files stay claimed and are drained at the next start.
    """

    def __init__(self, services: Services, *, period: float | None = None,
                 on_ready: Callable[[], Awaitable[None]] | None = None,
                 after_start: Callable[[], Awaitable[None]] | None = None,
                 drain: Callable[[Services], Awaitable[DrainReport]] = drain_spool) -> None:
        period = PERIOD_SECONDS if period is None else period
        if period <= 0:
            raise ValueError(f"spooler period must be positive, not {period!r}")
        self.services = services
        self.period = period
        self.on_ready = on_ready
        self.after_start = after_start
        self._drain = drain
        self._drains = self._ingested = self._quarantined = self._failed = 0
        self._last: DrainReport | None = None

    def statistics(self) -> SpoolerStatistics:
        return SpoolerStatistics(drains=self._drains, ingested=self._ingested,
                                 quarantined=self._quarantined, failed=self._failed,
                                 last=self._last)

    async def drain(self) -> DrainReport | None:
        """One drain; None if it raised (logged)."""
        self._drains += 1
        try:
            report = await self._drain(self.services)
        except Exception:
            self._failed += 1
            log.exception("spool drain failed; the spool is kept for the next drain")
            return None
        self._last = report
        self._ingested += report.ingested
        self._quarantined += report.rejected
        if not report.complete:
            self._failed += 1
        return report

    async def run(
        self, *, task_status: trio.TaskStatus[ActorRef] = trio.TASK_STATUS_IGNORED
    ) -> None:
        await self.drain()
        if self.on_ready is not None:
            await self.on_ready()
        with Mailbox("spooler", size=16) as mailbox:
            task_status.started(mailbox.ref)
            if self.after_start is not None:
                await self.after_start()
            next_check = trio.current_time() + self.period
            while True:
                message: Inbox | None = None
                with trio.move_on_at(next_check):
                    try:
                        message = await mailbox.receive()
                    except trio.EndOfChannel:
                        return  # the mailbox closed: stopped
                if message is None:  # the check is due
                    next_check = max(next_check + self.period, trio.current_time())
                    if await trio.to_thread.run_sync(spool_waiting, self.services.data_dir):
                        await self.drain()
                else:
                    await self._handle(message)

    async def _handle(self, message: Inbox) -> None:
        match message:
            case DrainNow(reply=reply):
                report = await self.drain()
                if reply is not None:
                    with reply:
                        reply.send_nowait(report if report is not None
                                          else DrainReport(complete=False))
            case _:
                assert_never(message)
