"""A scripted stand-in for the session supervisor, for timer tests on virtual time.

It answers ``ReapIdle`` and ``CountSessions`` at once (no threads, no real sessions), and
records every question with the virtual time it was asked, so a test compares the whole
schedule with ``==``.
"""

from __future__ import annotations

from typing import assert_never

import attrs
import trio

from memlite.actors.core import Mailbox
from memlite.actors.session import CountSessions, ReapIdle, SessionCount


@attrs.define
class FakeSessions:
    """``reaped`` is popped per ReapIdle (default: nothing); ``count`` answers CountSessions.

    ``broken`` makes it close every reply unanswered (the asker sees ``ActorDied``).
    """

    count: SessionCount = attrs.field(factory=lambda: SessionCount(active=0, ending=0,
                                                                   empty_since=0.0))
    reaped: list[list[str]] = attrs.field(factory=list)
    broken: bool = False
    asked: list[tuple[str, float, float | None]] = attrs.field(factory=list)

    async def run(self, *, task_status=trio.TASK_STATUS_IGNORED) -> None:
        with Mailbox("fake-sessions", size=8) as mailbox:
            task_status.started(mailbox.ref)
            async for message in mailbox:
                match message:
                    case ReapIdle(max_idle_seconds=max_idle, reply=reply):
                        self.asked.append(("reap", trio.current_time(), max_idle))
                        answer = self.reaped.pop(0) if self.reaped else []
                    case CountSessions(reply=reply):
                        self.asked.append(("count", trio.current_time(), None))
                        answer = self.count
                    case _:
                        assert_never(message)
                with reply:
                    if not self.broken:
                        reply.send_nowait(answer)
