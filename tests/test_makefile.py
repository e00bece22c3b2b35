"""The README's first command, ``make demo``, installs what the demo runs and no more.

Seen in a round-6 trial (docs/user-trials.md): a first ``make demo`` on a fresh clone
installed the test extra too (Playwright, schemathesis, hypothesis, the optional
embedder, onnx): a 985 MB ``.venv`` before the demo printed anything. ``make -n`` shows
what make would run without running it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="no make")


def _plan(tmp_path: Path, target: str) -> str:
    for name in ("Makefile", "pyproject.toml", "constraints.txt"):
        shutil.copy(REPO / name, tmp_path / name)
    # Run under `make test` (CI), make would pass its own level and flags down and print
    # "make[1]: Entering directory ..." around the plan: a make of its own, quiet.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    done = subprocess.run(["make", "--no-print-directory", "-n", target,
                           f"PYTHON={sys.executable}"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.replace("\\\n", " ")  # a continued command on one line


def test_make_demo_installs_the_runtime_dependencies_only(tmp_path):
    plan = _plan(tmp_path, "demo")
    installs = [line for line in plan.splitlines() if "pip install" in line]
    assert installs, plan
    assert not any("[test]" in line for line in installs), installs
    assert any("--no-binary claude-agent-sdk -c constraints.txt -e ." in " ".join(line.split())
               for line in installs), installs
    assert plan.rstrip().endswith(".venv/bin/memlite demo"), plan


def test_make_test_still_installs_the_test_extra(tmp_path):
    plan = _plan(tmp_path, "test")
    assert "-e '.[test]'" in plan and ".venv/bin/python -m pytest" in plan, plan
    # After a `make demo` (the SDK from its sdist, no CLI) the e2e tests need the wheel's
    # bundled CLI: it is reinstalled from the wheel, else they would be skipped.
    assert "--force-reinstall --no-deps --only-binary claude-agent-sdk" in plan, plan
