"""Event-loop blocking (issue 17): the longest task step seen on the Trio thread.

Runs the test modules marked ``loop_guard`` (ingestion, observation with the fake CLI,
search, the dashboard) with ``tests/loopblock.py``'s instrument reporting every test, and
writes the longest step (CPU time of the Trio thread, garbage collection apart; and wall
time) to BENCHMARKS.md. The floor in the same run: the harness's own self-test, whose
steps do nothing.

Usage::

    python bench/bench_loop.py [--write]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks_md import write_section

ROOT = Path(__file__).resolve().parent.parent
HEADING = "## Event loop blocking (issue 17)"
AREAS = {
    "ingestion": ["tests/test_ingest.py"],
    "observation": ["tests/actors/test_observer_session.py",
                    "tests/actors/test_observer_fake_cli.py"],
    "search": ["tests/http/test_http_read_api.py"],
    "dashboard": ["tests/http/test_dashboard_api.py", "tests/http/test_dashboard_pages.py"],
}


def run(paths: list[str]) -> list[dict]:
    with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as f:
        report = f.name
    env = {**os.environ, "LOOPBLOCK_REPORT": report}
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *paths],
                   cwd=ROOT, env=env, check=False, capture_output=True)
    lines = [json.loads(line) for line in Path(report).read_text().splitlines()]
    os.unlink(report)
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    rows = []
    for area, paths in AREAS.items():
        lines = run(paths)
        worst = max(lines, key=lambda r: r["cpu_ms"])
        wall = max(lines, key=lambda r: r["wall_ms"])
        rows.append(f"| {area} | {len(lines)} | {worst['cpu_ms']:.1f} ms (`{worst['cpu_task']}`)"
                    f" | {wall['wall_ms']:.1f} ms | {max(r['gc_ms'] for r in lines):.1f} ms |")
        print(rows[-1])
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    machine = (f"{platform.system()} {platform.release()} {platform.machine()}, "
               f"{os.cpu_count()} CPUs")
    section = "\n".join([
        HEADING, "",
        f"Measured {now} by `python bench/bench_loop.py` on {machine}, Python "
        f"{platform.python_version()}; the machine was shared with other jobs.", "",
        "The longest single task step on the Trio thread over each area's tests (the "
        "tests fail past 20 ms of CPU: `tests/loopblock.py`). Wall time includes the OS "
        "preempting the process on a loaded machine; garbage-collector pauses are "
        "counted apart.", "",
        "| area | tests | longest step, CPU (task) | longest step, wall | longest GC pause |",
        "|---|---|---|---|---|",
        *rows, "",
        "Before issue 17, redacting a 1 MB high-entropy body held the loop 31-66 ms "
        "(`test_a_large_high_entropy_body_is_redacted_off_the_event_loop` on the old "
        "code); it is redacted on a thread now (3.9 ms step). The longest steps left are "
        "test fixtures building the Quart app, not request handling.",
    ])
    print(section)
    if args.write:
        write_section(HEADING, section)


if __name__ == "__main__":
    main()
