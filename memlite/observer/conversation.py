"""One locked-down, multi-turn Claude Code conversation per Claude Code session.

Use::

    async with open_conversation(config) as conv:
        turn = await conv.ask(message, timeout=60)    # turn.text, turn.input_tokens, ...
        conv.session_id                               # for ConversationConfig.resume

The CLI runs through ``launcher.py`` (see there and ``registry.py``) so it belongs to the
worker: own process group, parent-death signal, registry entry, killed by marker.

The CLI is spoken to with memlite's own small client of its stream-json protocol
(``streamjson.py``: why hand-written, what of the protocol is used), not with
claude-agent-sdk's Python client: importing the SDK cost the worker ~37 MB and ~1.9 s,
over issue 14's 150 MB bar. The SDK is still the dependency that brings the CLI binary
(``clipath.py`` finds it without importing the package). Nothing here imports
``claude_agent_sdk``, ``mcp``, ``pydantic`` or ``anyio`` (``tests/observer/
test_streamjson.py`` checks it after a turn).

The conversation reads the CLI's stdout only while it waits for something (the handshake
or a turn's result): between turns the CLI writes nothing it waits on. The CLI's stderr
goes to an unlinked temporary file, so it can never block on a full pipe and no task
has to drain it; its lines are logged at debug level when the conversation ends.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import subprocess
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO, Any

import trio

from memlite.errors import (
    ObserverClosed,
    ObserverCrashed,
    ObserverError,
    ObserverTimeout,
    ObserverUnavailable,
)
from memlite.observer import registry, streamjson
from memlite.observer.conversation_parts import (
    ConversationConfig,
    TurnResult,
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
"""Past ``close_grace``: waiting for the killed CLI to be gone."""
CLOSE_MIN = 0.25
"""Even a caller already cancelled gets this long (kill, then wait for the process)."""
EXIT_WAIT = 2.0
"""After the CLI's output ended: how long its exit status is waited for."""
READ_CHUNK = 65536
STDERR_LOGGED = 65536
"""The last bytes of the CLI's stderr logged (debug) when the conversation ends."""
_SAFE = re.compile(r"[^A-Za-z0-9_.-]")


