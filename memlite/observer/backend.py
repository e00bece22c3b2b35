"""Observer backends: what turns a session's events into observations and a summary.

``ObserverBackend`` is the protocol the session actor drives; two implement it:

* ``RulesBackend`` (``name = "rules"``): the deterministic extractor of
  :mod:`memlite.observer.rules`; no AI, no process, never fails.
* ``ClaudeBackend`` (``name = "claude"``): one multi-turn conversation per session
  (:mod:`memlite.observer.conversation`), opened lazily under the governor's
  ``CapacityLimiter`` and dropped after any failure, so the next turn (a retry or a
  replay) always goes to a fresh conversation. Every reply is classified by
  :func:`memlite.observer.parse.classify`; only valid ``<observation>``/``<summary>`` XML
  becomes a record. A quota, auth or rate-limit reply raises ``QuotaPaused`` (the caller
  pauses with backoff and keeps the events pending); empty, prose and malformed replies
  raise ``BadReply``.

Single-turn fallback: when no conversation can be held (``fallback_after`` failures in a
row of opening one or of its turns, e.g. the CLI crashes at connect), the backend observes
each batch in one fresh conversation of a single turn (``prompts.render_batch``, opened
with the same locked-down config, launcher and process ownership, closed right after the
turn), the observations linked to every event of the batch. It tries multi-turn again
after ``retry_multi_after`` seconds (10 minutes). The fallback is per backend, i.e. per
session.

SDK session id: ``sdk_session_id`` is the id the last conversation reported; the session
actor records it in ``sessions.sdk_session_id`` (``SetSdkSessionId``) for diagnosis only.
Replay never resumes it (DESIGN §1): pending events always go to a fresh conversation.

``choose_backend(mode, cli_available)`` maps the OBSERVER setting to a backend name:
``auto`` is ``claude`` when a CLI can be run, else ``rules``.
"""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

import trio

from memlite.errors import ObserverError, ObserverErrorResult, ObserverUnavailable
from memlite.observer import clipath, parse, prompts, rules
from memlite.observer.governor import Governor
from memlite.observer.shape import payload_of
from memlite.storage.records import Event, NewObservation, NewSummary

__all__ = [
    "OBSERVABLE_EVENTS",
    "BadReply",
    "ClaudeBackend",
    "ObserverBackend",
    "QuotaPaused",
    "RulesBackend",
    "choose_backend",
    "claude_factory",
    "cli_available",
]

log = logging.getLogger(__name__)

OBSERVABLE_EVENTS = frozenset({"PostToolUse", "PostToolUseFailure"})
"""Events that are observed; the others (prompts, Stop, ...) feed the summary only."""


