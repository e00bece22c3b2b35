"""The in-memory vector index and full-text budget against what they replace, in one run
(``bench_search.py --index``).

On ``bench_search``'s ``100k-1p`` database (100,000 observations in ONE project,
wordllama vectors), the same 50 queries, interleaved query by query so that load hits
every path alike:

* ``semantic``: the exact vec0 KNN (index off), the index as it was before (commit
  ``BEFORE``, loaded from git; the row is left out when git cannot show it: the
  asymmetric lookup-table scoring of every row, 600 candidates' codes read from SQLite),
  and the index now (Hamming first stage, codes in memory);
* ``fts``: the any-term query scored whole; split into selective and frequent terms
  as of ``BEFORE`` (``memlite.storage.fts_split``, loaded from git), an unsplittable query
  scored whole; and now: terms in most rows left out of the second query, an
  unsplittable query scored over its newest ``BUDGET`` matches;
* ``hybrid`` with the default model's (MiniLM's) query embedding included: the previous
  path (``BEFORE``'s split and index, embedding first), and now,
  embedding first or on another thread while full text runs (what the HTTP API does);
* recall against the exact KNN (raw neighbours, no relevance floor) of both indexes, and
  the overlap of the fts and hybrid top 10 with the previous paths;
* the index's build time and memory, the KNN's numpy cost on random int8 codes at 384-d
  (MiniLM's width; the database holds 256-d wordllama vectors), and the floor,
  ``SELECT 1`` on the same connection.
"""

from __future__ import annotations

import concurrent.futures
import subprocess
import time
import types
from pathlib import Path

import numpy as np

from memlite import storage
from memlite.embed import load_embedder
from memlite.storage import fts_split, vector_index
from memlite.storage.search import Filters, search

SECTION = "## Search index (issue 14)"
BEFORE = "fd33f7a"
"""The commit whose index is measured as "before" (main when this round started)."""
ROOT = Path(__file__).resolve().parent.parent


