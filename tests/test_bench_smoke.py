"""The benchmarks run (at a size that fits CI): figures are not checked, the scripts are."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.timeout(600)


def test_search_benchmark_runs_small(tmp_path):
    result = subprocess.run(
        [sys.executable, "bench/bench_search.py", "--sizes", "2000", "--rounds", "1",
         "--texts", "64", "--cache", str(tmp_path / "cache")],
        cwd=REPO, capture_output=True, text=True, timeout=540)
    assert result.returncode == 0, result.stderr[-3000:]
    out = result.stdout
    assert "## Search (issue 6)" in out
    for mode in ("fts", "semantic", "hybrid"):
        assert f"| `2k-20p` | 2,000 | 20 | wordllama | one project | {mode} |" in out, out
    assert "minilm-l6-v2-dynint8" in out and "wordllama-l2supercat-256" in out


def test_cold_start_benchmark_runs_small():
    result = subprocess.run(
        [sys.executable, "bench/bench_cold_start.py", "--runs", "1", "--observations", "200",
         "--no-cli"], cwd=REPO, capture_output=True, text=True, timeout=540)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "## Cold SessionStart (issue 13)" in result.stdout
    assert "| SessionStart, worker DOWN (prints the snapshot, starts the worker) |" in \
        result.stdout and "| 1/1 |" in result.stdout, result.stdout


def test_summary_benchmark_runs_small():
    result = subprocess.run(
        [sys.executable, "bench/bench_summary.py", "--sessions", "1", "--quick-exits", "1"],
        cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "## Summaries (issue 13)" in result.stdout
    assert "| **Stop → summary stored, AI backend (fake CLI)** |" in result.stdout


def test_context_flood_benchmark_runs_small():
    # --base is this tree too: the script's run is checked here, not the figures.
    result = subprocess.run(
        [sys.executable, "bench/bench_context_flood.py", "--base", str(REPO), "--rounds", "1",
         "--builds", "2"], cwd=REPO, capture_output=True, text=True, timeout=540)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "## SessionStart context after a flood of reads (round 7)" in result.stdout
    assert "| after |" in result.stdout and "| before |" in result.stdout


def test_first_search_benchmark_runs_small(tmp_path):
    # --before HEAD: this tree's last commit against the working tree; the run is
    # checked, not the figures. A few observations; the worker embeds them itself.
    from memlite import storage
    from memlite.embed.minilm import MiniLMEmbedder

    MiniLMEmbedder()  # the run's model cache holds its int8 copy: the workers load it at once
    data = tmp_path / "memory"
    conn = storage.connect(data)
    try:
        with conn:
            for i in range(12):
                storage.insert_observation(conn, storage.NewObservation(
                    session_id="s1", project="/repo/a", type="discovery",
                    title=f"retry the settlement batch {i}", narrative="cache parser"))
    finally:
        conn.close()
    result = subprocess.run(
        [sys.executable, "bench/bench_first_search.py", "--before", "HEAD", "--runs", "1",
         "--delays", "4", "--db", str(data / "memlite.db"), "--project", "/repo/a"],
        cwd=REPO, capture_output=True, text=True, timeout=540)
    assert result.returncode == 0, result.stderr[-3000:]
    rows = [line for line in result.stdout.splitlines() if line.startswith("| 0 | 4 s |")]
    assert len(rows) == 4, result.stdout  # two filters, two revisions
