"""The cost governor: concurrent conversations, the daily token budget, quota backoff.

One ``Governor`` is shared by every session actor of a worker:

* ``limiter``: a ``trio.CapacityLimiter(OBSERVER_CONCURRENCY)``; a Claude backend holds
  one token for as long as its conversation is open, so at most that many observer
  conversations (CLI processes) exist at once.
* ``spend(tokens)`` / ``budget_left()``: tokens used this UTC day against
  OBSERVER_DAILY_TOKENS; past it the rules backend takes over until the next UTC day.
* ``pause(reason)`` / ``wait_resumed()``: a quota, auth or rate-limit reply pauses the AI
  for every session (the account is shared), with exponential backoff: 60 s, 120 s, 240 s
  ... at most 1 h; the first good reply resets it.

Time is ``trio.current_time()`` for the backoff and the wall clock (``today``, UTC) only
for the budget's day, so both are testable (MockClock, a fake ``today``).
"""

from __future__ import annotations

import datetime
import logging
from collections.abc import Callable

import attrs
import trio

__all__ = ["Governor", "GovernorStatistics", "utc_today"]

log = logging.getLogger(__name__)


def utc_today() -> datetime.date:
    return datetime.datetime.now(datetime.UTC).date()


@attrs.frozen(kw_only=True)
class GovernorStatistics:
    """A snapshot for ``/api/debug/sessions``."""

    tokens_today: int
    daily_tokens: int
    conversations: int
    concurrency: int
    waiting: int
    paused_for: float
    pause_reason: str
    next_backoff: float


class Governor:
    """Shared limits of the AI observer (see the module docstring).

    Args:
        concurrency: OBSERVER_CONCURRENCY.
        daily_tokens: OBSERVER_DAILY_TOKENS (0: no AI at all).
        base_backoff: the first pause, seconds.
        max_backoff: the longest pause, seconds.
        today: the current UTC date (injected by tests).
    """

    def __init__(self, *, concurrency: int = 2, daily_tokens: int = 2_000_000,
                 base_backoff: float = 60.0, max_backoff: float = 3600.0,
                 today: Callable[[], datetime.date] = utc_today) -> None:
        self.limiter = trio.CapacityLimiter(concurrency)
        self.daily_tokens = daily_tokens
        self.base_backoff = base_backoff
        self.max_backoff = max_backoff
        self.today = today
        self.tokens_today = 0
        self._day = today()
        self.backoff = base_backoff
        self.paused_until: float | None = None
        self.pause_reason = ""

    def _roll(self) -> None:
        day = self.today()
        if day != self._day:
            self._day, self.tokens_today = day, 0

    def spend(self, tokens: int) -> None:
        """Count ``tokens`` (input + output of one turn) against today's budget."""
        self._roll()
        self.tokens_today += max(int(tokens), 0)

    def budget_left(self) -> bool:
        """True while today's tokens are under OBSERVER_DAILY_TOKENS."""
        self._roll()
        return self.tokens_today < self.daily_tokens

    def paused_for(self) -> float:
        """Seconds until the AI may be asked again (0 when not paused)."""
        if self.paused_until is None:
            return 0.0
        return max(self.paused_until - trio.current_time(), 0.0)

    def pause(self, reason: str) -> float:
        """Pause the AI for the current backoff, then double it. Returns the resume time.

        A pause while already paused (another session got the same quota reply) does
        not extend it or double the backoff again.
        """
        now = trio.current_time()
        if self.paused_until is not None and self.paused_until > now:
            return self.paused_until
        self.paused_until = now + self.backoff
        self.pause_reason = reason
        log.warning("observer paused for %.0f s: %s", self.backoff, reason)
        self.backoff = min(self.backoff * 2, self.max_backoff)
        return self.paused_until

    def succeeded(self) -> None:
        """A good reply: the next pause starts from the base backoff again."""
        self.backoff = self.base_backoff
        self.paused_until = None
        self.pause_reason = ""

    async def wait_resumed(self) -> None:
        """Sleep until the pause is over (returns at once when not paused)."""
        if self.paused_until is not None:
            await trio.sleep_until(self.paused_until)

    def statistics(self) -> GovernorStatistics:
        self._roll()
        stats = self.limiter.statistics()
        return GovernorStatistics(
            tokens_today=self.tokens_today, daily_tokens=self.daily_tokens,
            conversations=stats.borrowed_tokens, concurrency=int(stats.total_tokens),
            waiting=stats.tasks_waiting, paused_for=round(self.paused_for(), 3),
            pause_reason=self.pause_reason, next_backoff=self.backoff,
        )
