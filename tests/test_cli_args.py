"""Bad arguments to the ``memlite`` command are refused before anything runs.

Found in a new-user trial (docs/user-trials.md, round 6): ``memlite worker start
--timeout -1``, ``reindex --timeout -1``, ``dashboard --timeout -1`` and ``worker restart
--timeout 0`` started a worker, stopped it, and said it "was not ready in time, see
worker.log"; ``--timeout nan`` waited for nothing; ``doctor --deadline -5`` ran the
canary and failed it "within -5 s"; ``spool status --latest -1`` showed all reasons but
the oldest.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from memlite.cli import build_parser

WAITS = [["worker", "start", "--timeout"], ["worker", "stop", "--timeout"],
         ["worker", "restart", "--timeout"], ["doctor", "--deadline"],
         ["reindex", "--timeout"], ["dashboard", "--timeout"]]


@pytest.mark.parametrize("command", WAITS, ids=lambda c: " ".join(c[:-1]))
@pytest.mark.parametrize("bad", ["-1", "0", "nan", "inf", "abc", ""])
def test_a_wait_that_is_not_a_positive_number_of_seconds_is_refused(command, bad, capsys):
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args([*command, bad])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert command[-1] in err and "seconds" in err, err


@pytest.mark.parametrize("command", WAITS, ids=lambda c: " ".join(c[:-1]))
def test_a_positive_wait_is_taken(command):
    args = build_parser().parse_args([*command, "2.5"])
    assert getattr(args, command[-1].lstrip("-")) == 2.5


def test_a_refused_wait_starts_no_worker(data_dir):
    done = subprocess.run([sys.executable, "-m", "memlite", "worker", "start", "--timeout",
                           "-1"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "greater than 0" in done.stderr and "not ready in time" not in done.stderr
    assert not (data_dir / "worker.pid").exists()
    assert not (data_dir / "worker.log").exists()


@pytest.mark.parametrize("bad", ["-1", "2.5", "x"])
def test_spool_status_latest_takes_a_count(bad, capsys):
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["spool", "status", "--latest", bad])
    assert exited.value.code == 2 and "--latest" in capsys.readouterr().err
    assert build_parser().parse_args(["spool", "status", "--latest", "0"]).latest == 0
