"""Where memlite's ``GET /api/search`` spends its work, piece by piece, in process.

Used by ``bench_peer_http.py`` on the database its memlite worker serves: each piece of
the request's work run alone on the same 50 queries, timed in **CPU time of the calling
thread** (``time.thread_time``), so that other processes on a shared machine do not
inflate it (wall time on a loaded machine measures the queue, not the work). ONNX Runtime
embeds on its own threads, so the embedding row is wall time (``perf_counter``).

The pieces, in the order the request runs them: summaries and prompts by full text; the
observations' BM25 list with each hit's term coverage; the query's MiniLM embedding
(meanwhile, on the embedder's thread); the KNN (the sign-bit index the search uses, and
the exact vec0 KNN beside it); the ranking (``rank()``: both lists, fusion, the reads
the fusion needs); the 20 records as JSON written by SQLite (or the index's entries);
JSON (orjson, as sent, and the standard library's beside it). Then the full-text search alone
(``mode=fts``, what the peer's full text is paired with): its BM25 list (20 deep: the
list is the answer) and its whole ``queries.search`` / ``queries.index``.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import orjson

PIECES = (
    ("summaries + prompts (full text)", "cpu"),
    ("BM25 list, no coverage, 50 deep", "cpu"),
    ("BM25 list + term coverage, 50 deep (what hybrid runs)", "cpu"),
    ("BM25 list, 20 deep (what mode=fts runs)", "cpu"),
    ("BM25 list, 20 deep, FTS5 alone (no in-memory index)", "cpu"),
    ("query embedding, MiniLM (wall)", "wall"),
    ("KNN, sign-bit index + rescoring (what search runs)", "cpu"),
    ("KNN, exact vec0 (for comparison)", "cpu"),
    ("rank(), hybrid: both lists and fusion, no record read", "cpu"),
    ("rank(), mode=fts", "cpu"),
    ("20 records as JSON written by SQLite (observation_json_texts, /api/search)", "cpu"),
    ("20 index entries read (observation_index_rows, /api/search/index)", "cpu"),
    ("JSON of the answer (orjson, what the API sends)", "cpu"),
    ("JSON of the answer, standard library json (for comparison)", "cpu"),
    ("queries.search(): everything but HTTP and the embedding", "cpu"),
    ("queries.search(), mode=fts: everything but HTTP", "cpu"),
    ("queries.index(), mode=fts: everything but HTTP", "cpu"),
)


def measure(db_dir: Path, embedder: Any, queries_text: list[str], rounds: int = 2,
            ) -> list[tuple[str, float]]:
    """Median per query of each piece, in ms (one warm-up round first)."""
    from memlite.http import queries
    from memlite.http.rawjson import RawJson
    from memlite.storage import bm25_index, vector_index
    from memlite.storage import search as engine
    from memlite.storage.db import connect
    from memlite.storage.fts import search_prompts, search_summaries
    from memlite.storage.fts_lists import fts_list
    from memlite.storage.reads import observation_index_rows, observation_json_texts
    from memlite.storage.vectors import VECTOR_TABLE

    conn = connect(db_dir, writer=False)
    none = engine.Filters()
    taken: dict[str, list[float]] = {}
    # The in-memory full-text index (``bm25_index``) as the worker has it once built at
    # its start; FTS5 alone beside it (the same list: tests/storage/test_bm25_index.py).
    bm25_index.warm(conn)

    def fts5_alone(q: str) -> Any:
        real, bm25_index.top = bm25_index.top, lambda *_a, **_k: None
        try:
            return fts_list(conn, q, none, 20)
        finally:
            bm25_index.top = real

    def timed(name: str, fn: Callable[[], Any]) -> Any:
        clock = time.perf_counter if dict(PIECES)[name] == "wall" else time.thread_time
        t0 = clock()
        out = fn()
        taken.setdefault(name, []).append(clock() - t0)
        return out

    try:
        for round_ in range(rounds + 1):
            for q in queries_text:
                timed(PIECES[0][0], lambda q=q: (search_summaries(conn, q, limit=20),
                                                  search_prompts(conn, q, limit=20)))
                timed(PIECES[1][0], lambda q=q: fts_list(conn, q, none, 50))
                timed(PIECES[2][0], lambda q=q: fts_list(conn, q, none, 50, coverage=True))
                timed(PIECES[3][0], lambda q=q: fts_list(conn, q, none, 20))
                timed(PIECES[4][0], lambda q=q: fts5_alone(q))
                matrix = timed(PIECES[5][0], lambda q=q: embedder.embed([q]))
                vector = np.asarray(matrix[0], dtype="<f4").tobytes()
                timed(PIECES[6][0], lambda v=vector: vector_index.nearest(
                    conn, v, None, 50, none.where("o")))
                timed(PIECES[7][0], lambda v=vector: conn.execute(
                    f"SELECT observation_id, distance FROM {VECTOR_TABLE} "
                    "WHERE embedding MATCH ? AND k = ? ORDER BY distance", (v, 50)).fetchall())
                found = timed(PIECES[8][0], lambda q=q, v=vector: engine.rank(
                    conn, q, mode="hybrid", filters=none, query_vector=v, limit=20))
                timed(PIECES[9][0], lambda q=q: engine.rank(conn, q, mode="fts",
                                                            filters=none, limit=20))
                timed(PIECES[10][0], lambda ids=found.ids: observation_json_texts(conn, ids))
                timed(PIECES[11][0], lambda ids=found.ids: observation_index_rows(conn, ids))
                body = timed(PIECES[14][0], lambda q=q, v=vector: queries.search(
                    conn, q, mode="hybrid", filters=none, limit=20, vector=v))
                timed(PIECES[12][0], lambda b=body: orjson.dumps(
                    b, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS,
                    default=lambda o: orjson.Fragment(o.text)))
                plain = json.loads(json.dumps(body, default=RawJson.value))
                timed(PIECES[13][0], lambda b=plain: json.dumps(b, sort_keys=True,
                                                                separators=(",", ":")))
                timed(PIECES[15][0], lambda q=q: queries.search(
                    conn, q, mode="fts", filters=none, limit=20, vector=None))
                timed(PIECES[16][0], lambda q=q: queries.index(
                    conn, q, mode="fts", filters=none, limit=20, vector=None))
            if round_ == 0:
                taken.clear()
    finally:
        conn.close()
    return [(name, statistics.median(taken[name]) * 1000) for name, _ in PIECES]


def table(rows: list[tuple[str, float]]) -> list[str]:
    return ["| piece of the request's work | p50 per query |", "|---|---:|",
            *(f"| {name} | {ms:.2f} ms |" for name, ms in rows)]
