"""The in-memory sign-bit index against the exact KNN, in one run (``bench_search.py --index``).

On ``bench_search``'s ``100k-1p`` database (100,000 observations in ONE project,
wordllama vectors), the same 50 queries, interleaved query by query so that load hits
both paths alike:

* search p50/p95 in ``semantic`` mode with the exact vec0 KNN (the index switched off)
  and with the index; ``fts`` with the any-term query scored whole or split
  (``memlite.storage.fts_split``); ``hybrid`` with the query's MiniLM embedding included:
  whole BM25 then embedding first (before), split, and split with the embedding on
  another thread while full text runs (what the HTTP API does);
* recall of the index against the exact KNN: the share of the exact top 10 / top 20
  neighbours that the index returns (raw KNN, no relevance floor), and the overlap of the
  fts and hybrid top 10 with the BM25 query split and whole;
* the index's build time and memory, and the query embedding p50 of the default model
  (MiniLM), added to the p50s for the "with the query embedding" column;
* the floor, ``SELECT 1`` on the same connection.
"""

from __future__ import annotations

import concurrent.futures
import time

import numpy as np

from memlite import storage
from memlite.embed import load_embedder
from memlite.storage import fts_split, vector_index
from memlite.storage.search import Filters, search

SECTION = "## Search index (issue 14)"


