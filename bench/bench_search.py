"""Search benchmark: search latency by mode at 10k-1M observations, embedding, context build.

Figures, not pass/fail. What it measures, on databases cached under
``/tmp/memlite-bench-search/`` (keyed by size and variant; ``--rebuild`` to force):

* **Floor**: a no-op ``SELECT 1`` on the same reader connection.
* **Search latency**: ``memlite.storage.search.search`` in each mode (``fts``,
  ``semantic``, ``hybrid``), limit 20, with a project filter (the way SessionStart and
  the MCP tools search), over ~50 queries (short keywords and long natural-language
  questions), p50/p95. Plus, at 100k: no project filter; 384-d random unit vectors
  (MiniLM's width) for the KNN cost; and one project holding all 100k observations.
  The reader is a plain synchronous ``storage.connect(dir, writer=False)`` (query-only,
  configured like the worker's ``open_reader`` but without its thread hop, which the
  storage benchmark measures).
* **Query embedding**: one query at a time, MiniLM and wordllama, reported separately
  and added to the hybrid p50 in the "total" column.
* **Embedding throughput**: sentences/s over 1,000 observation texts
  (``memlite.embed.observation_text``) in batches of 32 (what the embedder actor uses),
  and the vector insert rate into vec0 (``upsert_vectors``, grouped by project).
* **SessionStart context**: ``build_context_for`` at 100k on a project of ~5k
  observations, p50/p95.

Data: synthetic observations whose words are the 3,000 most frequent lowercase words of
the Python standard library's source (coding words), drawn with Zipf-like frequencies;
20 projects, uniform (5% each), sessions of 50 observations, in time order. Vectors are
real wordllama embeddings (unless said otherwise) inserted grouped by project in
transactions of 4,096.

Usage::

    python bench/bench_search.py                            # 10k and 100k, print Markdown
    python bench/bench_search.py --sizes 10000,100000,1000000 --write
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import sys
import time
from pathlib import Path

import apsw
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks_md import write_section  # noqa: E402
from search_measure import (  # noqa: E402  (others read them as bench_search.*)
    MODES,
    PROJECTS,
    load_average,
    log,
    measure_context,
    measure_embedding,
    measure_search,
    ms,
    percentile,
    profile_hybrid,
    query_vectors,
    timed,
)
from synthetic import (  # noqa: E402  (others read them as bench_search.*)
    Generator,
    queries,
    unit_rows,
    vocabulary,
)

from memlite import storage  # noqa: E402
from memlite.embed import load_embedder, observation_text  # noqa: E402

SECTION = "## Search (issue 6)"
CACHE = Path("/tmp/memlite-bench-search")
CHUNK = 4096  # observations per transaction and per embedding call when building


# --- building the databases -----------------------------------------------------------------


def _texts(rows) -> list[str]:
    return [observation_text(t, s, n, f, c, fm) for _, t, s, n, f, c, fm in rows]


def build(directory: Path, count: int, projects: list[str], vectors: str, words: list[str],
          embedder) -> dict:
    """Create ``directory/memlite.db`` with ``count`` observations and their vectors.

    ``vectors`` is ``"wordllama"`` (real embeddings of each observation's text) or
    ``"random-<dim>"`` (random unit vectors). Returns build timings.
    """
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    info: dict = {"count": count, "projects": len(projects), "vectors": vectors}
    conn = storage.connect(directory)
    gen = Generator(words, seed=count, projects=projects)
    start = time.perf_counter()
    batch: list[storage.NewObservation] = []

    def flush() -> None:
        with conn:
            for obs in batch:
                storage.insert_observation(conn, obs)
        batch.clear()

    for obs in gen.observations(count):
        batch.append(obs)
        if len(batch) == CHUNK * 4:
            flush()
    flush()
    info["observations_s"] = time.perf_counter() - start
    log(f"  {count:,} observations in {info['observations_s']:.1f} s")

    if vectors == "wordllama":
        dim, model = embedder.dim, embedder.name
    else:
        dim, model = int(vectors.split("-")[1]), vectors
    with conn:
        storage.ensure_vector_table(conn, dim, model)
    rng = np.random.default_rng(count)
    embed_s = insert_s = 0.0
    for project in projects:  # grouped by project, like the embedder's reindex
        last = 0
        while True:
            rows = conn.execute(
                "SELECT id, title, subtitle, narrative, facts, concepts, files_modified "
                "FROM observations WHERE project = ? AND id > ? ORDER BY id LIMIT ?",
                (project, last, CHUNK)).fetchall()
            if not rows:
                break
            last = rows[-1][0]
            t0 = time.perf_counter()
            if vectors == "wordllama":
                matrix = embedder.embed(_texts(rows))
            else:
                matrix = unit_rows(rng, len(rows), dim)
            t1 = time.perf_counter()
            with conn:
                storage.upsert_vectors(
                    conn, ((r[0], project, matrix[i].tobytes()) for i, r in enumerate(rows)))
            t2 = time.perf_counter()
            embed_s += t1 - t0
            insert_s += t2 - t1
    info["embed_s"], info["vector_insert_s"] = embed_s, insert_s
    log(f"  vectors ({vectors}): embed {embed_s:.1f} s, insert {insert_s:.1f} s "
        f"({count / insert_s:,.0f}/s)")
    conn.execute("PRAGMA optimize")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    info["build_s"] = time.perf_counter() - start
    info["db_bytes"] = (directory / storage.DB_FILENAME).stat().st_size
    (directory / "build.json").write_text(json.dumps(info))
    return info


def cached(name: str, count: int, projects: list[str], vectors: str, words, embedder,
           rebuild: bool) -> tuple[Path, dict]:
    directory = CACHE / name
    meta = directory / "build.json"
    if not rebuild and meta.exists():
        info = json.loads(meta.read_text())
        if (info["count"], info["projects"], info["vectors"]) == (count, len(projects), vectors):
            info["cached"] = True
            return directory, info
    log(f"building {name} ({count:,} observations, {len(projects)} projects, {vectors})")
    info = build(directory, count, projects, vectors, words, embedder)
    info["cached"] = False
    return directory, info


# --- report ---------------------------------------------------------------------------------


def machine_line() -> str:
    u = platform.uname()
    return f"{u.system} {u.node} {u.release} {u.machine}, {os.cpu_count()} CPUs"


def mb(n: int) -> str:
    return f"{n / 1e6:,.0f} MB"


def report(args, r: dict) -> str:
    today = datetime.date.today().isoformat()
    emb = r["embedding"]
    minilm = emb.get("minilm", {}).get("single_p50")
    sizes = ",".join(str(s) for s in args.sizes)
    lines = [
        SECTION, "",
        f"Measured {today} by `python bench/bench_search.py --sizes {sizes}"
        f"{' --random-1m' if args.random_1m else ''}{' --skip-extra' if args.skip_extra else ''}"
        f"{f' --rounds {args.rounds}' if args.rounds != 3 else ''}`.",
        "",
        f"- Machine: `{machine_line()}`; databases cached under `{CACHE}/` (on the VM's "
        "disk, not tmpfs; read from the page cache once warm). Load average at the start "
        f"of the run: {r['load_start']}, at the end: {r['load_end']} (other jobs share the "
        "machine).",
        f"- Python {platform.python_version()}, SQLite {apsw.sqlite_lib_version()} "
        f"(APSW {apsw.apsw_version()}), sqlite-vec {r['vec_version']}.",
        "- Reader: a synchronous query-only connection (`storage.connect(dir, writer=False)`, "
        "configured like the worker's `open_reader`, without its thread hop: see the storage "
        "section for the hop). Every search is `memlite.storage.search.search(..., limit=20)`"
        ", filtered on one project unless said otherwise; query embedding is not included.",
        f"- Floor, same run: `SELECT 1` on the reader takes {ms(r['floor'])} (p50).",
        "- Data: synthetic observations, words drawn Zipf-like from the 3,000 most frequent "
        "lowercase words of the Python standard library's source; title 8 words, subtitle 8, "
        "narrative 44, 2 facts of 10, 2 concepts, 1-2 files modified and 0-3 read out of 300 "
        "per project; sessions of 50 observations, each in a random one of 20 projects "
        "(uniform: ~5% each), in time order. Vectors: wordllama (256-d) embeddings of each "
        "observation's `observation_text`, inserted grouped by project; `random-N` means random "
        "N-d unit vectors and random query vectors (the KNN cost without the embedding cost; "
        "the engine knows no relevance floor for that model name, so it keeps every "
        "neighbour). `100k-1p` holds the same 100k observations in ONE project: "
        "partitioning by project helps only across projects.",
        f"- Queries: {len(r['queries'])}, half short (1-2 keywords of mid or rare frequency), "
        "half long natural-language questions (e.g. "
        f"\"{r['queries'][-1][1]}\"); each mode runs them {args.rounds} times after a warm-up "
        "round. Long questions rarely have every term in one observation, so full text falls "
        "back to any-term matching (the costly path).",
        "",
        "### Search latency",
        "",
        "| database | observations | projects | vectors | filter | mode | p50 | p95 | short p50 "
        "| long p50 | long p95 | total p50 with MiniLM query embedding |",
        "|---|---:|---:|---|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in r["search"]:
        for mode, v in row["modes"].items():
            total = ms(v["p50"] + minilm) if minilm and mode != "fts" else "—"
            p50 = f"**{ms(v['p50'])}**" if mode != "semantic" else ms(v["p50"])
            lines.append(
                f"| `{row['name']}` | {row['count']:,} | {row['projects']} | {row['vectors']} | "
                f"{row['filter']} | {mode} | {p50} | "
                f"{ms(v['p95'])} | {ms(v['short_p50'])} | {ms(v['long_p50'])} | "
                f"{ms(v['long_p95'])} | {total} |")
    lines += [
        "",
        "Targets at 100k: fts ≤ 10 ms, hybrid ≤ 30 ms (KNN included, query embedding not).",
        "",
        "### Databases",
        "",
        "| database | observations | projects | vectors | size | observations insert | "
        "embedding | vector insert | build total | vec0 `SELECT 1 … LIMIT 1` "
        "| `observation_vectors_rowids` `SELECT 1 … LIMIT 1` |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, info in r["builds"].items():
        lines.append(
            f"| `{name}` | {info['count']:,} | {info['projects']} | {info['vectors']} | "
            f"{mb(info['db_bytes'])} | {info['observations_s']:.1f} s "
            f"({info['count'] / info['observations_s']:,.0f}/s) | {info['embed_s']:.1f} s | "
            f"{info['vector_insert_s']:.1f} s "
            f"({info['count'] / info['vector_insert_s']:,.0f}/s) | {info['build_s']:.0f} s | "
            f"{ms(info['check_p50'])} | {ms(info['shadow_p50'])} |")
    lines += [
        "",
        "Build figures are from when each database was built (see the notes: a cached "
        "database keeps the figures of its build run). "
        "Observations are inserted with `insert_observation` (FTS triggers included) in "
        f"transactions of {CHUNK * 4:,}; vectors with `upsert_vectors` (delete then insert) "
        f"in transactions of {CHUNK:,}, one project after another. The last two columns "
        "are the check every semantic and hybrid search makes that vectors exist "
        "(`vectors_usable` in `memlite/storage/vector_lists.py`): on the vec0 table itself it "
        "scans every vector, on vec0's rowid shadow table it reads one row.",
        "",
        "### Embedding",
        "",
        "| model | dim | texts/s (1,000 observation texts, batches of 32) "
        "| one query p50 | one query p95 |",
        "|---|---:|---:|---:|---:|",
    ]
    for choice, v in emb.items():
        if "error" in v:
            lines.append(f"| {choice} | — | failed to load: {v['error']} | — | — |")
        else:
            lines.append(f"| {v['name']} | {v['dim']} | {v['rate']:,.0f} | "
                         f"{ms(v['single_p50'])} | {ms(v['single_p95'])} |")
    any_emb = next((v for v in emb.values() if "mean_chars" in v), None)
    if any_emb:
        tokens = emb.get("minilm", {}).get("tokens")
        lines += ["", f"Observation texts average {any_emb['mean_chars']:,.0f} characters"
                  + (f" ({tokens:.0f} MiniLM tokens)" if tokens else "") + "; queries are "
                  "one sentence at most."]
    if "context" in r:
        c = r["context"]
        lines += [
            "",
            "### SessionStart context",
            "",
            f"`build_context_for` on the reader at {c['total']:,} observations, for a project "
            f"holding {c['project_count']:,} of them, default settings (summaries, index, full, "
            f"max chars = {c['settings']}); no summaries or pending events stored, so the "
            f"block is the index and full layers ({c['chars']:,} characters): "
            f"p50 **{ms(c['p50'])}**, p95 {ms(c['p95'])} (target ≤ 30 ms).",
        ]
    if r.get("notes"):
        lines += ["", "### Notes", ""] + [f"- {n}" for n in r["notes"]]
    return "\n".join(lines) + "\n"


# --- main -----------------------------------------------------------------------------------


def main(args) -> None:
    global CACHE
    CACHE = args.cache
    CACHE.mkdir(parents=True, exist_ok=True)
    r: dict = {"load_start": load_average(), "search": [], "builds": {}, "notes": []}
    words = vocabulary()
    qs = queries(words)
    r["queries"] = qs
    wordllama = load_embedder("wordllama")
    if args.index:
        main_index(args, words, qs, wordllama, r["load_start"])
        return
    log("embedding throughput")
    r["embedding"] = measure_embedding(qs, words, args.texts)

    def run_tier(name, count, projects, vectors, filters: list[str], modes=MODES):
        t0 = time.perf_counter()
        directory, info = cached(name, count, projects, vectors, words, wordllama,
                                 args.rebuild)
        r["builds"][name] = info
        conn = storage.connect(directory, writer=False)
        if "floor" not in r:
            timed(lambda: conn.execute("SELECT 1").fetchall(), 200)
            r["floor"] = percentile(timed(lambda: conn.execute("SELECT 1").fetchall(), 3000),
                                    0.5)
            r["vec_version"] = conn.execute("SELECT vec_version()").fetchall()[0][0]
        qvecs = query_vectors(qs, vectors, wordllama)
        # Every semantic/hybrid search first checks that vectors exist
        # (``vector_lists.vectors_usable``).
        check = "SELECT 1 FROM observation_vectors LIMIT 1"
        shadow = "SELECT 1 FROM observation_vectors_rowids LIMIT 1"
        info["check_p50"] = percentile(timed(lambda: conn.execute(check).fetchall(), 7), 0.5)
        info["shadow_p50"] = percentile(timed(lambda: conn.execute(shadow).fetchall(), 50), 0.5)
        for which in filters:
            log(f"searching {name}, filter: {which}")
            got = measure_search(conn, qs, qvecs, projects if which == "project" else None,
                                 modes=modes, rounds=args.rounds)
            label = "one project" if which == "project" else "**none**"
            r["search"].append({"count": count, "vectors": vectors, "filter": label,
                                "projects": len(projects),
                                "modes": got, "name": name})
            for mode, v in got.items():
                log(f"  {mode}: p50 {ms(v['p50'])} p95 {ms(v['p95'])} "
                    f"long p50 {ms(v['long_p50'])}")
        if args.profile and count == max(args.sizes) and name.endswith("-20p"):
            print(profile_hybrid(conn, qs, qvecs, projects[0]), file=sys.stderr)
        conn.close()
        took = time.perf_counter() - t0
        r["notes"].append(f"`{name}`: {'cached database' if info['cached'] else 'built'}; "
                          f"tier took {took:.0f} s (load average now {load_average()}).")
        log(f"{name} done in {took:.0f} s")
        return directory

    for size in sorted(args.sizes):
        label = f"{size // 1000}k" if size < 1_000_000 else f"{size // 1_000_000}M"
        vectors = "wordllama" if size < 1_000_000 or not args.random_1m else "random-256"
        filters = ["project", "none"] if size == 100_000 else ["project"]
        directory = run_tier(f"{label}-20p", size, PROJECTS, vectors, filters)
        if size == 100_000:
            ctx = measure_context(directory, PROJECTS[0])
            ctx["total"] = size
            r["context"] = ctx
            log(f"context: p50 {ms(ctx['p50'])} p95 {ms(ctx['p95'])}")
            if not args.skip_extra:
                run_tier("100k-20p-384", size, PROJECTS, "random-384", ["project", "none"],
                         modes=("semantic", "hybrid"))
                run_tier("100k-1p", size, PROJECTS[:1], "wordllama", ["project"])
    r["load_end"] = load_average()
    section = report(args, r)
    print(section)
    if args.write:
        write_section(SECTION, section)
        print(f"updated {ROOT / 'BENCHMARKS.md'}", file=sys.stderr)


def main_index(args, words, qs, wordllama, load_start: str) -> None:
    """``--index``: the in-memory index against the exact KNN (``bench_search_index``)."""
    import bench_search_index

    directory, _ = cached("100k-1p", 100_000, PROJECTS[:1], "wordllama", words, wordllama,
                          args.rebuild)
    log("index vs exact KNN on 100k-1p")
    got = bench_search_index.run(directory, qs, query_vectors(qs, "wordllama", wordllama),
                                 PROJECTS[0], args.rounds, log)
    section = bench_search_index.report(
        got, date=datetime.date.today().isoformat(), machine=machine_line(),
        load=(load_start, load_average()), rounds=args.rounds)
    print(section)
    if args.write:
        write_section(bench_search_index.SECTION, section)
        print(f"updated {ROOT / 'BENCHMARKS.md'}", file=sys.stderr)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=lambda s: [int(x) for x in s.split(",") if x],
                        default=[10_000, 100_000], help="comma-separated observation counts")
    parser.add_argument("--rounds", type=int, default=3, help="timed rounds over the queries")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the cached databases")
    parser.add_argument("--cache", type=Path, default=CACHE,
                        help=f"where the databases are cached (default {CACHE})")
    parser.add_argument("--texts", type=int, default=1000,
                        help="observation texts for the embedding throughput (default 1000)")
    parser.add_argument("--random-1m", action="store_true",
                        help="random 256-d unit vectors at 1M instead of wordllama embeddings")
    parser.add_argument("--skip-extra", action="store_true",
                        help="skip the 384-d and one-project databases at 100k")
    parser.add_argument("--profile", action="store_true",
                        help="cProfile the long hybrid queries at the largest size (stderr)")
    parser.add_argument("--index", action="store_true",
                        help="only the in-memory vector index against the exact KNN (100k-1p)")
    parser.add_argument("--write", action="store_true", help=f"update {SECTION} in BENCHMARKS.md")
    return parser.parse_args(argv)


if __name__ == "__main__":
    main(parse_args())
