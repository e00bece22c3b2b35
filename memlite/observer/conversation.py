"""One locked-down, multi-turn Claude Code conversation per Claude Code session.

Use::

    async with open_conversation(config) as conv:
        turn = await conv.ask(message, timeout=60)    # turn.text, turn.input_tokens, ...
        conv.session_id                               # for ConversationConfig.resume

The CLI runs through ``launcher.py`` (see there and ``registry.py``) so it belongs to the
worker: own process group, parent-death signal, registry entry, killed by marker.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import trio
from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    ResultMessage,
    SystemMessage,
    TextBlock,
)

from memlite.errors import (
    ObserverClosed,
    ObserverCrashed,
    ObserverError,
    ObserverErrorResult,
    ObserverTimeout,
)
from memlite.observer import registry
from memlite.observer.conversation_parts import (
    ConversationConfig,
    TurnResult,
    deny_tools,
    map_error,
    resolve_cli,
    stop_when_idle,
)

__all__ = [
    "Conversation",
    "ConversationConfig",
    "TurnResult",
    "open_conversation",
    "resolve_cli",
    "stop_when_idle",
]

log = logging.getLogger(__name__)

CLOSE_SLACK = 1.5
"""Past ``close_grace``: draining the SDK's messages and waiting for the killed CLI."""
CLOSE_MIN = 0.25
"""Even a caller already cancelled gets this long (kill, then wait for the process)."""
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


