"""The launchers' choice of interpreter (plugin/scripts/python.sh), on fake machines.

Each test builds a fake root (``MEMLITE_LAUNCHER_ROOT``) with fake pythons: small shell
scripts that write which one ran to a file. A Mac is a root with ``usr/bin/xcode-select``;
Apple's installer stub at ``usr/bin/python3`` must never run without the Command Line
Tools or Xcode (it would pop an install dialog at every Claude Code event)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "plugin" / "scripts"
SHELLS = [path for s in ("sh", "dash", "bash") for path in [shutil.which(s)] if path]
"""/bin/sh, and dash and bash (run as sh) where installed; absolute (tests empty PATH)."""


def fake(path: Path, ran: Path, code: int = 0) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f'#!/bin/sh\necho "$0 $*" >> "{ran}"\nexit {code}\n')
    path.chmod(0o755)
    return path


@pytest.fixture
def machine(tmp_path):
    """(root, ran): a fake root and the file each fake python appends its path to."""
    root = tmp_path / "root"
    root.mkdir()
    return root, tmp_path / "ran.txt"


def mac(root: Path, ran: Path) -> None:
    fake(root / "usr/bin/xcode-select", ran)
    fake(root / "usr/bin/python3", ran, code=1)  # the stub: dialog, then non-zero


def launch(root: Path, script: str = "memlite-hook", shell: str = SHELLS[0],
           **env: str) -> subprocess.CompletedProcess[bytes]:
    base = {"PATH": "/nonexistent", "MEMLITE_LAUNCHER_ROOT": str(root)}
    argv = [shell, "--posix"] if shell.endswith("bash") else [shell]
    return subprocess.run([*argv, str(SCRIPTS / script), "SessionStart"], input=b"{}",
                          env={**base, **env}, capture_output=True, timeout=30)


def which_ran(ran: Path) -> list[str]:
    return [line.split()[0] for line in ran.read_text().splitlines()] if ran.exists() else []


@pytest.mark.parametrize("shell", SHELLS)
def test_a_mac_without_the_command_line_tools_never_runs_the_stub(machine, shell):
    root, ran = machine
    mac(root, ran)
    result = launch(root, shell=shell)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    assert which_ran(ran) == []
    mcp = launch(root, "memlite-mcp", shell=shell)
    assert mcp.returncode == 1 and b"no Python 3 interpreter found" in mcp.stderr
    assert which_ran(ran) == []


@pytest.mark.parametrize("shell", SHELLS)
def test_homebrew_on_apple_silicon_is_found_before_apples_python(machine, shell):
    root, ran = machine
    mac(root, ran)
    fake(root / "Library/Developer/CommandLineTools/usr/bin/python3", ran)  # real Apple 3.9
    brew = fake(root / "opt/homebrew/bin/python3", ran)
    fake(root / "usr/local/bin/python3", ran)
    assert launch(root, shell=shell).returncode == 0
    assert which_ran(ran) == [str(brew)]
    assert ran.read_text().split()[1:] == ["-I", "-S", str(SCRIPTS / "hook.py"),
                                           "SessionStart"]


def test_usr_local_comes_before_usr_bin(machine):
    root, ran = machine
    mac(root, ran)
    fake(root / "Library/Developer/CommandLineTools/usr/bin/python3", ran)
    local = fake(root / "usr/local/bin/python3", ran)
    launch(root)
    assert which_ran(ran) == [str(local)]


@pytest.mark.parametrize("developer_dir", [
    "Library/Developer/CommandLineTools", "Applications/Xcode.app/Contents/Developer",
    "var/db/xcode_select_link", "DEVELOPER_DIR"])
def test_apples_python_runs_when_the_tools_are_installed(machine, developer_dir):
    root, ran = machine
    mac(root, ran)
    env = {}
    if developer_dir == "DEVELOPER_DIR":
        fake(root / "elsewhere/Xcode-beta.app/usr/bin/python3", ran)
        env["DEVELOPER_DIR"] = str(root / "elsewhere/Xcode-beta.app")
    else:
        fake(root / developer_dir / "usr/bin/python3", ran)
    launch(root, **env)
    assert which_ran(ran) == [str(root / "usr/bin/python3")]


def test_linux_uses_its_usr_bin_python3(machine):
    root, ran = machine
    system = fake(root / "usr/bin/python3", ran)  # no xcode-select: not a Mac
    launch(root)
    assert which_ran(ran) == [str(system)]
    ran.unlink()
    launch(root, "memlite-mcp")
    assert ran.read_text().split()[:4] == [str(system), "-I", "-S", str(SCRIPTS / "mcp.py")]


def test_memlite_python_then_the_plugin_venv_come_first(machine, tmp_path):
    root, ran = machine
    mac(root, ran)
    fake(root / "opt/homebrew/bin/python3", ran)
    venv = fake(tmp_path / "plugin-data/venv/bin/python", ran)
    mine = fake(tmp_path / "mine/python3", ran)
    launch(root, MEMLITE_PYTHON=str(mine), CLAUDE_PLUGIN_DATA=str(tmp_path / "plugin-data"))
    launch(root, MEMLITE_PYTHON="python3",  # relative (a shim on PATH): skipped
           CLAUDE_PLUGIN_DATA=str(tmp_path / "plugin-data"))
    launch(root, MEMLITE_PYTHON=str(tmp_path / "missing/python3"))
    assert which_ran(ran) == [str(mine), str(venv), str(root / "opt/homebrew/bin/python3")]


def test_the_scripts_are_posix_sh():
    for name in ("memlite-hook", "memlite-mcp", "python.sh"):
        for shell in SHELLS:
            args = [shell, "--posix", "-n"] if shell.endswith("bash") else [shell, "-n"]
            assert subprocess.run([*args, str(SCRIPTS / name)]).returncode == 0, (shell, name)
    for name in ("memlite-hook", "memlite-mcp"):
        assert os.access(SCRIPTS / name, os.X_OK)
