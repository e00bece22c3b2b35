"""``memlite install`` / ``memlite uninstall``: register the plugin with Claude Code.

Install is the two commands a person would type (CLAUDE-CODE.md §5)::

    claude plugin marketplace add <memlite checkout>     # .claude-plugin/marketplace.json
    claude plugin install memlite@memlite-local --scope user

The marketplace is the repository root; its one plugin's source is ``./plugin``, which
ships memlite's source through the links ``plugin/memlite`` and ``plugin/pyproject.toml``
(Claude Code's cache copy dereferences them). The first session then builds the plugin's
Python environment in ``${CLAUDE_PLUGIN_DATA}/venv`` (``memlite.hooks.bootstrap``).

Uninstall removes the plugin and the marketplace entry; the memory in the data directory
(``~/.memlite`` or ``$MEMLITE_DATA_DIR``) is left alone.

``claude`` is the one on PATH, else the CLI bundled in claude-agent-sdk's wheel.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
from pathlib import Path

from memlite.errors import MemliteError

__all__ = ["MARKETPLACE", "PLUGIN", "find_claude", "install", "marketplace_dir", "uninstall"]

PLUGIN = "memlite"
TIMEOUT = 120.0


def marketplace_dir() -> Path:
    """The memlite checkout holding ``.claude-plugin/marketplace.json``."""
    root = Path(__file__).resolve().parent.parent
    if not (root / ".claude-plugin" / "marketplace.json").is_file():
        raise MemliteError(f"no plugin marketplace next to this memlite ({root}); install "
                           "from a memlite source checkout (git clone, then pip install -e .)")
    return root


def _marketplace_name() -> str:
    path = Path(__file__).resolve().parent.parent / ".claude-plugin" / "marketplace.json"
    try:
        return str(json.loads(path.read_text())["name"])
    except (OSError, ValueError, KeyError):
        return "memlite-local"


MARKETPLACE = _marketplace_name()


def find_claude(explicit: str | None = None) -> str:
    """The Claude Code CLI: ``explicit``, else ``claude`` on PATH, else the SDK's bundled one."""
    if explicit:
        return explicit
    found = shutil.which("claude")
    if found:
        return found
    spec = importlib.util.find_spec("claude_agent_sdk")
    if spec and spec.origin:
        bundled = Path(spec.origin).parent / "_bundled" / "claude"
        if bundled.is_file():
            return str(bundled)
    raise MemliteError("Claude Code is not installed: no `claude` on PATH (install it from "
                       "https://docs.claude.com/claude-code, or pass --claude PATH)")


def _claude(claude: str, *args: str, check: bool = True) -> str:
    try:
        result = subprocess.run([claude, *args], capture_output=True, text=True,
                                timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise MemliteError(f"cannot run {claude}: {exc}") from None
    output = (result.stdout + result.stderr).strip()
    if check and result.returncode != 0:
        raise MemliteError(f"`claude {' '.join(args)}` failed ({result.returncode}): "
                           f"{output[-500:]}")
    return output


def install(*, claude: str | None = None, scope: str = "user") -> list[str]:
    """Add the marketplace and install the plugin; returns what the CLI said."""
    cli = find_claude(claude)
    return [_claude(cli, "plugin", "marketplace", "add", str(marketplace_dir())),
            _claude(cli, "plugin", "install", f"{PLUGIN}@{MARKETPLACE}", "--scope", scope)]


def uninstall(*, claude: str | None = None, scope: str = "user") -> list[str]:
    """Remove the plugin and the marketplace entry; the memory stays."""
    cli = find_claude(claude)
    return [_claude(cli, "plugin", "uninstall", f"{PLUGIN}@{MARKETPLACE}", "--scope", scope),
            _claude(cli, "plugin", "marketplace", "remove", MARKETPLACE, check=False)]
