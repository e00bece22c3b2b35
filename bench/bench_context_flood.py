"""The SessionStart block after a flood of reads (round 7, trials 16-17), before and after.

    python bench/bench_context_flood.py [--base DIR] [--rounds 3] [--write]

Database (a fresh data directory): one project, ``payments``, with 20 earlier sessions of
work (each an AI decision, a bugfix, a feature and 7 changes: 200 observations, 40 of
them decisions or fixes), then trial 16's burst: one session of 2,000 tool events,
observed by the rules backend (``observer.rules.observe``), Read / Grep / Bash (`git log`
style, changes nothing) / Edit round robin. Optionally (``--older``) 50,000 more rules
reads in older sessions of the same project.

Each variant builds the block (``build_context_for``, default settings: summaries, index,
full, max chars = 3, 50, 5, 9000) in a child process that imports memlite from its own
tree: ``--base`` (the code before, e.g. ``git archive 4a4e409 memlite``) and this
checkout; rounds alternate (before, after, before, ...) so both see the same load. Each
child warms up once then times ``--builds`` builds. Reported: p50/p95 ms, the block's
size, how many of the 50 index lines are reads/searches, how many of the 40 earlier
decisions/fixes appear, and the full observations from the burst. The floor is the same
child's time to read the 50 newest observations (what the old index read).
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from benchmarks_md import write_section  # noqa: E402

SECTION = "## SessionStart context after a flood of reads (round 7)"

CHILD = r"""
import json, statistics, sys, time
from memlite.context import build_context
from memlite.storage import connect
from memlite.storage.reads import recent_observations
data, project, builds = sys.argv[1], sys.argv[2], int(sys.argv[3])
conn = connect(data, writer=False)
block = build_context(conn, project)  # defaults: 3, 50, 5, 9000
times, floor = [], []
for _ in range(builds):
    t = time.perf_counter(); block = build_context(conn, project)
    times.append(time.perf_counter() - t)
    t = time.perf_counter(); recent_observations(conn, project, limit=50)
    floor.append(time.perf_counter() - t)