class Conversation:
    """A Claude Code conversation that observes one session; one turn at a time.

    Locked down: no tools (``--tools ""``, and every ``can_use_tool`` request denied),
    ``--setting-sources=`` (no user or project settings), no MCP servers, no plugins, its
    own empty working directory ``<data_dir>/observer/<session>/``, ``max_turns`` per
    message, our system prompt. Auth is Claude Code's own login (inherited environment);
    ``config.env`` overrides.

    Lifecycle:
        ``start()`` spawns the CLI (through the launcher) and completes the initialize
        handshake; ``ask()`` runs one turn; ``aclose()`` ends it. Use
        :func:`open_conversation`. ``last_activity`` (Trio time) is updated at every turn
        so the owner can stop a silent one (:func:`stop_when_idle`).

    Failure:
        Any failure raises an ObserverError and breaks the conversation:
        ``ObserverUnavailable`` (no CLI to run), ``ObserverCrashed`` (the CLI's output
        ended or its input closed: ``exit_code`` when it exited; a refused handshake),
        ``ObserverProtocolError`` (a corrupt JSON line, a line over
        ``max_buffer_size``, a result or assistant message without its fields),
        ``ObserverErrorResult`` (an ``is_error`` result, during a turn or the start),
        ``ObserverTimeout``. Its processes are SIGKILLed at once (a late answer must
        never be read as the next turn's) and later asks raise ``ObserverClosed``. The
        caller starts a new one, with ``resume=session_id`` when it wants the history.

    Timeouts:
        ``turn_timeout`` (or ``ask(timeout=)``) bounds every turn with ``trio.fail_after``;
        ``connect_timeout`` bounds the spawn and handshake. A start or turn cancelled
        from outside kills the processes at once. Close waits ``close_grace`` for the
        CLI to exit after end of input, then kills; a failed turn has already killed, so
        its close is immediate.
    """

    def __init__(self, config: ConversationConfig) -> None:
        self.config = config
        self.marker = os.urandom(12).hex()
        self.session_id: str | None = config.resume
        self.last_activity = trio.current_time()
        self.turns = 0
        self.busy = False
        self._proc: trio.Process | None = None
        self._stderr: IO[bytes] | None = None
        self._lines = streamjson.LineBuffer(config.max_buffer_size)
        self._eof = False
        self._lock = trio.Lock()
        self._broken: ObserverError | None = None
        self._closed = False

    @property
    def closed(self) -> bool:
        return self._closed or self._broken is not None

    def _command(self, wrapper: Path, workdir: Path) -> tuple[list[str], dict[str, str]]:
        cfg = self.config
        argv = streamjson.build_argv(str(wrapper), system_prompt=cfg.system_prompt,
                                     model=cfg.model, max_turns=cfg.max_turns,
                                     resume=cfg.resume)
        ours = {registry.MARKER_ENV: self.marker,
                "MEMLITE_OBSERVER_PARENT": str(os.getpid()),
                "MEMLITE_OBSERVER_REGISTRY": str(registry.registry_dir(cfg.data_dir))}
        return argv, streamjson.build_env(os.environ, {**cfg.env, **ours}, str(workdir))

    async def start(self) -> None:
        """Spawn the CLI and finish the handshake, within ``connect_timeout``."""
        cfg = self.config
        real = resolve_cli(cfg.cli_path)
        workdir = cfg.data_dir / "observer" / (_SAFE.sub("_", cfg.session) or "session")
        workdir.mkdir(mode=0o700, parents=True, exist_ok=True)
        wrapper = await trio.to_thread.run_sync(registry.write_wrapper, cfg.data_dir, real)
        argv, env = self._command(wrapper, workdir)
        error: ObserverError | None = None
        try:
            with trio.move_on_after(cfg.connect_timeout) as scope:
                await self._spawn(argv, env, workdir)
                request_id, line = streamjson.initialize_request()
                await self._send(line)
                await self._handshake(request_id)
            if scope.cancelled_caught:
                error = ObserverTimeout(f"observer CLI did not start in {cfg.connect_timeout} s")
        except trio.Cancelled:  # a stopping worker: the process goes now, not at close
            self._broken = ObserverClosed("the observer's start was cancelled")
            self._kill_now()
            raise
        except ObserverError as exc:
            error = exc
        except Exception as exc:  # noqa: BLE001 - a bug must not leave a live CLI
            error = ObserverCrashed(f"observer failed: {type(exc).__name__}: {exc}")
        if error is not None:
            self._break(error)
        self.last_activity = trio.current_time()

    async def _spawn(self, argv: list[str], env: dict[str, str], workdir: Path) -> None:
        self._stderr = tempfile.TemporaryFile(prefix="memlite-observer-")  # noqa: SIM115
        try:
            self._proc = await trio.lowlevel.open_process(
                argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr,
                cwd=str(workdir), env=env)
        except FileNotFoundError as exc:
            raise ObserverUnavailable(f"observer CLI cannot be run: {exc}") from exc
        except OSError as exc:
            raise ObserverCrashed(f"observer CLI could not be started: {exc}") from exc

    async def _handshake(self, request_id: str) -> None:
        """Read until the CLI answers ``initialize``; answer what it asks meanwhile."""
        while True:
            message = await self._next_message()
            kind = message.get("type")
            response = message.get("response")
            if kind == "control_response" and isinstance(response, dict) and \
                    response.get("request_id") == request_id:
                if response.get("subtype") == "error":
                    raise ObserverCrashed(f"observer CLI refused the handshake: "
                                          f"{str(response.get('error'))[:200]}")
                return
            if kind == "control_request":
                await self._answer(message)
            elif kind == "result":  # e.g. a refused --resume: an error result, then exit
                turn = streamjson.Turn(self.session_id)
                turn.take(message)
                if (failed := turn.error()) is not None:
                    raise failed

    async def _answer(self, message: dict[str, Any]) -> None:
        reply = streamjson.answer_control(message)
        if reply is not None:
            await self._send(reply)

    async def _send(self, data: bytes) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        try:
            await self._proc.stdin.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
            raise await self._ended(f"observer CLI stopped reading its input ({exc})") from exc

    async def _next_message(self) -> dict[str, Any]:
        """The CLI's next message; raises ``ObserverCrashed`` once its output ended."""
        assert self._proc is not None and self._proc.stdout is not None
        while True:
            line = self._lines.next_line()
            if line is None:
                if self._eof:
                    raise await self._ended("observer CLI output ended mid-turn")
                chunk = await self._proc.stdout.receive_some(READ_CHUNK)
                if not chunk:
                    self._eof = True
                    line = self._lines.tail()  # a last line without its newline
                    try:
                        message = streamjson.parse_line(line)
                    except ObserverError:  # cut short by the exit: nothing to read in it
                        message = None
                    if message is not None:
                        return message
                    continue
                self._lines.push(chunk)
                continue
            message = streamjson.parse_line(line)
            if message is not None:
                return message

    async def _ended(self, what: str) -> ObserverCrashed:
        """The error for a CLI whose pipes closed, with its exit code once it exited."""
        assert self._proc is not None
        with trio.move_on_after(EXIT_WAIT):
            await self._proc.wait()
        code = self._proc.returncode
        if code:
            return ObserverCrashed(f"observer CLI failed with exit code {code}: {what}",
                                   exit_code=code)
        return ObserverCrashed(what, exit_code=code)

    def _kill_now(self) -> None:
        """SIGKILL every process of this observer: by marker, and the launcher itself
        (a launcher that has not registered yet is found by neither registry nor lock)."""
        registry.kill_marked(self.marker, self.config.data_dir)
        if self._proc is not None and self._proc.returncode is None:
            with contextlib.suppress(OSError):
                self._proc.kill()

    def _break(self, error: ObserverError) -> None:
        """Mark broken, kill our processes now, raise ``error``."""
        self._broken = error
        self._kill_now()
        raise error

    async def ask(self, message: str, timeout: float | None = None) -> TurnResult:  # noqa: ASYNC109
        """Send ``message`` as one user turn; return the assistant's text and the usage.

        Raises:
            ObserverTimeout: no result within ``timeout`` (default ``turn_timeout``).
            ObserverCrashed, ObserverProtocolError, ObserverErrorResult: see the class.
            ObserverClosed: the conversation is closed or broken.
        """
        if self._broken is not None or self._closed or self._proc is None:
            raise ObserverClosed(f"observer conversation is closed ({self._broken or 'closed'})")
        limit = self.config.turn_timeout if timeout is None else timeout
        turn = streamjson.Turn(self.session_id)
        async with self._lock:
            self.busy, self.last_activity = True, trio.current_time()
            error: ObserverError | None = None
            try:
                with trio.fail_after(limit):
                    await self._send(streamjson.user_message(message))
                    while turn.result is None:
                        received = await self._next_message()
                        if received.get("type") == "control_request":
                            await self._answer(received)
                        else:
                            turn.take(received)
            except trio.TooSlowError:
                error = ObserverTimeout(f"observer turn took longer than {limit} s")
            except trio.Cancelled:  # the owner gave up on this turn: so do we
                self._broken = ObserverClosed("an observer turn was cancelled")
                self._kill_now()
                raise
            except ObserverError as exc:
                error = exc
            except Exception as exc:  # noqa: BLE001 - a bug must not leave a live CLI
                error = ObserverCrashed(f"observer failed: {type(exc).__name__}: {exc}")
            finally:
                self.busy, self.last_activity = False, trio.current_time()
            if error is not None:
                self._break(error)
        self.session_id = turn.session_id
        self.turns += 1
        if (failed := turn.error()) is not None:
            self._break(failed)
        return TurnResult(text="".join(turn.texts), session_id=self.session_id,
                          **turn.usage())

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
                self._kill_now()
            registry.forget(self.config.data_dir, self.marker)
            self._log_stderr()

    async def _close_within(self, deadline: float, kill_at: float) -> bool:
        """End of input, wait for the exit, kill at ``kill_at`` s; True once no process
        is left."""
        with trio.CancelScope(shield=True, deadline=deadline):
            proc = self._proc
            if proc is not None:
                with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError,
                                         OSError):
                    assert proc.stdin is not None
                    await proc.stdin.aclose()  # end of input: the CLI exits
                with trio.move_on_after(kill_at):
                    await proc.wait()
                if proc.returncode is None:
                    log.warning("observer CLI did not exit in %s s after close: killed", kill_at)
                    await _kill_marked(self.marker, self.config.data_dir)
                    with contextlib.suppress(OSError):
                        proc.kill()
                    await proc.wait()
                with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError,
                                         OSError):
                    assert proc.stdout is not None
                    await proc.stdout.aclose()
            # Stragglers (a SIGKILLed process stays visible for a moment): until none is left.
            for _ in range(200):
                if not await _kill_marked(self.marker, self.config.data_dir):
                    return True
                await trio.sleep(0.01)
        return False

    def _log_stderr(self) -> None:
        """The CLI's stderr (its last ``STDERR_LOGGED`` bytes) at debug level; closes it."""
        if self._stderr is None:
            return
        stderr, self._stderr = self._stderr, None
        try:
            if log.isEnabledFor(logging.DEBUG):
                size = stderr.seek(0, os.SEEK_END)
                stderr.seek(max(0, size - STDERR_LOGGED))
                for line in stderr.read().decode("utf-8", "replace").splitlines():
                    if line.strip():
                        log.debug("observer cli: %s", line.rstrip())
        except OSError:
            pass
        finally:
            stderr.close()


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
