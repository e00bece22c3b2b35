"""Which Claude Code CLI the observer runs: the user's own ``claude`` first.

The plugin venv is built without the SDK's bundled 385 MB CLI (issue 16): a Claude Code
user already has ``claude``. In order:

1. an explicit ``cli_path`` (tests, ``ConversationConfig``);
2. ``$CLAUDE_CODE_PATH`` (the same variable Claude Code's own tools use for it);
3. the SDK's bundled binary, where the SDK was installed from its wheel (development
   and test venvs: ``make venv``);
4. ``claude`` on ``PATH``;
5. the usual install places: ``~/.claude/local/claude`` (Claude Code's local install),
   ``~/.local/bin/claude``, ``/opt/homebrew/bin/claude``, ``/usr/local/bin/claude``.

Standard library only, and it does not import claude-agent-sdk (nothing in memlite does:
that import costs ~37 MB, see ``streamjson.py``): the bundled binary is found from the
package's location.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

__all__ = ["ENV", "bundled_cli", "bundled_path", "candidates", "find_cli"]

ENV = "CLAUDE_CODE_PATH"
USUAL_PLACES = ("~/.claude/local/claude", "~/.local/bin/claude", "/opt/homebrew/bin/claude",
                "/usr/local/bin/claude")


def bundled_path() -> Path | None:
    """Where the SDK's wheel keeps its binary (``_bundled/claude`` in the package),
    whether or not it is there; None when the SDK is not installed."""
    spec = importlib.util.find_spec("claude_agent_sdk")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "_bundled" / "claude"


def bundled_cli() -> Path | None:
    """The SDK's bundled binary if this install has one (the wheel), else None (sdist)."""
    path = bundled_path()
    return path if path is not None and path.is_file() else None


def _runnable(path: Path | None) -> bool:
    return path is not None and path.is_file() and os.access(path, os.X_OK)


def candidates(cli_path: Path | None = None, *, bundled: Path | None = None) -> list[Path]:
    """Every place looked at, in order (for ``memlite doctor`` and error messages)."""
    found: list[Path] = []
    if cli_path is not None:
        return [Path(cli_path)]
    env = os.environ.get(ENV, "").strip()
    if env:
        found.append(Path(env).expanduser())
    if bundled is not None:
        found.append(bundled)
    which = shutil.which("claude")
    if which:
        found.append(Path(which))
    found += [Path(p).expanduser() for p in USUAL_PLACES]
    return found


def find_cli(cli_path: Path | None = None, *, bundled: Path | None = None) -> Path | None:
    """The first runnable CLI of :func:`candidates`, or None.

    An explicit ``cli_path`` or ``$CLAUDE_CODE_PATH`` that is not runnable is an answer
    too (None), not a reason to look elsewhere: the user asked for that one.
    """
    places = candidates(cli_path, bundled=bundled)
    if cli_path is not None or os.environ.get(ENV, "").strip():
        return places[0] if _runnable(places[0]) else None
    return next((p for p in places if _runnable(p)), None)
