"""``memlite search``: from the running worker, or from the database when it is down;
bad input refused with exit status 2 before anything is read."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest
from ports import free_port

from memlite import storage
from memlite.cli import main
from memlite.lifecycle import find_worker
from memlite.search_cli import _DOWN
from memlite.spawn import stop_worker

pytestmark = pytest.mark.timeout(120)
DAY_MS = 86_400_000


@pytest.fixture
def stored(data_dir):
    """Three observations of /repo/a (the first replaced by the second) and one of /repo/b;
    returns their ids."""
    conn = storage.connect(data_dir)
    ids = []
    with conn:
        for day, (project, type_, title) in enumerate([
                ("/repo/a", "decision", "Use requests for the HTTP client"),
                ("/repo/a", "decision", "Switched the HTTP client from requests to httpx"),
                ("/repo/a", "bugfix", "Fixed the invoice rounding in totals"),
                ("/repo/b", "decision", "HTTP client timeouts are 10 seconds")]):
            ids.append(storage.insert_observation(conn, storage.NewObservation(
                session_id="s1", project=project, type=type_, title=title,
                at_ms=1_700_000_000_000 + day * DAY_MS)).id)
    conn.close()
    return ids


def run(*args: str | bytes, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "memlite", "search", *args],
                          env=env or dict(os.environ), capture_output=True, text=True,
                          timeout=90)


@pytest.mark.parametrize("args, message", [
    ([], "the query is empty"),
    (["   "], "the query is empty"),
    (["x" * 1001], "the most is 1000"),
    (["x", "--limit", "0"], "from 1 to 100"),
    (["x", "--limit", "-1"], "from 1 to 100"),
    (["x", "--limit", "100000"], "from 1 to 100"),
    (["x", "--limit", "ten"], "not a whole number"),
    (["x", "--mode", "bm25"], "invalid choice"),
])
def test_bad_input_is_refused_with_status_2(args, message, capsys, stored, data_dir):
    before = hashlib.sha256(storage.db_path(data_dir).read_bytes()).hexdigest()
    try:
        status = main(["search", *args])
    except SystemExit as exc:  # argparse's own refusals
        status = exc.code
    err = capsys.readouterr()
    assert status == 2
    assert message in err.err and err.out == ""
    assert hashlib.sha256(storage.db_path(data_dir).read_bytes()).hexdigest() == before


def test_a_query_of_bytes_that_are_not_utf8_is_refused(stored):
    result = subprocess.run([sys.executable.encode(), b"-m", b"memlite", b"search", b"\xff\xfe"],
                            capture_output=True, timeout=60)
    assert result.returncode == 2
    assert b"not valid UTF-8" in result.stderr and result.stdout == b""


def test_with_the_worker_down_it_reads_the_database_and_starts_nothing(stored, data_dir):
    old, new, fix, other = stored
    result = run("HTTP", "client")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert sorted(line.split()[0] for line in lines) == sorted([f"#{new}", f"#{other}"])
    assert f"#{old}" not in result.stdout  # replaced: left out, as in every search
    line = next(line for line in lines if line.startswith(f"#{new} "))
    assert "decision" in line and "Switched the HTTP client from requests to httpx" in line
    assert line.endswith("(a)") and "2023-11-15" in line
    assert _DOWN in result.stderr
    assert find_worker(data_dir) is None  # no worker was started
    one = run("HTTP", "client", "--project", "/repo/b", "--json")
    answer = json.loads(one.stdout)
    assert [r["id"] for r in answer["results"]] == [other]
    assert _DOWN in answer["note"] and answer["mode_used"] == "fts"
    limited = json.loads(run("HTTP", "client", "--limit", "1", "--json").stdout)
    assert limited["count"] == 1


def test_no_match_and_no_database_say_so(data_dir):
    result = run("anything")
    assert result.returncode == 0 and result.stdout == ""
    assert "no memory database" in result.stderr and "no observation matches" in result.stderr


def test_with_a_worker_running_it_asks_the_worker(stored, data_dir):
    env = {**os.environ, "MEMLITE_WORKER_PORT": str(free_port())}
    try:
        started = subprocess.run([sys.executable, "-m", "memlite", "worker", "start"],
                                 env=env, capture_output=True, text=True, timeout=90)
        assert started.returncode == 0, started.stderr
        old, new, fix, other = stored
        result = run("HTTP", "client", "--project", "/repo/a", "--json", env=env)
        assert result.returncode == 0, result.stderr
        answer = json.loads(result.stdout)
        assert [r["id"] for r in answer["results"]] == [new]
        assert _DOWN not in (answer["note"] or "")  # the worker answered (its own note)
        bad = run("   ", env=env)
        assert bad.returncode == 2
        text = run("invoice", "rounding", env=env)
        assert text.stdout.startswith(f"#{fix}  ") and "bugfix" in text.stdout
    finally:
        stop_worker(data_dir, grace=5.0)
