"""The in-memory sign-bit index against the exact KNN, in one run (``bench_search.py --index``).

On ``bench_search``'s ``100k-1p`` database (100,000 observations in ONE project,
wordllama vectors), the same 50 queries, interleaved query by query so that load hits
both paths alike:

* search p50/p95 in ``semantic`` and ``hybrid`` mode with the exact vec0 KNN (the index
  switched off) and with the index;
* recall of the index against the exact KNN: the share of the exact top 10 / top 20
  neighbours that the index returns (raw KNN, no relevance floor), and the overlap of the
  hybrid top 10 with and without the index;
* the index's build time and memory, and the query embedding p50 of the default model
  (MiniLM), added to the p50s for the "with the query embedding" column;
* the floor, ``SELECT 1`` on the same connection.
"""

from __future__ import annotations

import time

import numpy as np

from memlite import storage
from memlite.embed import load_embedder
from memlite.storage import search as engine
from memlite.storage import vector_index
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
    overlap = []
    try:
        for round_ in range(rounds + 1):
            for (_, text), vec in zip(qs, qvecs, strict=True):
                for mode in ("semantic", "hybrid"):
                    tops = {}
                    for path in ("exact", "index"):
                        vector_index.MIN_VECTORS = threshold if path == "index" else 10**12
                        t0 = time.perf_counter()
                        outcome = search(conn, text, mode=mode, query_vector=vec, limit=20,
                                         filters=Filters(project=project))
                        elapsed = time.perf_counter() - t0
                        tops[path] = [h.observation.id for h in outcome.hits[:10]]
                        if round_:
                            samples.setdefault((mode, path), []).append(elapsed)
                    if round_ == 1 and mode == "hybrid":
                        overlap.append(len(set(tops["exact"]) & set(tops["index"]))
                                       / max(len(tops["exact"]), 1))
    finally:
        vector_index.MIN_VECTORS = threshold
    # Full text alone: the join-free BM25 list of a dominant project against the joined one.
    dominant = engine._fts_dominant
    try:
        for round_ in range(rounds + 1):
            for (_, text), _vec in zip(qs, qvecs, strict=True):
                for path in ("joined", "shortcut"):
                    engine._fts_dominant = dominant if path == "shortcut" else (
                        lambda *a, **k: None)
                    t0 = time.perf_counter()
                    search(conn, text, mode="fts", limit=20, filters=Filters(project=project))
                    if round_:
                        samples.setdefault(("fts", path), []).append(time.perf_counter() - t0)
    finally:
        engine._fts_dominant = dominant
    out["hybrid_overlap10"] = float(np.mean(overlap))
    out["search"] = {key: (_p(v, 0.5), _p(v, 0.95)) for key, v in samples.items()}
    for key, (p50, p95) in out["search"].items():
        log(f"  {key}: p50 {p50 * 1000:.2f} ms p95 {p95 * 1000:.2f} ms")
    conn.close()

    minilm = load_embedder("minilm")
    for _, text in qs[:5]:
        minilm.embed([text])
    single = []
    for _, text in qs:
        t0 = time.perf_counter()
        minilm.embed([text])
        single.append(time.perf_counter() - t0)
    out["minilm_name"], out["minilm_p50"] = minilm.name, _p(single, 0.5)
    minilm.close()
    return out


def report(r: dict, *, date: str, machine: str, load: tuple[str, str], rounds: int) -> str:
    s = r["search"]
    emb = r["minilm_p50"]
    rows = []
    for path, label in (("joined", "BM25 joined to observations (before)"),
                        ("shortcut", "BM25 top 2 x depth, then filtered")):
        p50, p95 = s[("fts", path)]
        rows.append(f"| fts | {label} | {p50 * 1000:.2f} ms | {p95 * 1000:.2f} ms | — |")
    for mode in ("semantic", "hybrid"):
        for path, label in (("exact", "exact vec0 KNN (before)"),
                            ("index", "sign-bit index + exact rescoring")):
            p50, p95 = s[(mode, path)]
            rows.append(f"| {mode} | {label} | {p50 * 1000:.2f} ms | {p95 * 1000:.2f} ms | "
                        f"{(p50 + emb) * 1000:.2f} ms |")
    return "\n".join([
        SECTION, "",
        f"Measured {date} by `python bench/bench_search.py --index` on `{machine}`; load "
        f"average at the start {load[0]}, at the end {load[1]} (a shared machine: compare "
        "the rows of this run, not runs).",
        "",
        "Database: `bench_search.py`'s `100k-1p`, 100,000 observations in ONE project, "
        "wordllama (256-d) vectors. Same 50 queries (half keywords, half questions), "
        f"limit 20, project filter, {rounds} timed rounds after a warm-up, the two paths "
        "interleaved query by query. Floor, same run: `SELECT 1` on the reader "
        f"{r['floor'] * 1e6:.1f} µs. The last column adds the default model's one-query "
        f"embedding p50 measured in the same run ({r['minilm_name']}: "
        f"{emb * 1000:.2f} ms).",
        "",
        "`fts` rows: the project holds every observation, so its BM25 list can skip the "
        "join to `observations` (`_fts_dominant` in `memlite/storage/search.py`); the "
        "semantic and hybrid rows both use that shortcut (hybrid differs only in the KNN).",
        "",
        "| mode | path | p50 | p95 | p50 with the query embedding |",
        "|---|---|---:|---:|---:|",
        *rows,
        "",
        f"Recall of the index against the exact KNN (raw neighbours, same 50 queries): "
        f"**{r['recall10']:.3f}** of the exact top 10, {r['recall20']:.3f} of the top 20; "
        f"hybrid top 10 with and without the index overlap {r['hybrid_overlap10']:.3f}. "
        f"Index: {r['index_rows']:,} rows, {r['index_bytes'] / 1e6:.1f} MB in memory, "
        f"built in {r['build_s'] * 1000:.0f} ms at the first search of the project "
        f"(later writes are folded in incrementally). Candidates rescored: "
        f"{vector_index.CANDIDATES}; projects under {vector_index.MIN_VECTORS:,} vectors "
        "keep the exact KNN.",
    ])