def _p(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


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

    vector_index.reset()
    t0 = time.perf_counter()
    vector_index.nearest(conn, qvecs[0], project, 10, Filters(project=project).where("o"))
    out["build_s"] = time.perf_counter() - t0
    index = vector_index._INDEXES[(conn.filename, project)]
    out["index_bytes"], out["index_rows"] = index.nbytes, index.size

    # Recall of the raw KNN.
    rec10, rec20 = [], []
    where = Filters(project=project).where("o")
    for vec in qvecs:
        exact = [h.observation_id for h in
                 storage.nearest_observations(conn, vec, project=project, k=20)]
        got = [oid for oid, _ in vector_index.nearest(conn, vec, project, 20, where)]
        rec10.append(len(set(exact[:10]) & set(got[:10])) / 10)
        rec20.append(len(set(exact) & set(got)) / 20)
    out["recall10"], out["recall20"] = float(np.mean(rec10)), float(np.mean(rec20))

    threshold = vector_index.MIN_VECTORS
    samples: dict[tuple[str, str], list[float]] = {}
    try:
        for round_ in range(rounds + 1):
            for (_, text), vec in zip(qs, qvecs, strict=True):
                for path in ("exact", "index"):
                    vector_index.MIN_VECTORS = threshold if path == "index" else 10**12
                    t0 = time.perf_counter()
                    search(conn, text, mode="semantic", query_vector=vec, limit=20,
                           filters=Filters(project=project))
                    if round_:
                        samples.setdefault(("semantic", path), []).append(
                            time.perf_counter() - t0)
    finally:
        vector_index.MIN_VECTORS = threshold

    # Full text and hybrid: the any-term BM25 query scored whole (before) or split into
    # selective and frequent terms (``fts_split``); hybrid with the default model's query
    # embedding done first (before) or on another thread while full text runs (the HTTP
    # API's way). MiniLM embeds each query for its cost; the KNN uses the query's
    # wordllama vector, the database's model.
    minilm = load_embedder("minilm")
    for _, text in qs[:5]:
        minilm.embed([text])
    split = fts_split.split
    pool = concurrent.futures.ThreadPoolExecutor(1)
    overlap_fts, overlap_hybrid, single = [], [], []

    def whole(*_args: object, **_kwargs: object) -> None:
        return None

    def run_hybrid(text: str, vec: bytes, concurrent_embed: bool):
        if not concurrent_embed:
            minilm.embed([text])
            return search(conn, text, mode="hybrid", query_vector=vec, limit=20,
                          filters=Filters(project=project))
        future = pool.submit(minilm.embed, [text])
        return search(conn, text, mode="hybrid", limit=20, filters=Filters(project=project),
                      query_vector=lambda: (future.result() is not None and vec, None))

    try:
        for round_ in range(rounds + 1):
            for (_, text), vec in zip(qs, qvecs, strict=True):
                t0 = time.perf_counter()
                minilm.embed([text])
                single.append(time.perf_counter() - t0)
                tops: dict[str, list[int]] = {}
                for key, fts_path, concurrent_embed, mode in (
                        ("fts whole", whole, False, "fts"), ("fts split", split, False, "fts"),
                        ("hybrid whole", whole, False, "hybrid"),
                        ("hybrid split", split, False, "hybrid"),
                        ("hybrid concurrent", split, True, "hybrid")):
                    fts_split.split = fts_path
                    t0 = time.perf_counter()
                    if mode == "fts":
                        outcome = search(conn, text, mode="fts", limit=20,
                                         filters=Filters(project=project))
                    else:
                        outcome = run_hybrid(text, vec, concurrent_embed)
                    elapsed = time.perf_counter() - t0
                    tops[key] = [h.observation.id for h in outcome.hits[:10]]
                    if round_:
                        samples.setdefault(tuple(key.split(" ", 1)), []).append(elapsed)
                if round_ == 1:
                    for overlaps, a, b in ((overlap_fts, "fts whole", "fts split"),
                                           (overlap_hybrid, "hybrid whole", "hybrid split")):
                        overlaps.append(len(set(tops[a]) & set(tops[b])) / max(len(tops[a]), 1))
    finally:
        fts_split.split = split
        pool.shutdown()
    out["fts_overlap10"] = float(np.mean(overlap_fts))
    out["hybrid_overlap10"] = float(np.mean(overlap_hybrid))
    out["search"] = {key: (_p(v, 0.5), _p(v, 0.95)) for key, v in samples.items()}
    for key, (p50, p95) in out["search"].items():
        log(f"  {key}: p50 {p50 * 1000:.2f} ms p95 {p95 * 1000:.2f} ms")
    conn.close()
    out["minilm_name"], out["minilm_p50"] = minilm.name, _p(single, 0.5)
    minilm.close()
    return out


def report(r: dict, *, date: str, machine: str, load: tuple[str, str], rounds: int) -> str:
    s = r["search"]
    emb = r["minilm_p50"]

    def row(mode: str, path: str, label: str, with_embedding: str) -> str:
        p50, p95 = s[(mode, path)]
        return (f"| {mode} | {label} | {p50 * 1000:.2f} ms | {p95 * 1000:.2f} ms | "
                f"{with_embedding} |")

    rows = [
        row("fts", "whole", "any-term BM25, every match scored (before)", "—"),
        row("fts", "split", "selective terms scored (`fts_split`)", "—"),
        row("semantic", "exact", "exact vec0 KNN",
            f"{(s[('semantic', 'exact')][0] + emb) * 1000:.2f} ms"),
        row("semantic", "index", "sign-bit index + exact rescoring",
            f"{(s[('semantic', 'index')][0] + emb) * 1000:.2f} ms"),
        row("hybrid", "whole", "whole BM25, index, embedding first (before)", "(included)"),
        row("hybrid", "split", "split BM25, index, embedding first", "(included)"),
        row("hybrid", "concurrent", "split BM25, index, embedding on a thread meanwhile",
            "(included)"),
    ]
    return "\n".join([
        SECTION, "",
        f"Measured {date} by `python bench/bench_search.py --index` on `{machine}`; load "
        f"average at the start {load[0]}, at the end {load[1]} (a shared machine: compare "
        "the rows of this run, not runs).",
        "",
        "Database: `bench_search.py`'s `100k-1p`, 100,000 observations in ONE project, "
        "wordllama (256-d) vectors. Same 50 queries (half keywords, half questions), "
        f"limit 20, project filter, {rounds} timed rounds after a warm-up, the paths "
        "interleaved query by query. Floor, same run: `SELECT 1` on the reader "
        f"{r['floor'] * 1e6:.1f} µs. The default model's one-query embedding in the same "
        f"run: {r['minilm_name']} p50 {emb * 1000:.2f} ms; the semantic rows' last column "
        "adds it; the hybrid rows include it, measured (MiniLM embeds each query for "
        "its cost, the KNN uses the query's wordllama vector, the database's model).",
        "",
        "| mode | path | p50 | p95 | p50 with the query embedding |",
        "|---|---|---:|---:|---:|",
        *rows,
        "",
        f"The split keeps the full-text top 10 of the whole query at **{r['fts_overlap10']:.3f}** "
        f"(hybrid top 10: {r['hybrid_overlap10']:.3f}); below "
        f"{fts_split.BUDGET:,} matches (every eval corpus) the whole query runs, so the "
        "evals' figures do not change. "
        f"Recall of the index against the exact KNN (raw neighbours, same 50 queries): "
        f"**{r['recall10']:.3f}** of the exact top 10, {r['recall20']:.3f} of the top 20. "
        f"Index: {r['index_rows']:,} rows, {r['index_bytes'] / 1e6:.1f} MB in memory, "
        f"built in {r['build_s'] * 1000:.0f} ms at the first search of the project "
        f"(later writes are folded in incrementally). Candidates rescored: "
        f"{vector_index.CANDIDATES}; projects under {vector_index.MIN_VECTORS:,} vectors "
        "keep the exact KNN.",
        "",
        _bar(s[("hybrid", "concurrent")][0], load[1]),
    ])


def _bar(p50: float, load_end: str) -> str:
    """Issue 14's bar against the last hybrid row, saying what the load was."""
    verdict = "met" if p50 <= 0.010 else "**not met** in this run"
    return (f"Issue 14's bar, hybrid search p50 <= 10 ms at 100k observations in one project "
            f"with the query embedding (on a quiet machine), is {verdict}: "
            f"{p50 * 1000:.2f} ms under a load average of {load_end.split()[0]} on 2 CPUs "
            "(the hybrid rows add up the full-text list, the index KNN, the embedding and "
            "the fusion's own reads; embedding meanwhile saves the embedding's time only "
            "when a CPU is free).")
