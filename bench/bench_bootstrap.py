"""The plugin venv's first-run bootstrap, before and after issue 16: time and size.

    python bench/bench_bootstrap.py [--before REV] [--write]

In one run, on this machine, from a warm package cache (pip's HTTP and wheel caches, and
the local package index):

* floor: ``python -m venv`` alone (what no install can go below);
* before: the bootstrap's ``build`` of revision ``--before`` (default: the commit
  before issue 16's work, ``18c3e61``), exported with ``git archive``: an unpinned install
  with the SDK's wheel (and its bundled CLI);
* after: this tree's ``build``: ``-c constraints.txt``, the SDK from its sdist,
  ``--no-compile``, runtime dependencies only.

An untimed ``after`` build runs first so that the sdist's built wheel is in pip's wheel
cache, as it is for every user after their first try. Size is the venv's apparent size
(sum of file sizes, MB = 10^6 bytes) and the largest packages in it.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmarks_md import write_section  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
HEADING = "## Plugin venv bootstrap (issue 16)"
BEFORE = "18c3e61"


def size_mb(path: Path) -> float:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total / 1e6


def biggest(venv: Path, n: int = 4) -> list[tuple[str, float]]:
    site = next(venv.glob("lib/python3*/site-packages"))
    sizes = [(p.name, size_mb(p)) for p in site.iterdir() if p.is_dir()
             and not p.name.endswith((".dist-info", "__pycache__"))]
    return sorted(sizes, key=lambda item: -item[1])[:n]


def build(source: Path, data: Path) -> tuple[float, bool]:
    """Run ``source``'s bootstrap build into ``data`` as the hook would; (seconds, ok)."""
    code = ("import sys; sys.path.insert(0, sys.argv[1])\n"
            "try:\n    from memlite.hooks.venv_build import build\n"
            "except ImportError:  # a revision before the build had its own module\n"
            "    from memlite.hooks.bootstrap import build\n"
            "sys.exit(build(sys.argv[2]))")
    data.mkdir(parents=True)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(source), str(data)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          stdin=subprocess.DEVNULL, check=False, cwd=data)
    return time.perf_counter() - started, done.returncode == 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=BEFORE)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memlite-bootstrap-") as tmp:
        tmp_path = Path(tmp)
        old = tmp_path / "before-src"
        old.mkdir()
        archive = subprocess.run(["git", "-C", str(REPO), "archive", args.before],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old)], input=archive, check=True)
        build(REPO, tmp_path / "warmup")  # the sdist's wheel into pip's cache
        shutil.rmtree(tmp_path / "warmup")
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "floor")], check=True)
        floor = time.perf_counter() - started
        rows = []
        for label, source in (("before", old), ("after", REPO)):
            data = tmp_path / label
            seconds, ok = build(source, data)
            venv = data / "venv"
            bundled = list(venv.glob("lib/python3*/site-packages/claude_agent_sdk/_bundled/claude"))
            rows.append((label, seconds, ok, size_mb(venv), biggest(venv),
                         os.lstat(bundled[0]).st_size / 1e6 if bundled else 0.0))
            print(f"{label}: {seconds:.1f} s ok={ok} {rows[-1][3]:.0f} MB", flush=True)
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [
        HEADING, "",
        f"Measured {when} by `python bench/bench_bootstrap.py` on {platform.system()} "
        f"{platform.release()} {platform.machine()}, {os.cpu_count()} CPUs (shared with other "
        f"jobs), Python {platform.python_version()}; warm package cache (local index, pip's "
        f"wheel cache holding the SDK's sdist build). Before = revision `{args.before}`.", "",
        "| what | time | venv size | bundled CLI | largest packages | target |",
        "|---|---:|---:|---:|---|---:|",
        f"| floor: `python -m venv` | {floor:.1f} s | | | | |",
    ]
    for label, seconds, ok, size, top, cli in rows:
        tops = ", ".join(f"{name} {mb:.0f}" for name, mb in top)
        target = "≤ 45 s, ≤ 250 MB" if label == "after" else ""
        status = "" if ok else " (FAILED)"
        lines.append(f"| {label}{status} | {seconds:.1f} s | {size:.0f} MB | {cli:.0f} MB | "
                     f"{tops} | {target} |")
    lines += ["", "After: runtime dependencies only (wordllama, the alternative MCP server and "
              "the test tools are extras), every version from `constraints.txt`, and "
              "claude-agent-sdk from its sdist, without the Claude Code binary its wheel "
              "bundles: the observer runs the user's own `claude` (`CLAUDE_CODE_PATH`, "
              "PATH, or the usual install places). `--no-compile` leaves bytecode to the "
              "first import of each module. The host's pip installs into the venv "
              "(`pip --python`), so the venv carries no pip or setuptools of its own."]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        write_section(HEADING, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