class Conversation:
    """A Claude Code conversation that observes one session; one turn at a time.

    Locked down: no tools (``tools=[]`` and a ``can_use_tool`` that denies anything),
    ``setting_sources=[]``, no MCP servers, no plugins, its own empty working directory
    ``<data_dir>/observer/<session>/``, ``max_turns`` per message, our system prompt.
    Auth is Claude Code's own login (inherited environment); ``config.env`` overrides.

    Lifecycle:
        ``start()`` spawns the CLI (through the launcher) and completes the SDK's
        initialize handshake; ``ask()`` runs one turn; ``aclose()`` ends it. Use
        :func:`open_conversation`. ``last_activity`` (Trio time) is updated at every turn
        so the owner can stop a silent one (:func:`stop_when_idle`).

    Failure:
        Any failure maps to an ObserverError (``ObserverCrashed`` for an exit or a dead
        pipe, ``ObserverProtocolError`` for corrupt or oversize output,
        ``ObserverErrorResult`` for an ``is_error`` result, ``ObserverTimeout``) and breaks
        the conversation: its processes are SIGKILLed at once (a late answer must never
        be read as the next turn's) and later asks raise ``ObserverClosed``. The caller
        starts a new one, with ``resume=session_id`` when it wants the history.

    Timeouts:
        ``turn_timeout`` (or ``ask(timeout=)``) bounds every turn with ``trio.fail_after``
        (the SDK has no per-turn deadline). ``connect_timeout`` bounds the start with a
        watchdog that kills the process (a cancelled SDK connect would first sit in its
        own 5 s close). Close waits ``close_grace`` for a graceful exit (the SDK alone
        would wait 5 + 5 s), then kills; a failed turn has already killed, so its close
        is immediate.
    """

    def __init__(self, config: ConversationConfig) -> None:
        self.config = config
        self.marker = os.urandom(12).hex()
        self.session_id: str | None = config.resume
        self.last_activity = trio.current_time()
        self.turns = 0
        self.busy = False
        self._client: ClaudeSDKClient | None = None
        self._messages: AsyncIterator[Any] | None = None
        self._lock = trio.Lock()
        self._broken: ObserverError | None = None
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed or self._broken is not None

    def _options(self, wrapper: Path, workdir: Path) -> ClaudeAgentOptions:
        cfg = self.config
        env = {**cfg.env, registry.MARKER_ENV: self.marker, "MEMLITE_OBSERVER_PARENT":
               str(os.getpid()), "MEMLITE_OBSERVER_REGISTRY": str(registry.registry_dir(
                   cfg.data_dir))}
        return ClaudeAgentOptions(
            cli_path=wrapper, cwd=workdir, env=env, system_prompt=cfg.system_prompt,
            model=cfg.model, max_turns=cfg.max_turns, resume=cfg.resume, tools=[],
            allowed_tools=[], setting_sources=[], mcp_servers={}, plugins=[],
            can_use_tool=deny_tools, max_buffer_size=cfg.max_buffer_size,
            stderr=lambda line: log.debug("observer cli: %s", line))

    async def start(self) -> None:
        """Spawn the CLI and finish the handshake, within ``connect_timeout``."""
        cfg = self.config
        real = resolve_cli(cfg.cli_path)
        workdir = cfg.data_dir / "observer" / (_SAFE.sub("_", cfg.session) or "session")
        workdir.mkdir(mode=0o700, parents=True, exist_ok=True)
        wrapper = await trio.to_thread.run_sync(registry.write_wrapper, cfg.data_dir, real)
        self._client = ClaudeSDKClient(self._options(wrapper, workdir))
        # Not fail_after: a cancelled connect() runs the SDK's shielded close (5 s grace)
        # before we regain control. Killing the process makes connect() fail at once.
        # Cancelled from outside (a stopping worker cuts its observers at once) the same
        # holds: the watchdog, cancelled too, kills the process while the connect is
        # still running, so the SDK's close ends at once (it took 5 s: the worker overran
        # its stop bound when it stopped while a CLI was starting).
        error: Exception | None = None
        timed_out = False
        connecting = True

        async def watchdog() -> None:
            nonlocal timed_out
            try:
                await trio.sleep(cfg.connect_timeout)
            except trio.Cancelled:
                if connecting:
                    registry.kill_marked(self.marker, self.config.data_dir)
                raise
            timed_out = True
            await _kill_marked(self.marker, self.config.data_dir)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(watchdog)
            try:
                await self._client.connect()
            except Exception as exc:  # noqa: BLE001 - mapped below
                error = exc
            finally:
                connecting = False
            nursery.cancel_scope.cancel()
        if timed_out:
            self._break(ObserverTimeout(f"observer CLI did not start in {cfg.connect_timeout} s"))
        if error is not None:
            self._break(map_error(error))
        # One iterator for the whole conversation: the SDK's nested generators warn when
        # one is dropped unfinished, so it is read to its end in aclose().
        self._messages = self._client.receive_messages()
        self.last_activity = trio.current_time()

    def _break(self, error: ObserverError) -> None:
        """Mark broken, kill our processes now, raise ``error``."""
        self._broken = error
        registry.kill_marked(self.marker, self.config.data_dir)
        raise error

    async def ask(self, message: str, timeout: float | None = None) -> TurnResult:  # noqa: ASYNC109
        """Send ``message`` as one user turn; return the assistant's text and the usage.

        Raises:
            ObserverTimeout: no result within ``timeout`` (default ``turn_timeout``).
            ObserverCrashed, ObserverProtocolError, ObserverErrorResult: see the class.
            ObserverClosed: the conversation is closed or broken.
        """
        if self._broken is not None or self._closed or self._client is None:
            raise ObserverClosed(f"observer conversation is closed ({self._broken or 'closed'})")
        limit = self.config.turn_timeout if timeout is None else timeout
        async with self._lock:
            self.busy, self.last_activity = True, trio.current_time()
            texts: list[str] = []
            result: ResultMessage | None = None
            try:
                with trio.fail_after(limit):
                    await self._client.query(message)
                    while result is None:
                        msg = await anext(self._messages, None)
                        if msg is None:
                            raise ObserverCrashed("observer CLI output ended mid-turn")
                        if isinstance(msg, AssistantMessage):
                            texts += [b.text for b in msg.content if isinstance(b, TextBlock)]
                        elif isinstance(msg, SystemMessage) and msg.subtype == "init":
                            self.session_id = msg.data.get("session_id") or self.session_id
                        elif isinstance(msg, ResultMessage):
                            result = msg
            except trio.TooSlowError:
                self._break(ObserverTimeout(f"observer turn took longer than {limit} s"))
            except trio.Cancelled:  # the owner gave up on this turn: so do we
                self._broken = ObserverClosed("an observer turn was cancelled")
                registry.kill_marked(self.marker, self.config.data_dir)
                raise
            except ObserverError as exc:
                self._break(exc)
            except Exception as exc:
                self._break(map_error(exc))
            finally:
                self.busy, self.last_activity = False, trio.current_time()
        assert result is not None
        self.session_id = result.session_id or self.session_id
        self.turns += 1
        if result.is_error:
            self._break(ObserverErrorResult(
                f"observer turn failed ({result.subtype}): {(result.result or '')[:200]}",
                text=result.result or "", subtype=result.subtype))
        usage = result.usage or {}
        return TurnResult(
            text="".join(texts), input_tokens=int(usage.get("input_tokens") or 0),
            output_tokens=int(usage.get("output_tokens") or 0),
            cache_read_tokens=int(usage.get("cache_read_input_tokens") or 0),
            cache_creation_tokens=int(usage.get("cache_creation_input_tokens") or 0),
            session_id=self.session_id, num_turns=result.num_turns)

    async def aclose(self) -> None:
        """End the conversation; bounded, and no process survives it.

        Shielded: it runs to the end even when the caller is being cancelled, but within
        ``close_grace + CLOSE_SLACK`` seconds, or the caller's deadline when that is
        sooner, ``CLOSE_MIN`` at least (a stopping worker: ``memlite.actors.graces``).
        The CLI is SIGKILLed at ``close_grace`` (or at half the caller's time), and
        whatever is left at the end.
        """
        if self._closed:
            return
        self._closed = True
        now = trio.current_time()
        budget = max(CLOSE_MIN, min(self.config.close_grace + CLOSE_SLACK,
                                    trio.current_effective_deadline() - now))
        kill_at = min(self.config.close_grace, budget / 2)
        reaped = False
        try:
            reaped = await self._close_within(now + budget, kill_at)
        finally:
            if not reaped:  # cut by the deadline: whatever is left is SIGKILLed now
                registry.kill_marked(self.marker, self.config.data_dir)
            registry.forget(self.config.data_dir, self.marker)

    async def _close_within(self, deadline: float, kill_at: float) -> bool:
        """Close gracefully, kill at ``kill_at`` s; True once no process is left."""
        with trio.CancelScope(shield=True, deadline=deadline):
            if self._client is not None:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._kill_after, kill_at)
                    try:
                        await self._client.disconnect()
                    except Exception:  # noqa: BLE001 - closing must not fail
                        log.debug("observer disconnect failed", exc_info=True)
                    nursery.cancel_scope.cancel()
                if self._messages is not None:
                    with trio.move_on_after(1.0):
                        try:
                            async for _ in self._messages:
                                pass
                        except Exception:  # noqa: BLE001 - the failure was reported already
                            pass
            # Stragglers (a SIGKILLed process stays visible for a moment): until none is left.
            for _ in range(200):
                if not await _kill_marked(self.marker, self.config.data_dir):
                    return True
                await trio.sleep(0.01)
        return False

    async def _kill_after(self, seconds: float) -> None:
        await trio.sleep(seconds)
        log.warning("observer CLI did not exit in %s s after close: killed", seconds)
        await _kill_marked(self.marker, self.config.data_dir)


async def _kill_marked(marker: str, data_dir: Path) -> list[int]:
    """``registry.kill_marked`` on a thread: finding the processes scans every process of
    the machine (~8 ms for 120 processes), too long for the Trio thread (issue 17)."""
    return await trio.to_thread.run_sync(registry.kill_marked, marker, data_dir)


@asynccontextmanager
async def open_conversation(config: ConversationConfig) -> AsyncIterator[Conversation]:
    """Start a :class:`Conversation`, yield it, close it (even on cancel or error)."""
    conv = Conversation(config)
    try:
        await conv.start()
        yield conv
    finally:
        await conv.aclose()
