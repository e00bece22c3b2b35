"""The hook launcher's own cost (plugin/scripts/memlite-hook and python.sh): it runs at
every Claude Code event, before any Python starts.

Each case execs ``/bin/true`` instead of a Python, so what is measured is the shell, the
sourced ``python.sh`` and its checks; the floor is ``/bin/true`` run directly, in the same
interleaved loop. Cases: ``$MEMLITE_PYTHON`` set (the first candidate), and a fake Mac
with the Command Line Tools and no Homebrew (``MEMLITE_LAUNCHER_ROOT``: every candidate
looked at, then the developer-directory check before ``/usr/bin/python3``).
``--old PATH`` adds another launcher script to compare (e.g. a previous version).

    python -m bench.bench_launcher [--runs 1000] [--old PATH] [--write]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench.benchmarks_md import write_section

HOOK = Path(__file__).resolve().parent.parent / "plugin" / "scripts" / "memlite-hook"
HEADING = "## Launcher (issue 14)"


def _fake_mac(root: Path) -> None:
    for path in ("usr/bin/python3", "usr/bin/xcode-select",
                 "Library/Developer/CommandLineTools/usr/bin/python3"):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).symlink_to("/bin/true")


def _p10(values: list[float]) -> float:
    """The 10th percentile: less disturbed by other sessions' load than the median."""
    return sorted(values)[len(values) // 10]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--old", type=Path)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memlite-launcher-") as tmp:
        root = Path(tmp)
        _fake_mac(root)
        cases: dict[str, tuple[list[str], dict[str, str]]] = {
            "floor: `/bin/true` run directly": (["/bin/true"], {}),
            "`memlite-hook`, `$MEMLITE_PYTHON` set": (
                [str(HOOK), "Stop"], {"MEMLITE_PYTHON": "/bin/true"}),
            "`memlite-hook`, a Mac with the Command Line Tools, no Homebrew (last candidate)": (
                [str(HOOK), "Stop"], {"MEMLITE_LAUNCHER_ROOT": str(root)}),
        }
        new = "`memlite-hook`, `$MEMLITE_PYTHON` set"
        old = f"`{args.old.name}` given by --old, `$MEMLITE_PYTHON` set" if args.old else ""
        if args.old:
            cases[old] = (
                [str(args.old), "Stop"], {"MEMLITE_PYTHON": "/bin/true"})
        times: dict[str, list[float]] = {k: [] for k in cases}
        for _ in range(args.runs):
            for name, (argv, env) in cases.items():
                started = time.perf_counter()
                subprocess.run(argv, env={"PATH": "/nonexistent", **env},
                               stdin=subprocess.DEVNULL, check=True)
                times[name].append((time.perf_counter() - started) * 1000)
    load = os.getloadavg()[0]
    u = platform.uname()
    extra = _p10(times[new]) - _p10(times[old]) if args.old else 0.0
    floor = statistics.median(times["floor: `/bin/true` run directly"])
    floor10 = _p10(times["floor: `/bin/true` run directly"])
    rows = [f"| {name} | {statistics.median(v):.2f} | {statistics.median(v) - floor:+.2f} | "
            f"{_p10(v):.2f} | {_p10(v) - floor10:+.2f} |" for name, v in times.items()]
    section = "\n".join([
        HEADING, "",
        f"`bench/bench_launcher.py`, {datetime.date.today().isoformat()}, `{u.system} "
        f"{u.release} {u.machine}, {os.cpu_count()} CPUs`, /bin/sh = "
        f"`{os.path.realpath('/bin/sh')}`, load {load:.1f} (shared with other sessions); "
        f"{args.runs} interleaved runs each, wall time of the whole process from Python's "
        "`subprocess.run` (its own cost is in the floor):", "",
        "| case | p50 ms | over the floor | p10 ms | over the floor |", "|---|---|---|---|---|",
        *rows, "",
        "The shell's start is most of it; the rest is sourcing `python.sh` and its `[ -x ]` "
        "tests (no fork)." + (
            f" Against `--old` in this run: {extra:+.2f} ms "
            "at p10 (new minus old, `$MEMLITE_PYTHON` set); at load 5-6 runs of this script "
            "differed by up to ±0.8 ms between the two." if args.old else ""),
    ])
    print(section)
    if args.write:
        write_section(HEADING, section)


if __name__ == "__main__":
    main()