text = block.text
index = text.split("## Activity index", 1)[1].split("\n## ", 1)[0]
lines = [l for l in index.splitlines() if l.startswith("- ")]
heads = text.split("## Latest observations in full", 1)[1].split("### #")[1:]
print(json.dumps({
    "p50": statistics.median(times) * 1000,
    "p95": sorted(times)[max(0, int(len(times) * .95) - 1)] * 1000,
    "floor": statistics.median(floor) * 1000, "chars": len(text), "lines": len(lines),
    "reads": sum(("] Read " in l or "] Searched for" in l or "] Ran `" in l) for l in lines),
    "early": sum(f"Earlier decision {k} " in index for k in range(20))
             + sum(f"Earlier fix {k} " in index for k in range(20)),
    "burst_details": sum(any(m in h.split("\n", 1)[0] for m in ("src/recon/", "reconcile_"))
                         for h in heads),
    "burst_lines": sum(any(m in l for m in ("src/recon/", "reconcile_", "session burst"))
                       for l in lines),
}))
"""


def build_db(data: Path, project: str, older: int) -> None:
    from memlite.observer.rules import observe
    from memlite.storage import (
        NewObservation,
        connect,
        insert_event,
        insert_observation,
        start_session,
    )
    from memlite.storage.reads import get_event

    conn = connect(data)
    at = 1_764_000_000_000
    with conn:
        for k in range(older // 1000):
            sid = f"older-{k}"
            start_session(conn, session_id=sid, project=project, at_ms=at)
            for i in range(1000):
                insert_observation(conn, NewObservation(
                    session_id=sid, project=project, type="discovery", backend="rules",
                    title=f"Read src/old/m{k}_{i}.py", files_read=(f"src/old/m{k}_{i}.py",),
                    at_ms=at + i))
            at += 10_000
        for k in range(20):
            sid = f"work-{k}"
            start_session(conn, session_id=sid, project=project, at_ms=at)
            rows = [("decision", f"Earlier decision {k} : settle batches in {k + 2} parts"),
                    ("bugfix", f"Earlier fix {k} : refund replay {k} double-counted"),
                    ("feature", f"Earlier feature {k}: export {k}")]
            rows += [("change", f"Edited src/billing/f{k}_{i}.py") for i in range(7)]
            for i, (kind, title) in enumerate(rows):
                insert_observation(conn, NewObservation(
                    session_id=sid, project=project, type=kind, title=title, backend="ai",
                    narrative=f"{title}: why and how " * 4,
                    files_modified=(f"{project}/src/billing/f{k}_{i}.py",), at_ms=at + i))
            at += 100_000
        start_session(conn, session_id="burst", project=project, at_ms=at)
        for i in range(2000):
            tool, data_ = (("Read", {"file_path": f"{project}/src/recon/part_{i}.py"}),
                           ("Grep", {"pattern": f"reconcile_{i}"}),
                           ("Bash", {"command": f"git log -1 -- src/recon/part_{i}.py"}),
                           ("Edit", {"file_path": f"{project}/src/recon/part_{i}.py",
                                     "old_string": "a", "new_string": "b"}))[i % 4]
            stored = insert_event(conn, session_id="burst", event_name="PostToolUse",
                                  tool_name=tool, tool_use_id=f"t{i}", at_ms=at + i,
                                  payload={"hook_event_name": "PostToolUse", "tool_name": tool,
                                           "tool_input": data_, "tool_response": {}})
            found = observe(get_event(conn, stored.id), project=project)
            if found is not None:
                insert_observation(conn, found)
    conn.close()


def build_plain(data: Path, project: str, n: int) -> None:
    """``n`` observations of ordinary work in one project: sessions of 500, AI and rules
    alternating, change / feature / discovery (no reads: nothing to collapse)."""
    from memlite.storage import NewObservation, connect, insert_observation, start_session

    conn = connect(data)
    with conn:
        for i in range(n):
            sid = f"s{i // 500}"
            if i % 500 == 0:
                start_session(conn, session_id=sid, project=project, at_ms=1_000 + i)
            insert_observation(conn, NewObservation(
                session_id=sid, project=project, type=("change", "feature", "discovery")[i % 3],
                title=f"observation {i} of the ledger", narrative="n " * 100,
                backend="ai" if i % 2 else "rules", at_ms=1_000 + i))
    conn.close()


def run_child(tree: Path, data: Path, project: str, builds: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree), "MEMLITE_DATA_DIR": str(data)}
    out = subprocess.run([sys.executable, "-c", CHILD, str(data), project, str(builds)],
                         env=env, capture_output=True, text=True, timeout=600, cwd=tree)
    if out.returncode != 0:
        raise SystemExit(out.stderr[-3000:])
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--base", type=Path, required=True,
                        help="a tree holding the code before (its memlite/ package)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--builds", type=int, default=40)
    parser.add_argument("--older", type=int, default=0)
    parser.add_argument("--plain", type=int, default=0,
                        help="also time a project of this many ordinary observations")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    plain: dict[str, list[float]] = {"before": [], "after": []}
    if args.plain:
        with tempfile.TemporaryDirectory() as tmp:
            project = os.path.join(tmp, "ledger")
            os.makedirs(os.path.join(project, ".git"))
            Path(project, ".git", "HEAD").write_text("ref: refs/heads/main\n")
            build_plain(Path(tmp) / "data", project, args.plain)
            for _ in range(args.rounds):
                for name, tree in (("before", args.base), ("after", ROOT)):
                    plain[name].append(run_child(tree, Path(tmp) / "data", project,
                                                 args.builds)["p50"])
    with tempfile.TemporaryDirectory() as tmp:
        project = os.path.join(tmp, "payments")
        os.makedirs(os.path.join(project, ".git"))
        Path(project, ".git", "HEAD").write_text("ref: refs/heads/main\n")
        data = Path(tmp) / "data"
        build_db(data, project, args.older)
        results: dict[str, list[dict]] = {"before": [], "after": []}
        for _ in range(args.rounds):
            results["before"].append(run_child(args.base, data, project, args.builds))
            results["after"].append(run_child(ROOT, data, project, args.builds))
    load = os.getloadavg()
    rows = []
    for name, runs in results.items():
        best = min(runs, key=lambda r: r["p50"])
        rows.append(f"| {name} | {best['p50']:.2f} | {best['p95']:.2f} | {best['floor']:.2f} | "
                    f"{best['chars']:,} | {best['reads']} / {best['lines']} | "
                    f"{best['burst_lines']} | {best['early']} / 40 | "
                    f"{best['burst_details']} / 5 |")
    machine = f"{platform.system()} {platform.machine()}, Python {platform.python_version()}"
    section = "\n".join([
        SECTION, "",
        f"Measured {datetime.date.today().isoformat()} on {machine} by "
        f"`python bench/bench_context_flood.py --base <tree at 4a4e409> --rounds "
        f"{args.rounds} --builds {args.builds}{f' --older {args.older}' if args.older else ''}"
        f"{f' --plain {args.plain}' if args.plain else ''}`"
        f"; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} at the end.",
        f"One project: 20 earlier sessions of AI work (200 observations, 40 decisions or "
        f"fixes), then one session of 2,000 tool events observed by the rules backend (Read, "
        f"Grep, Bash `git log`, Edit round robin)"
        f"{f', after {args.older:,} older rules reads' if args.older else ''}. Before and "
        f"after in alternating child processes, best round of {args.rounds} by p50, "
        f"{args.builds} builds each. Floor: the same child reading the 50 newest "
        "observations (what the old index read). Budget: 30 ms (the SessionStart target).",
        "",
        "| code | p50 ms | p95 ms | floor p50 ms | block chars | index lines that are "
        "single reads/searches | index lines of the burst | earlier decisions/fixes in the "
        "index | full observations from the burst |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        *rows, "",
        *([f"Ordinary work, no flood: {args.plain:,} observations in one project (sessions "
           f"of 500, AI and rules alternating, no reads), same child, best of {args.rounds}: "
           f"p50 {min(plain['before']):.2f} ms before, {min(plain['after']):.2f} ms after "
           "(one session holds the whole 500-observation window, so the 500 before it "
           "started are read too)."]
          if args.plain else []), ""])
    print(section)
    if args.write:
        write_section(SECTION, section)


if __name__ == "__main__":
    main()