class QuotaPaused(ObserverError):
    """The AI answered with a quota, auth or rate-limit message: pause, keep events."""

    def __init__(self, message: str, *, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class BadReply(ObserverError):
    """The AI answered something that is not our XML (empty, prose, malformed)."""

    def __init__(self, message: str, *, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class ObserverBackend(Protocol):
    """What a session actor needs from a backend (one instance per session)."""

    name: str
    tokens_used: int

    async def observe(self, events: Sequence[Event], *, project: str) -> list[NewObservation]:
        """Observations of ``events`` (each names its source events); [] = skip them all."""
        ...

    async def summarize(self, events: Sequence[Event], prompts: Sequence[str], *,
                        project: str, session_id: str) -> NewSummary | None:
        """The session summary at Stop, or None when there is nothing to say."""
        ...

    async def idle(self) -> None:
        """Nothing left to observe for now (a backend may give resources back)."""
        ...

    async def aclose(self) -> None:
        """The session is over: release everything."""
        ...


class RulesBackend:
    """The rules backend: a plain observation per event, no AI (see ``rules``)."""

    name = "rules"

    def __init__(self) -> None:
        self.tokens_used = 0

    async def observe(self, events: Sequence[Event], *, project: str) -> list[NewObservation]:
        return [o for o in (rules.observe(e, project=project) for e in events) if o]

    async def summarize(self, events: Sequence[Event], prompts: Sequence[str], *,
                        project: str, session_id: str) -> NewSummary | None:
        return rules.summarize(events, prompts, project=project, session_id=session_id)

    async def idle(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


Connect = Callable[[], AbstractAsyncContextManager[Any]]
"""Opens a conversation: an async context manager giving an object with
``ask(message, timeout) -> Reply(text, input_tokens, output_tokens)``."""


class ClaudeBackend:
    """The AI backend of one session, over a lazily opened conversation.

    Args:
        connect: opens a conversation (``lambda: open_conversation(config)``).
        governor: the shared limits; a limiter token is held while a conversation is open.
        turn_timeout: our deadline per turn (the CLI has none).
        budget: characters of tool output per event message.
    """

    name = "claude"

    def __init__(self, connect: Connect, governor: Governor, *, turn_timeout: float = 60.0,
                 budget: int = prompts.DEFAULT_BUDGET, fallback_after: int = 2,
                 retry_multi_after: float = 600.0) -> None:
        self.connect = connect
        self.governor = governor
        self.turn_timeout = turn_timeout
        self.budget = budget
        self.fallback_after = fallback_after
        self.retry_multi_after = retry_multi_after
        self.broken_in_row = 0  # conversations that failed to open or broke, in a row
        self.single_turn_until: float | None = None  # Trio time; None = multi-turn
        self.single_turns = 0
        self.sdk_session_id: str | None = None  # for diagnosis only, never resumed
        self.tokens_used = 0
        self.conversations = 0
        self.last_used = trio.current_time()
        self.busy = False
        self._conv: Any = None
        self._stack: contextlib.AsyncExitStack | None = None

    async def _open(self) -> Any:
        if self._conv is None:
            await self.governor.limiter.acquire_on_behalf_of(self)
            stack = contextlib.AsyncExitStack()
            stack.callback(self.governor.limiter.release_on_behalf_of, self)
            try:
                self._conv = await stack.enter_async_context(self.connect())
            except BaseException:
                await stack.aclose()
                raise
            self._stack = stack
            self.conversations += 1
        return self._conv

    async def _drop(self) -> None:
        stack, self._stack, self._conv = self._stack, None, None
        if stack is not None:
            await stack.aclose()

    @property
    def single_turn(self) -> bool:
        """True while the single-turn fallback is on (it ends ``retry_multi_after`` later)."""
        if self.single_turn_until is None:
            return False
        if trio.current_time() >= self.single_turn_until:
            self.single_turn_until, self.broken_in_row = None, 0  # try multi-turn again
            return False
        return True

    def _broke(self) -> None:
        self.broken_in_row += 1
        if self.broken_in_row >= self.fallback_after and self.single_turn_until is None:
            log.warning("observer conversation failed %d times in a row: single-turn "
                        "fallback for %s s", self.broken_in_row, self.retry_multi_after)
            self.single_turn_until = trio.current_time() + self.retry_multi_after

    async def _one_turn(self, message: str) -> Any:
        """One fresh conversation for one turn, closed right after (the fallback)."""
        await self._drop()  # holds no limiter token of ours from here
        await self.governor.limiter.acquire_on_behalf_of(self)
        try:
            async with self.connect() as conv:
                self.single_turns += 1
                reply = await conv.ask(message, timeout=self.turn_timeout)
                self._saw_session(conv)
                return reply
        finally:
            self.governor.limiter.release_on_behalf_of(self)

    def _saw_session(self, conv: Any) -> None:
        sid = getattr(conv, "session_id", None)
        if isinstance(sid, str) and sid:
            self.sdk_session_id = sid

    async def _ask(self, message: str, project: str, *, single: bool = False) -> parse.Reply:
        self.busy = True
        try:
            if single:
                reply = await self._one_turn(message)
            else:
                conv = await self._open()
                reply = await conv.ask(message, timeout=self.turn_timeout)
                self._saw_session(conv)
        except ObserverErrorResult as exc:
            await self._drop()
            limit = parse.classify(getattr(exc, "text", "") or str(exc))
            if limit.pauses:
                raise QuotaPaused(limit.reason or str(exc), kind=limit.kind) from exc
            if not single:
                self._broke()
            raise
        except ObserverUnavailable:
            await self._drop()
            raise
        except ObserverError:
            await self._drop()
            if not single:
                self._broke()
            raise
        finally:
            self.busy, self.last_used = False, trio.current_time()
        if not single:
            self.broken_in_row = 0
        tokens = int(reply.input_tokens) + int(reply.output_tokens)
        self.tokens_used += tokens
        self.governor.spend(tokens)
        classified = parse.classify(reply.text, project=project)
        if classified.pauses:
            await self._drop()  # a fresh conversation after the pause
            raise QuotaPaused(classified.reason or classified.kind, kind=classified.kind)
        return classified

    async def observe(self, events: Sequence[Event], *, project: str) -> list[NewObservation]:
        if not events:
            return []
        if self.single_turn:
            return await self._observe_batch(events, project)
        found: list[NewObservation] = []
        for index, event in enumerate(events):
            try:
                reply = await self._ask(prompts.render_event(event, budget=self.budget),
                                        project)
            except (QuotaPaused, ObserverUnavailable):
                raise
            except ObserverError:
                if self.single_turn:  # this failure turned the fallback on
                    return found + await self._observe_batch(events[index:], project)
                raise
            found += self._records(reply, [event], project)
        return found

    async def _observe_batch(self, events: Sequence[Event],
                             project: str) -> list[NewObservation]:
        """The single-turn fallback: the whole batch in one fresh one-turn conversation."""
        message = prompts.render_batch(events, budget=self.budget)
        reply = await self._ask(message, project, single=True)
        return self._records(reply, events, project)

    @staticmethod
    def _records(reply: parse.Reply, events: Sequence[Event],
                 project: str) -> list[NewObservation]:
        """The observations of ``reply``, linked to ``events`` (BadReply if not XML)."""
        ids = ", ".join(str(e.id) for e in events)
        if reply.kind == "skip":
            return []
        if reply.kind != "observations":
            raise BadReply(f"event {ids}: {reply.kind} reply {reply.reason}".strip(),
                           kind=reply.kind)
        first = events[0]
        return [NewObservation(
            session_id=first.session_id, project=project, type=o.type, title=o.title,
            subtitle=o.subtitle, narrative=o.narrative, facts=o.facts,
            concepts=o.concepts, files_read=o.files_read,
            files_modified=o.files_modified, source_event_ids=tuple(e.id for e in events),
            backend="ai", at_ms=max(e.created_at_epoch for e in events),
        ) for o in reply.observations]

    async def summarize(self, events: Sequence[Event], prompts_: Sequence[str], *,
                        project: str, session_id: str) -> NewSummary | None:
        last = next((str(payload_of(e).get("last_assistant_message") or "")
                     for e in reversed(events) if e.event_name == "Stop"), "")
        message = prompts.render_summary_request(prompts=prompts_, last_message=last,
                                                 budget=self.budget)
        reply = await self._ask(message, project, single=self.single_turn)
        if reply.kind != "summary" or reply.summary is None:
            raise BadReply(f"summary: {reply.kind} reply {reply.reason}".strip(),
                           kind=reply.kind)
        s = reply.summary
        return NewSummary(session_id=session_id, project=project, request=s.request,
                          investigated=s.investigated, learned=s.learned,
                          completed=s.completed, next_steps=s.next_steps,
                          at_ms=max((e.created_at_epoch for e in events), default=None))

    async def idle(self) -> None:
        """Give the conversation back when another session waits for one."""
        if self._conv is not None and self.governor.limiter.statistics().tasks_waiting:
            await self._drop()

    async def aclose(self) -> None:
        await self._drop()

    async def close_when_idle(self, idle_seconds: float) -> None:
        """Forever: close the conversation once it has been unused for ``idle_seconds``
        (OBSERVER_IDLE_MINUTES), giving its process and its limiter token back. Run it
        beside the session actor; the next turn opens a fresh conversation."""
        while True:
            deadline = self.last_used + idle_seconds
            if self._conv is not None and not self.busy and trio.current_time() >= deadline:
                await self._drop()
            await trio.sleep_until(max(deadline, trio.current_time() + idle_seconds)
                                   if self._conv is None or self.busy else deadline)


def cli_available() -> bool:
    """True when a Claude Code CLI can be run (the SDK's bundled one or ``claude``).

    It does not import claude-agent-sdk to find out (nothing in memlite does: that
    import costs ~37 MB): the bundled CLI's path is found from the package's location.
    If the conversation module is already loaded (a test may point ``BUNDLED_CLI`` at a
    fake), its own ``resolve_cli`` decides.
    """
    parts = sys.modules.get("memlite.observer.conversation_parts")
    if parts is not None:
        try:
            parts.resolve_cli(None)
        except ObserverUnavailable:
            return False
        return True
    return clipath.find_cli(bundled=clipath.bundled_cli()) is not None


def choose_backend(mode: str, cli: bool | Callable[[], bool] = cli_available) -> str:
    """``"claude"`` or ``"rules"`` for the OBSERVER setting (auto|claude|rules)."""
    if mode == "rules":
        return "rules"
    if mode == "claude":
        return "claude"
    available = cli() if callable(cli) else cli
    return "claude" if available else "rules"


def claude_factory(settings: Any, governor: Governor,
                   **overrides: Any) -> Callable[[str], ClaudeBackend]:
    """Builds a session's ClaudeBackend from settings (OBSERVER_MODEL, the data dir).

    ``overrides`` go to ``ConversationConfig`` (tests pass ``cli_path`` of a fake CLI).
    """
    def make(session_id: str) -> ClaudeBackend:
        # Imported at the first observed session, not at start (it no longer imports
        # claude-agent-sdk, whose import cost ~37 MB: streamjson.py; still, not needed idle).
        from memlite.observer.conversation import ConversationConfig, open_conversation

        config = ConversationConfig.from_settings(settings, session_id,
                                                  prompts.SYSTEM_PROMPT, **overrides)
        return ClaudeBackend(lambda: open_conversation(config), governor,
                             turn_timeout=config.turn_timeout)

    return make
