"""Stop benchmark (issue 17): SIGTERM to exit in the worst case, against the floor.

The worst case is ``chaos/test_worst_stop.py``'s scene: 8 sessions with an AI summary in
progress (the fake CLI, 30 s summary delay), storage batches flowing, an SSE client.
The floor, in the same run: SIGTERM to exit of an idle worker (rules observer, nothing
in progress). The bound stated in ``memlite/actors/graces.py`` is ``STOP_BOUND`` (5 s).

Usage::

    python bench/bench_stop.py [--runs 3] [--write]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "chaos"), str(ROOT / "tests")]

from benchmarks_md import write_section  # noqa: E402
from harness import Chaos, wait_until  # noqa: E402
from test_worst_stop import SESSIONS, worst_case_stop  # noqa: E402

from memlite.actors.graces import ROOT_STOP, STOP_BOUND  # noqa: E402
from memlite.lifecycle import pid_alive  # noqa: E402

HEADING = "## Stop (issue 17)"


def _clean_env() -> None:
    for key in [k for k in os.environ if k.startswith(("MEMLITE_", "FAKE_CLAUDE"))]:
        del os.environ[key]


def idle_stop(tmp: Path) -> float:
    world = Chaos.create(tmp / "idle" / "memlite-data")
    try:
        pid = world.start_worker()
        time.sleep(1.0)
        began = time.monotonic()
        world.kill_worker(signal.SIGTERM)
        wait_until(lambda: not pid_alive(pid), 30, "the idle worker to exit")
        return time.monotonic() - began
    finally:
        world.stop()


def worst_stop(tmp: Path) -> dict[str, float | int]:
    data_dir = tmp / "worst" / "memlite-data"
    world = Chaos.create(data_dir, fake_cli=True, FAKE_CLAUDE_MODE="ok",
                         FAKE_CLAUDE_LOG=str(data_dir.parent / "fake.jsonl"),
                         FAKE_CLAUDE_SUMMARY_DELAY="30",
                         MEMLITE_OBSERVER_CONCURRENCY=str(SESSIONS))
    try:
        return worst_case_stop(world)
    finally:
        world.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    _clean_env()
    floors, worst = [], []
    for n in range(args.runs):
        with tempfile.TemporaryDirectory() as tmp:
            floors.append(idle_stop(Path(tmp)))
            worst.append(worst_stop(Path(tmp))["sigterm_to_exit_s"])
        print(f"run {n + 1}: idle {floors[-1]:.2f} s, worst case {worst[-1]:.2f} s")
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    machine = (f"{platform.system()} {platform.release()} {platform.machine()}, "
               f"{os.cpu_count()} CPUs")
    section = f"""{HEADING}

Measured {now} by `python bench/bench_stop.py --runs {args.runs}` on {machine}, Python
{platform.python_version()}; the machine was shared with other jobs.

| SIGTERM to process gone | median | max | bound |
|---|---|---|---|
| idle worker (floor) | {statistics.median(floors):.2f} s | {max(floors):.2f} s | |
| worst case: {SESSIONS} AI summaries in progress, storage batches, an SSE client | \
{statistics.median(worst):.2f} s | {max(worst):.2f} s | {STOP_BOUND:.1f} s |

The worst case is bounded by construction: the root's graces add up to {ROOT_STOP:.1f} s
(`memlite/actors/graces.py`), after which the worker cancels the root; the summaries in
progress take most of it (they get 1.5 s from the signal, then the rules summary is
stored).
"""
    print(section)
    if args.write:
        write_section(HEADING, section)


if __name__ == "__main__":
    main()
