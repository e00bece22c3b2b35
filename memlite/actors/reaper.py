"""The reaper: every minute, stop the session actors that have gone idle.

A Claude Code session that is closed without a SessionEnd (terminal killed, laptop lid,
SessionEnd's 1.5 s budget exceeded) would keep its session actor forever. The reaper asks
the session supervisor, every ``period`` seconds, to stop those idle for
SESSION_IDLE_MINUTES or more. A session actor busy with its observer is not idle; a hung
AI turn is ended by its own turn deadline, not by the reaper.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import assert_never

import attrs
import trio

from memlite.actors.core import ActorRef, Mailbox, Reply
from memlite.actors.session import ReapIdle
from memlite.errors import ActorError

__all__ = [
    "Inbox",
    "PERIOD_SECONDS",
    "Reaper",
    "ReaperStatistics",
]

log = logging.getLogger(__name__)

PERIOD_SECONDS = 60.0
ASK_TIMEOUT = 5.0


@attrs.frozen(kw_only=True)
class ReapNow:
    """Run a round now (the periodic schedule is unchanged). Answer: the stopped ids.

    Test-only: not in ``__all__``."""

    reply: Reply[list[str]]


Inbox = ReapNow


@attrs.frozen(kw_only=True)
class ReaperStatistics:
    """Rounds run, session actors stopped, rounds that failed (supervisor unreachable)."""

    rounds: int
    reaped: int
    failed: int


class Reaper:
    """Periodically stops idle session actors.

    Args:
        sessions: the session supervisor.
        max_idle_seconds: read at every round, so a settings change applies at the next
            one (the root passes ``SESSION_IDLE_MINUTES * 60`` from the live settings).
        period: seconds between rounds (60).

    Mailbox:
        ``ReapNow`` only (size 8), for tests and the dashboard.
    Lifecycle:
        ``run`` reports its ref, then runs a round at ``start + n * period`` for n = 1,
        2, ... (a fixed schedule: slow rounds do not drift it), until its mailbox closes.
    Failure:
        A round whose ask fails (supervisor restarting, timed out) is logged and counted;
        the next round tries again. Nothing else can fail.
    Timeouts:
        Each round's ask: ``ASK_TIMEOUT`` (5 s).
    """

    def __init__(self, sessions: ActorRef, *, max_idle_seconds: Callable[[], float],
                 period: float = PERIOD_SECONDS) -> None:
        if period <= 0:
            raise ValueError(f"reaper period must be positive, not {period!r}")
        self.sessions = sessions
        self.max_idle_seconds = max_idle_seconds
        self.period = period
        self._rounds = self._reaped = self._failed = 0

    def statistics(self) -> ReaperStatistics:
        return ReaperStatistics(rounds=self._rounds, reaped=self._reaped, failed=self._failed)

    async def run(
        self, *, task_status: trio.TaskStatus[ActorRef] = trio.TASK_STATUS_IGNORED
    ) -> None:
        with Mailbox("reaper", size=8) as mailbox:
            task_status.started(mailbox.ref)
            next_round = trio.current_time() + self.period
            while True:
                try:
                    message: Inbox | None = await mailbox.receive_before(next_round)
                except trio.EndOfChannel:
                    return  # the mailbox closed: stopped
                if message is None:  # the round is due
                    next_round += self.period
                    await self.reap()
                else:  # handled outside the timer, so a due round never cuts it short
                    await self._handle(message)

    async def _handle(self, message: Inbox) -> None:
        match message:
            case ReapNow(reply=reply):
                reaped = await self.reap()
                with reply:
                    reply.send_nowait(reaped)
            case _:
                assert_never(message)

    async def reap(self) -> list[str]:
        """One round: ask the supervisor to stop idle session actors; return their ids."""
        max_idle = self.max_idle_seconds()
        self._rounds += 1
        try:
            reaped: list[str] = await self.sessions.ask(
                lambda reply: ReapIdle(max_idle_seconds=max_idle, reply=reply),
                timeout=ASK_TIMEOUT)
        except ActorError as exc:
            self._failed += 1
            log.warning("reaper: round failed: %s", exc)
            return []
        self._reaped += len(reaped)
        if reaped:
            log.info("reaper: stopped %d idle session actor(s): %s", len(reaped),
                     ", ".join(reaped))
        return reaped
