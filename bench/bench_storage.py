"""Storage benchmark: ingestion through the storage actor, and read latency at scale.

Figures, not pass/fail. What it measures, each on a fresh database in a temporary data
directory on the same disk as the working tree:

* **Floor**: one no-op ``async_run`` hop into the writer's thread, and one empty
  ``BEGIN IMMEDIATE; COMMIT`` hop: nothing can be faster than these per commit.
* **Ingestion**: ``--events`` hook events stored through ``StorageActor`` by 1, 8 and 64
  concurrent senders, each awaiting its own commit before sending the next (the way
  hooks do), with ``synchronous=NORMAL`` and again with ``FULL`` (DESIGN.md §4 asks
  whether FULL is affordable). Target: >= 20,000 events/s with 64 senders. CPU time per
  event is split between the event-loop thread and the writer's worker thread (read
  from ``/proc``), which shows where the time goes.
* **Reads**: with ``--observations`` observations over 20 projects, the latency seen by a
  caller of a reader connection (thread hop included) of a point read, a project's recent
  observations, and FTS5 searches of one and two words.

Usage::

    python bench/bench_storage.py                 # print the Markdown section
    python bench/bench_storage.py --write         # ... and update BENCHMARKS.md
    python bench/bench_storage.py --events 20000  # a quicker run
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import random
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import apsw
import trio

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks_md import ms, percentile, write_section  # noqa: E402

from memlite import storage  # noqa: E402
from memlite.actors.core import spawn  # noqa: E402
from memlite.actors.storage import StorageActor, StoreEvent  # noqa: E402

SECTION = "## Storage (issue 2)"
BENCHMARKS = ROOT / "BENCHMARKS.md"
PROJECTS = [f"/home/dev/project-{i:02d}" for i in range(20)]


def payload(i: int) -> dict:
    """A PostToolUse payload of realistic shape and size (~700 bytes of JSON)."""
    return {
        "hook_event_name": "PostToolUse",
        "cwd": "/home/dev/project-00",
        "permission_mode": "default",
        "tool_name": "Bash",
        "tool_input": {"command": f"pytest tests/test_{i % 97}.py -q", "description": "Run"},
        "tool_response": {
            "stdout": f"{i} passed in 0.{i % 10}s\n" + "." * 300,
            "stderr": "",
            "interrupted": False,
        },
        "duration_ms": i % 5000,
    }


async def timed(fn: Callable[[], Awaitable[object]], n: int) -> list[float]:
    samples = []
    for _ in range(n):
        start = time.perf_counter()
        await fn()
        samples.append(time.perf_counter() - start)
    return samples


# --- floor --------------------------------------------------------------------------


def _empty_commit(conn: apsw.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("COMMIT")


async def measure_floor(base: Path) -> dict[str, float]:
    async with storage.open_writer(base / "floor") as conn:
        hop = await timed(lambda: conn.async_run(lambda: None), 3000)
        commit = await timed(lambda: conn.async_run(_empty_commit, conn), 3000)
    return {"hop_p50": percentile(hop, 0.5), "commit_p50": percentile(commit, 0.5)}


# --- ingestion ----------------------------------------------------------------------


def thread_cpu_seconds(name: str) -> float:
    """CPU time (user + system) of the live thread called ``name``, from /proc."""
    (thread,) = [t for t in threading.enumerate() if t.name == name]
    with open(f"/proc/self/task/{thread.native_id}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def ingest(base: Path, events: int, senders: int, synchronous: str) -> dict[str, float]:
    actor = StorageActor(base / f"ingest-{senders}-{synchronous}", synchronous=synchronous)
    per_sender = events // senders
    async with spawn(actor.run) as ref:

        async def sender(k: int) -> None:
            session = f"bench-{senders}-{k}"
            for i in range(per_sender):
                msg = payload(i)
                await ref.ask(
                    lambda reply, i=i, msg=msg: StoreEvent(
                        session_id=session, event_name="PostToolUse", tool_name="Bash",
                        tool_use_id=f"toolu_{k}_{i}", payload=msg, reply=reply,
                    ),
                    timeout=30,
                )

        writer_cpu = thread_cpu_seconds("memlite-db-writer")
        checkpointer_cpu = thread_cpu_seconds("memlite-db-checkpointer")
        process_cpu = time.process_time()
        start = time.perf_counter()
        async with trio.open_nursery() as nursery:
            for k in range(senders):
                nursery.start_soon(sender, k)
        elapsed = time.perf_counter() - start
        writer_cpu = thread_cpu_seconds("memlite-db-writer") - writer_cpu
        checkpointer_cpu = thread_cpu_seconds("memlite-db-checkpointer") - checkpointer_cpu
        process_cpu = time.process_time() - process_cpu
    stats = actor.statistics()
    total = per_sender * senders
    assert stats.failed == 0 and stats.messages == total
    return {
        "senders": senders, "synchronous": synchronous, "events": total,
        "seconds": elapsed, "rate": total / elapsed, "batches": stats.batches,
        "mean_batch": stats.messages / stats.batches,
        "loop_cpu": (process_cpu - writer_cpu - checkpointer_cpu) / total,
        "writer_cpu": writer_cpu / total, "checkpointer_cpu": checkpointer_cpu / total,
    }


# --- reads --------------------------------------------------------------------------


def vocabulary(rng: random.Random, size: int = 3000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = {"".join(rng.choices(letters, k=rng.randint(3, 10))) for _ in range(size * 2)}
    return sorted(words)[:size]


def populate(location: Path, count: int, rng: random.Random, words: list[str]) -> float:
    """Insert ``count`` observations directly (not through the actor); returns seconds."""
    # Zipf-like word frequencies, like real text: a few common words, a long tail.
    weights = [1 / (rank + 1) for rank in range(len(words))]
    conn = storage.connect(location)
    start = time.perf_counter()
    with conn:
        for i in range(count):
            text = rng.choices(words, weights, k=48)
            storage.insert_observation(conn, storage.NewObservation(
                session_id=f"s{i // 50}", project=PROJECTS[i % len(PROJECTS)],
                type=rng.choice(["discovery", "bugfix", "feature", "change", "decision"]),
                title=" ".join(text[:6]), subtitle=" ".join(text[6:12]),
                narrative=" ".join(text[12:40]), facts=[" ".join(text[40:44])],
                concepts=text[44:46], files_modified=[f"src/{text[46]}/{text[47]}.py"],
                backend="ai",
            ))
    elapsed = time.perf_counter() - start
    conn.close()
    return elapsed


async def measure_reads(base: Path, count: int) -> dict[str, object]:
    rng = random.Random(42)
    words = vocabulary(rng)
    location = base / "reads"
    populate_s = await trio.to_thread.run_sync(populate, location, count, rng, words)
    results: dict[str, object] = {"populate_s": populate_s}
    # With Zipf frequencies over 3,000 words and 48 words per observation, each of the 20
    # most frequent words is in most observations (like "the"), words ranked 200-500 are
    # in a few percent of them (like "checkpoint"), and those past 1,500 in very few.
    frequent, mid, rare = words[:20], words[200:500], words[1500:]
    async with storage.open_reader(location) as reader:

        async def run(fn, *args, **kwargs):
            return await reader.async_run(fn, reader, *args, **kwargs)

        cases = {
            "point read (`get_observation`)":
                lambda: run(storage.get_observation, rng.randint(1, count)),
            "recent 20 in a project (`recent_observations`)":
                lambda: run(storage.recent_observations, rng.choice(PROJECTS), limit=20),
            "FTS, 1 frequent word (in most observations), in a project":
                lambda: run(storage.search_observations, rng.choice(frequent),
                            project=rng.choice(PROJECTS), limit=20),
            "FTS, 1 mid-frequency word, in a project":
                lambda: run(storage.search_observations, rng.choice(mid),
                            project=rng.choice(PROJECTS), limit=20),
            "FTS, 2 words (mid + rare), in a project":
                lambda: run(storage.search_observations,
                            f"{rng.choice(mid)} {rng.choice(rare)}",
                            project=rng.choice(PROJECTS), limit=20),
            "FTS, 1 rare word, all projects":
                lambda: run(storage.search_observations, rng.choice(rare), limit=20),
        }
        for name, fn in cases.items():
            await timed(fn, 20)  # warm the page cache and statement cache
            samples = await timed(fn, 500)
            results[name] = (percentile(samples, 0.5), percentile(samples, 0.95))
    return results


# --- report -------------------------------------------------------------------------


def machine_line() -> str:
    u = platform.uname()
    return f"{u.system} {u.node} {u.release} {u.machine}, {os.cpu_count()} CPUs"


def report(args, floor, ingestion, reads) -> str:
    today = datetime.date.today().isoformat()
    vec = storage.connect(args.base / "version")
    vec_version = vec.execute("SELECT vec_version()").fetchall()[0][0]
    vec.close()
    lines = [
        SECTION, "",
        f"Measured {today} by `python bench/bench_storage.py --events {args.events} "
        f"--observations {args.observations}`.",
        "",
        f"- Machine: `{machine_line()}`; data directory on the working tree's disk.",
        f"- Python {platform.python_version()}, SQLite {apsw.sqlite_lib_version()} "
        f"(APSW {apsw.apsw_version()}), sqlite-vec {vec_version}, trio {trio.__version__}.",
        "- Settings: WAL (`synchronous` as in the table; NORMAL is the default), one writer "
        "connection owned by the storage actor; each sender awaits its commit before "
        "sending the next event.",
        f"- Floor, same run: a no-op `async_run` hop takes {ms(floor['hop_p50'])} (p50); "
        f"an empty `BEGIN IMMEDIATE; COMMIT` hop {ms(floor['commit_p50'])}.",
        "",
        "### Ingestion through the storage actor (group commit)",
        "",
        "| senders | synchronous | events | seconds | events/s | commits | mean batch "
        "| CPU/event: event loop | CPU/event: writer thread | CPU/event: checkpointer |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in ingestion:
        lines.append(
            f"| {r['senders']} | {r['synchronous']} | {r['events']:,} | {r['seconds']:.1f} | "
            f"**{r['rate']:,.0f}** | {r['batches']:,} | {r['mean_batch']:.1f} | "
            f"{ms(r['loop_cpu'])} | {ms(r['writer_cpu'])} | {ms(r['checkpointer_cpu'])} |"
        )
    lines += [
        "",
        "Target: ≥ 20,000 events/s with 64 senders. With one sender every event is its own "
        f"ask, thread hop and commit ({ms(floor['commit_p50'])} for an empty commit hop "
        "alone). The CPU columns are per event, from /proc: the event loop (asks, replies, "
        "scheduling) and the writer's thread (JSON, hashing, SQL, commit) share one GIL, so "
        "their sum bounds the rate; the checkpointer thread mostly runs outside the GIL, "
        "on the other core.",
        "",
        "What changed since 11,077 events/s (35 + 42 µs CPU per event; profiled with "
        "py-spy): WAL checkpoints (two fsyncs inside a commit every sender waits for) run in "
        "a thread of their own, the writer checkpointing itself only past 10,000 WAL pages; "
        "a batch runs without per-message savepoints and is rerun with them only if a "
        "message fails; an ask uses a one-shot `Reply` instead of a memory-channel pair and "
        "one timer task per Trio run instead of a cancel scope per ask (~6 µs alone). Most "
        "writer time left is SQLite: events from 64 sessions dirty an index leaf per "
        "session per commit (~2.3 WAL pages per event).",
        "",
        f"### Reads at {args.observations:,} observations (20 projects, reader connection)",
        "",
        f"Populated directly in one transaction in {reads['populate_s']:.1f} s "
        f"({args.observations / reads['populate_s']:,.0f} observations/s, FTS triggers "
        "included). Latency as a caller sees it, thread hop included, 500 queries each:",
        "",
        "| query | p50 | p95 |",
        "|---|---:|---:|",
    ]
    for name, value in reads.items():
        if name != "populate_s":
            lines.append(f"| {name} | {ms(value[0])} | {ms(value[1])} |")
    return "\n".join(lines) + "\n"




async def main(args) -> None:
    floor = await measure_floor(args.base)
    ingestion = []
    runs = [(n, "NORMAL") for n in args.senders] + [(n, "FULL") for n in args.full_senders]
    for senders, synchronous in runs:
        result = await ingest(args.base, args.events, senders, synchronous)
        ingestion.append(result)
        print(f"  {senders} senders, {synchronous}: {result['rate']:,.0f} events/s",
              file=sys.stderr)
    reads = await measure_reads(args.base, args.observations)
    section = report(args, floor, ingestion, reads)
    print(section)
    if args.write:
        write_section(SECTION, section)
        print(f"updated {BENCHMARKS}", file=sys.stderr)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=100_000, help="events per ingestion run")
    parser.add_argument("--observations", type=int, default=100_000,
                        help="observations for the read benchmark")
    parser.add_argument("--senders", type=lambda s: [int(x) for x in s.split(",")],
                        default=[1, 8, 64], help="comma-separated sender counts")
    parser.add_argument("--full-senders", type=lambda s: [int(x) for x in s.split(",") if x],
                        default=[1, 64], help="sender counts to rerun with synchronous=FULL")
    parser.add_argument("--write", action="store_true", help=f"update {SECTION} in BENCHMARKS.md")
    return parser.parse_args(argv)


if __name__ == "__main__":
    arguments = parse_args()
    with tempfile.TemporaryDirectory(prefix="memlite-bench-", dir=ROOT / "bench") as tmp:
        arguments.base = Path(tmp)
        trio.run(main, arguments)
