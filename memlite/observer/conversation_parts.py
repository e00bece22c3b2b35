"""The parts of an observer conversation that hold no process: config, result, the CLI.

:mod:`memlite.observer.conversation` re-exports what callers need from here. Nothing
here imports claude-agent-sdk (``streamjson.py`` says why): the bundled CLI's path is
found from the package's location.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import trio

from memlite.errors import ObserverUnavailable
from memlite.observer import clipath

__all__ = [
    "BUNDLED_CLI",
    "ConversationConfig",
    "TurnResult",
    "resolve_cli",
    "stop_when_idle",
]

BUNDLED_CLI = clipath.bundled_path()
"""Where the claude-agent-sdk wheel keeps its CLI (it may be absent: an sdist, the plugin
venv); a test may point it at a fake CLI before the worker starts."""


@attrs.frozen(kw_only=True)
class ConversationConfig:
    """Everything one conversation needs; ``env`` is merged over the worker's environment."""

    data_dir: Path = attrs.field(converter=Path)
    session: str
    system_prompt: str
    model: str = "claude-haiku-4-5"
    max_turns: int = 2
    cli_path: Path | None = None  # None: the SDK's bundled CLI, else `claude` on PATH
    env: Mapping[str, str] = attrs.field(factory=dict)
    resume: str | None = None
    connect_timeout: float = 30.0
    turn_timeout: float = 60.0
    close_grace: float = 2.0
    max_buffer_size: int = 1024 * 1024

    @classmethod
    def from_settings(cls, settings: Any, session: str, system_prompt: str,
                      **overrides: Any) -> ConversationConfig:
        """The config for ``session`` with OBSERVER_MODEL and the data dir from settings."""
        return cls(data_dir=settings.data_dir, session=session, system_prompt=system_prompt,
                   model=settings["OBSERVER_MODEL"], **overrides)


@attrs.frozen
class TurnResult:
    """What one turn produced: the assistant text and the result's usage."""

    text: str
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    session_id: str | None = None
    num_turns: int = 0


def resolve_cli(cli_path: Path | None) -> Path:
    """The real CLI to run (``clipath.find_cli``); raises ObserverUnavailable when there is none."""
    bundled = BUNDLED_CLI if BUNDLED_CLI is not None and BUNDLED_CLI.is_file() else None
    found = clipath.find_cli(cli_path, bundled=bundled)
    if found is None:
        looked = ", ".join(str(p) for p in clipath.candidates(cli_path, bundled=bundled))
        raise ObserverUnavailable(
            f"no runnable Claude Code CLI (looked at: {looked}); install Claude Code or set "
            f"{clipath.ENV}")
    return found.resolve()


async def stop_when_idle(conv: Any, idle_seconds: float) -> None:
    """Close ``conv`` once it has been silent (not busy) for ``idle_seconds``; then return.

    ``conv`` needs ``last_activity`` (Trio time), ``busy``, ``closed`` and ``aclose()``.
    Run it in the owner's nursery next to the conversation (OBSERVER_IDLE_MINUTES).
    """
    while not conv.closed:
        deadline = conv.last_activity + idle_seconds
        if not conv.busy and trio.current_time() >= deadline:
            await conv.aclose()
            return
        await trio.sleep_until(deadline if not conv.busy else trio.current_time() + idle_seconds)
