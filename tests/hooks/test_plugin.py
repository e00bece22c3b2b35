"""The plugin directory: manifest, hooks.json, launcher, and the real CLI's verdict on them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hookrun import REPO

from memlite.installer import MARKETPLACE, find_claude

PLUGIN = REPO / "plugin"
LONG_STANDING = {"SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure",
                 "Stop", "PreCompact", "SessionEnd"}


def _bundled_claude() -> str | None:
    try:
        return find_claude()
    except Exception:  # noqa: BLE001
        return None


CLAUDE = _bundled_claude()
needs_cli = pytest.mark.skipif(CLAUDE is None, reason="no Claude Code CLI (PATH or bundled "
                                                      "in claude-agent-sdk) to validate with")


def test_manifest_and_hooks_use_only_long_standing_events_in_shell_form():
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "memlite" and manifest["version"] and manifest["description"]
    hooks = json.loads((PLUGIN / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(hooks) == LONG_STANDING
    for event, groups in hooks.items():
        [group] = groups
        [handler] = group["hooks"]
        assert handler["type"] == "command" and "args" not in handler
        assert handler["command"] == f'"${{CLAUDE_PLUGIN_ROOT}}/scripts/memlite-hook" {event}'
        assert 0 < handler["timeout"] <= 5
    # The MCP server (issue 6): a launcher that starts on any python3 (tests/mcp).
    servers = json.loads((PLUGIN / ".mcp.json").read_text())["mcpServers"]
    assert servers == {"memlite": {"command": "${CLAUDE_PLUGIN_ROOT}/scripts/memlite-mcp",
                                   "args": []}}
    assert os.access(PLUGIN / "scripts" / "memlite-mcp", os.X_OK)


def test_the_plugin_ships_memlite_source():
    assert (PLUGIN / "memlite" / "hooks" / "main.py").is_file()
    assert (PLUGIN / "pyproject.toml").is_file()
    assert os.access(PLUGIN / "scripts" / "memlite-hook", os.X_OK)
    market = json.loads((REPO / ".claude-plugin" / "marketplace.json").read_text())
    assert market["name"] == MARKETPLACE
    assert [p["source"] for p in market["plugins"] if p["name"] == "memlite"] == ["./plugin"]


def test_the_launcher_never_uses_a_shim_and_fails_open(tmp_path):
    env = {"PATH": "/nonexistent", "MEMLITE_DATA_DIR": str(tmp_path / "d"),
           "MEMLITE_PYTHON": "python3"}  # relative: skipped, like a shim would be
    result = subprocess.run([str(PLUGIN / "scripts" / "memlite-hook"), "Stop"], input=b"{}",
                            env=env, capture_output=True, timeout=30)
    assert (result.returncode, result.stdout) == (0, b"")
    assert "no session_id" in (tmp_path / "d" / "hooks.log").read_text()
    broken = tmp_path / "plugin"
    (broken / "scripts").mkdir(parents=True)
    (broken / "scripts" / "hook.py").write_text((PLUGIN / "scripts" / "hook.py").read_text())
    result = subprocess.run([sys.executable, "-I", "-S", str(broken / "scripts" / "hook.py")],
                            input=b"{}", capture_output=True, timeout=30)
    assert (result.returncode, result.stdout) == (0, b"")  # no memlite at all: still 0


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=120,
                          cwd=REPO)


@needs_cli
def test_the_real_cli_validates_the_plugin_and_the_marketplace(tmp_path):
    for target in (PLUGIN, REPO):
        result = _cli(tmp_path, CLAUDE, "plugin", "validate", str(target))
        assert result.returncode == 0, result.stdout + result.stderr
        assert "Validation passed" in result.stdout


@needs_cli
def test_memlite_install_and_uninstall_with_the_real_cli(tmp_path, data_dir):
    home = tmp_path / "home"
    home.mkdir()
    memlite = [sys.executable, "-m", "memlite"]
    result = _cli(home, *memlite, "install", "--claude", CLAUDE)
    assert result.returncode == 0, result.stderr
    installed = json.loads((home / ".claude" / "plugins" / "installed_plugins.json").read_text())
    [entry] = installed["plugins"][f"memlite@{MARKETPLACE}"]
    cache = Path(entry["installPath"])
    assert (cache / "memlite" / "hooks" / "main.py").is_file()  # the links were copied
    assert (cache / "scripts" / "memlite-hook").is_file()
    listed = _cli(home, CLAUDE, "plugin", "list").stdout
    assert f"Read from: {PLUGIN}" in listed  # CLAUDE_PLUGIN_ROOT: the source directory
    data_dir.mkdir(parents=True)
    (data_dir / "keep").write_text("memory")
    result = _cli(home, *memlite, "uninstall", "--claude", CLAUDE)
    assert result.returncode == 0, result.stderr
    installed = json.loads((home / ".claude" / "plugins" / "installed_plugins.json").read_text())
    assert installed["plugins"] == {}
    assert (data_dir / "keep").read_text() == "memory"