def _p(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _before(name: str) -> types.ModuleType | None:
    """``memlite.storage.<name>`` as of ``BEFORE``, or None without git."""
    try:
        source = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{BEFORE}:memlite/storage/{name}.py"],
            capture_output=True, text=True, check=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    module = types.ModuleType(f"{name}_before")
    exec(compile(source, f"{BEFORE}:{name}.py", "exec"), module.__dict__)  # noqa: S102
    return module


def synthetic_knn(dim: int, rows: int = 100_000, queries: int = 30) -> dict:
    """The index's numpy work (Hamming pass, candidate threshold, rescoring from the
    in-memory codes) on random int8 codes: the KNN cost at ``dim`` without SQLite."""
    rng = np.random.default_rng(dim)
    codes = rng.integers(-127, 128, size=(rows, dim), dtype=np.int8)
    index = vector_index.ProjectIndex("synthetic")
    index._build([(i + 1, codes[i].tobytes()) for i in range(rows)], 0)
    times = []
    for i in range(queries + 3):
        q = rng.standard_normal(dim).astype(np.float32)
        t0 = time.perf_counter()
        index.rescored(q, index.candidates(q, vector_index.CANDIDATES))
        if i >= 3:
            times.append(time.perf_counter() - t0)
    return {"dim": dim, "p50": _p(times, 0.5), "bytes": index.nbytes}


def run(directory, qs, qvecs, project: str, rounds: int, log) -> dict:
    """Measure; returns the figures for ``report``."""
    with storage.connect(directory) as writer:  # backfills the codes of an older database
        with writer:
            dim = len(qvecs[0]) // 4
            info = storage.vector_table_info(writer)
            storage.ensure_vector_table(writer, dim, info[1])
    conn = storage.connect(directory, writer=False)
    out: dict = {}
    floor = []
    for _ in range(3000):
        t0 = time.perf_counter()
        conn.execute("SELECT 1").fetchall()
        floor.append(time.perf_counter() - t0)
    out["floor"] = _p(floor, 0.5)

    before = _before("vector_index")
    split_before = _before("fts_split")
    out["before"] = before is not None and split_before is not None
    if not out["before"]:
        before = split_before = None
    where = Filters(project=project).where("o")
    vector_index.reset()
    t0 = time.perf_counter()
    vector_index.nearest(conn, qvecs[0], project, 10, where)
    out["build_s"] = time.perf_counter() - t0
    index = vector_index._INDEXES[(conn.filename, project)]
    out["index_bytes"], out["index_rows"] = index.nbytes, index.size
    out["codes_bytes"] = index.codes.nbytes if index.codes is not None else 0
    if before is not None:
        before.nearest(conn, qvecs[0], project, 10, where)
        out["before_bytes"] = before._INDEXES[(conn.filename, project)].nbytes

    # Recall of the raw KNN.
    recall: dict[str, tuple[list[float], list[float]]] = {}
    for vec in qvecs:
        exact = [h.observation_id for h in
                 storage.nearest_observations(conn, vec, project=project, k=20)]
        for name, module in (("now", vector_index), ("before", before)):
            if module is None:
                continue
            got = [oid for oid, _ in module.nearest(conn, vec, project, 20, where)]
            r10, r20 = recall.setdefault(name, ([], []))
            r10.append(len(set(exact[:10]) & set(got[:10])) / 10)
            r20.append(len(set(exact) & set(got)) / 20)
    out["recall"] = {name: (float(np.mean(a)), float(np.mean(b)))
                     for name, (a, b) in recall.items()}

    nearest_now, share_now = vector_index.nearest, vector_index.project_share
    plan_now = fts_split.plan

    def use(knn: str, fts: str) -> None:
        """Switch the paths: knn exact/before/now, fts whole/before/now."""
        vector_index.nearest = nearest_now if knn != "before" or before is None \
            else before.nearest
        vector_index.project_share = share_now if knn != "before" or before is None \
            else before.project_share
        vector_index.MIN_VECTORS = 10**12 if knn == "exact" else threshold
        if before is not None:
            before.MIN_VECTORS = vector_index.MIN_VECTORS
        fts_split.plan = {  # a Split, or the newest floor (0: every match scored)
            "whole": lambda *_a, **_k: 0,
            "before": (lambda c, q, budget=None: (split_before or fts_split).split(c, q) or 0),
        }.get(fts, plan_now)

    threshold = vector_index.MIN_VECTORS
    samples: dict[tuple[str, str], list[float]] = {}
    cpu_samples: dict[tuple[str, str], list[float]] = {}
    minilm = load_embedder("minilm")
    for _, text in qs[:5]:
        minilm.embed([text])
    pool = concurrent.futures.ThreadPoolExecutor(1)
    overlap_fts, overlap_hybrid, single, single_cpu = [], [], [], []

    def run_hybrid(text: str, vec: bytes, concurrent_embed: bool):
        if not concurrent_embed:
            minilm.embed([text])
            return search(conn, text, mode="hybrid", query_vector=vec, limit=20,
                          filters=Filters(project=project))
        future = pool.submit(minilm.embed, [text])
        return search(conn, text, mode="hybrid", limit=20, filters=Filters(project=project),
                      query_vector=lambda: (future.result() is not None and vec, None))

    paths = [("semantic", "exact", "exact", "now", False),
             ("semantic", "before", "before", "now", False),
             ("semantic", "index", "now", "now", False),
             ("fts", "whole", "now", "whole", False),
             ("fts", "before", "now", "before", False),
             ("fts", "now", "now", "now", False),
             ("hybrid", "before", "before", "before", False),
             ("hybrid", "now", "now", "now", False),
             ("hybrid", "concurrent", "now", "now", True)]
    if before is None:
        paths = [p for p in paths if "before" not in (p[2], p[3])]
    try:
        for round_ in range(rounds + 1):
            for (_, text), vec in zip(qs, qvecs, strict=True):
                t0, c0 = time.perf_counter(), time.process_time()
                minilm.embed([text])
                single.append(time.perf_counter() - t0)
                single_cpu.append(time.process_time() - c0)
                tops: dict[tuple[str, str], list[int]] = {}
                for mode, key, knn, fts, concurrent_embed in paths:
                    use(knn, fts)
                    t0, c0 = time.perf_counter(), time.process_time()
                    if mode == "hybrid":
                        outcome = run_hybrid(text, vec, concurrent_embed)
                    else:
                        outcome = search(conn, text, mode=mode, limit=20, query_vector=vec,
                                         filters=Filters(project=project))
                    elapsed = time.perf_counter() - t0
                    cpu = time.process_time() - c0
                    tops[(mode, key)] = [h.observation.id for h in outcome.hits[:10]]
                    if round_:
                        samples.setdefault((mode, key), []).append(elapsed)
                        cpu_samples.setdefault((mode, key), []).append(cpu)
                if round_ == 1:
                    for overlaps, a, b in (
                            (overlap_fts, ("fts", "whole"), ("fts", "now")),
                            (overlap_hybrid, ("hybrid", "before"), ("hybrid", "now"))):
                        if a in tops:
                            overlaps.append(len(set(tops[a]) & set(tops[b]))
                                            / max(len(tops[a]), 1))
    finally:
        use("now", "now")
        vector_index.MIN_VECTORS = threshold
        pool.shutdown()
    out["fts_overlap10"] = float(np.mean(overlap_fts))
    out["hybrid_overlap10"] = float(np.mean(overlap_hybrid)) if overlap_hybrid else None
    out["search"] = {key: (_p(v, 0.5), _p(v, 0.95)) for key, v in samples.items()}
    out["cpu"] = {key: _p(v, 0.5) for key, v in cpu_samples.items()}
    for key, (p50, p95) in out["search"].items():
        log(f"  {key}: p50 {p50 * 1000:.2f} ms p95 {p95 * 1000:.2f} ms")
    conn.close()
    out["minilm_name"], out["minilm_p50"] = minilm.name, _p(single, 0.5)
    out["minilm_cpu"] = _p(single_cpu, 0.5)
    minilm.close()
    out["synthetic"] = [synthetic_knn(256), synthetic_knn(384)]
    return out


def report(r: dict, *, date: str, machine: str, load: tuple[str, str], rounds: int) -> str:
    s = r["search"]
    emb = r["minilm_p50"]

    def row(mode: str, path: str, label: str, with_embedding: str | None) -> str | None:
        if (mode, path) not in s:
            return None
        p50, p95 = s[(mode, path)]
        cpu = r["cpu"][(mode, path)]
        if with_embedding is None:
            with_embedding = f"{(p50 + emb) * 1000:.2f} ms"
        return (f"| {mode} | {label} | {p50 * 1000:.2f} ms | {p95 * 1000:.2f} ms | "
                f"{with_embedding} | {cpu * 1000:.2f} ms |")

    rows = [
        row("fts", "whole", "any-term BM25, every match scored", "—"),
        row("fts", "before", f"selective terms scored (`fts_split` of `{BEFORE}`), an "
            "unsplittable query whole (before)", "—"),
        row("fts", "now", "selective terms scored, terms in most rows left out, an "
            f"unsplittable query over its newest {fts_split.BUDGET:,} matches (now)", "—"),
        row("semantic", "exact", "exact vec0 KNN", None),
        row("semantic", "before", "sign-bit lookup-table scores, 600 codes read from SQLite "
            f"(`{BEFORE}`, before)", None),
        row("semantic", "index", f"Hamming over sign bits, {vector_index.CANDIDATES:,} "
            "candidates rescored from in-memory codes (now)", None),
        row("hybrid", "before", "before: previous BM25 split and index, embedding first",
            "(included)"),
        row("hybrid", "now", "now: BM25 and index as now, embedding first", "(included)"),
        row("hybrid", "concurrent", "now, embedding on a thread meanwhile", "(included)"),
    ]
    rec = r["recall"]
    recall = f"now **{rec['now'][0]:.3f}** of the exact top 10, {rec['now'][1]:.3f} of the top 20"
    if "before" in rec:
        recall += (f"; before ({BEFORE}) {rec['before'][0]:.3f} and {rec['before'][1]:.3f}, "
                   f"{r['before_bytes'] / 1e6:.1f} MB")
    synthetic = "; ".join(f"{x['dim']}-d p50 {x['p50'] * 1000:.2f} ms, {x['bytes'] / 1e6:.1f} MB"
                          for x in r["synthetic"])
    hybrid_overlap = ("" if r["hybrid_overlap10"] is None else
                      f" The hybrid top 10 keeps {r['hybrid_overlap10']:.3f} of the previous "
                      "path's (its BM25 window and better neighbours change some).")
    return "\n".join([
        SECTION, "",
        f"Measured {date} by `python bench/bench_search.py --index` on `{machine}`; load "
        f"average at the start {load[0]}, at the end {load[1]} (a shared machine: compare "
        "the rows of this run, not runs).",
        "",
        "Database: `bench_search.py`'s `100k-1p`, 100,000 observations in ONE project, "
        "wordllama (256-d) vectors. Same 50 queries (half keywords, half questions), "
        f"limit 20, project filter, {rounds} timed rounds after a warm-up, every path "
        "interleaved query by query. Floor, same run: `SELECT 1` on the reader "
        f"{r['floor'] * 1e6:.1f} µs. The default model's one-query embedding in the same "
        f"run: {r['minilm_name']} p50 {emb * 1000:.2f} ms; the semantic rows' last column "
        "adds it; the hybrid rows include it, measured (MiniLM embeds each query for "
        "its cost, the KNN uses the query's wordllama vector, the database's model). "
        "CPU time: the process's CPU seconds per search (`time.process_time`, every "
        "thread: onnxruntime's included), which a busy machine inflates far less than the "
        f"wall clock; the embedding alone: {r['minilm_cpu'] * 1000:.2f} ms.",
        "",
        "| mode | path | p50 | p95 | p50 with the query embedding | CPU time p50 |",
        "|---|---|---:|---:|---:|---:|",
        *[x for x in rows if x is not None],
        "",
        f"Full text now keeps {r['fts_overlap10']:.3f} of the whole query's top 10 (the "
        "split leaves out rows holding frequent terms only; the newest window changes "
        f"queries with no selective term and more than {fts_split.BUDGET:,} matches, such "
        f"as one common word; below {fts_split.BUDGET:,} matches, every eval corpus, the "
        "whole query runs, so the evals' figures do not change)."
        f"{hybrid_overlap} "
        f"Recall of the index against the exact KNN (raw neighbours, same 50 queries): "
        f"{recall}. Index now: {r['index_rows']:,} rows, {r['index_bytes'] / 1e6:.1f} MB "
        f"in memory ({r['codes_bytes'] / 1e6:.1f} MB of it the int8 codes), built in "
        f"{r['build_s'] * 1000:.0f} ms at the first search of the project (later writes "
        f"are folded in incrementally); projects under {vector_index.MIN_VECTORS:,} vectors "
        "keep the exact KNN. The index's numpy work (Hamming, threshold, rescoring) on "
        f"100,000 random int8 codes, same run: {synthetic} (MiniLM, the default model, "
        "is 384-d; this database's vectors are 256-d).",
        "",
        _bar(s[("hybrid", "concurrent")][0], s[("hybrid", "now")][0], load[1],
             r["cpu"][("hybrid", "now")]),
    ])


def _bar(concurrent_p50: float, p50: float, load_end: str, cpu_p50: float) -> str:
    """Issue 14's bar against the hybrid rows, saying what the load was."""
    best = min(concurrent_p50, p50)
    verdict = "met" if best <= 0.010 else "**not met** in this run"
    return (f"Issue 14's bar, hybrid search p50 <= 10 ms at 100k observations in one project "
            f"with the query embedding, is {verdict} by the wall clock: {p50 * 1000:.2f} ms "
            f"embedding first, {concurrent_p50 * 1000:.2f} ms embedding meanwhile, under a "
            f"load average of {load_end.split()[0]} on 2 CPUs (the hybrid rows add up the "
            "full-text list, the index KNN, the embedding and the fusion's own reads; "
            "embedding meanwhile saves the embedding's time only when a CPU is free). The "
            f"CPU time of a hybrid search, embedding included, is {cpu_p50 * 1000:.2f} ms "
            f"p50 ({'within' if cpu_p50 <= 0.010 else 'over'} the 10 ms: what a search would "
            "take on a CPU of its own, cache and frequency effects aside).")
