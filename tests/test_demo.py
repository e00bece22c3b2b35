"""``memlite demo`` runs end to end as a process and leaves nothing behind."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path


def test_demo_prints_what_it_stored_and_cleans_up(tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "memlite", "demo"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "prompt    #1: Fix the flaky login test" in out
    assert "events    3 stored" in out
    assert "[bugfix] Expired sessions no longer crash the login flow" in out
    assert re.search(r"1\. observation #\d+: Expired sessions", out)
    assert "observations 1, summaries 1" in out
    data_dir = Path(re.search(r"throwaway data directory (\S+)", out).group(1))
    assert data_dir.parent == tmp_path and not data_dir.exists()


def test_demo_keep_leaves_a_readable_database(tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "memlite", "demo", "--keep"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    data_dir = Path(re.search(r"kept (\S+)", done.stdout).group(1))
    assert (data_dir / "memlite.db").stat().st_size > 0
    assert (data_dir / "settings.json").exists()
