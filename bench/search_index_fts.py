"""What the full-text list costs, piece by piece, for ``bench_search_index.py``'s
section: the list alone at the depths hybrid and ``mode=fts`` run it, with and without
the term coverage and with the KNN's numpy work beside it (``fts_cost``), and each of its
pieces' CPU per list (``fts_pieces``), with the text the section prints for each.
"""

from __future__ import annotations

import time

import numpy as np
from search_measure import percentile

from memlite.storage import fts_split, vector_index
from memlite.storage.search import Filters


def fts_cost(conn, qs, project: str, rounds: int = 3) -> dict[str, float]:
    """CPU p50 (this thread) of the full-text list alone: 20 deep (what ``mode=fts``
    runs), 50 deep (what hybrid runs), 50 deep with the term coverage (hybrid's), and
    the last while another thread runs the KNN's numpy work meanwhile (hybrid's
    overlap), to tell depth, coverage and contention apart."""
    import threading

    from memlite.storage.fts_lists import fts_list

    index = vector_index._INDEXES.get((conn.filename, project))
    rng = np.random.default_rng(1)
    queries = [rng.standard_normal(len(index.mean)).astype(np.float32).tobytes()
               for _ in range(5)] if index is not None and index.mean is not None else []
    stop, busy = threading.Event(), threading.Event()

    def knn_loop() -> None:
        while not stop.is_set():
            if not busy.wait(0.05):
                continue
            for vec in queries:
                list(vector_index.scored(index, vec, 50))

    thread = threading.Thread(target=knn_loop, daemon=True)
    thread.start()
    filters = Filters(project=project)
    cases = [("20 deep", 20, False, False), ("50 deep", 50, False, False),
             ("50 deep + coverage", 50, True, False),
             ("50 deep + coverage, KNN meanwhile", 50, True, True)]
    taken: dict[str, list[float]] = {}
    try:
        for round_ in range(rounds + 1):
            for label, depth, coverage, beside in cases:
                if beside and not queries:
                    continue
                (busy.set if beside else busy.clear)()
                time.sleep(0.02)
                for _, text in qs:
                    c0 = time.thread_time()
                    fts_list(conn, text, filters, depth, coverage=coverage)
                    if round_:
                        taken.setdefault(label, []).append(time.thread_time() - c0)
    finally:
        busy.clear()
        stop.set()
        thread.join(5)
    return {label: percentile(v, 0.5) for label, v in taken.items()}


def why_fts_costs_more(r: dict) -> str:
    """Why the full-text list inside hybrid costs more than ``mode=fts``'s, from this
    run's figures (``fts_cost``)."""
    cost = r.get("fts_cost") or {}
    if not cost:
        return ""
    listed = "; ".join(f"{label} {ms * 1000:.2f} ms" for label, ms in cost.items())
    depth = cost["50 deep"] - cost["20 deep"]
    coverage = cost["50 deep + coverage"] - cost["50 deep"]
    beside = cost.get("50 deep + coverage, KNN meanwhile")
    contention = (f"the KNN's numpy work on the other CPU at the same time added "
                  f"{(beside - cost['50 deep + coverage']) * 1000:.2f} ms"
                  if beside is not None and beside > cost["50 deep + coverage"] else
                  "the KNN's numpy work on the other CPU at the same time added nothing "
                  "measurable in this run")
    return ("Why the full-text list costs more inside a hybrid search than in `mode=fts` "
            "(CPU p50 of the list alone, this thread, same run, same 50 queries): "
            f"{listed}. In this run depth (50 rows, not 20) added "
            f"{f'{depth * 1000:.2f} ms' if depth > 0.00005 else 'nothing measurable'}, "
            f"the term coverage (the fusion's share of the query's terms held by each hit: "
            f"the 50 rows read and tokenized) {coverage * 1000:.2f} ms, and {contention}; "
            "the rest of the gap to the breakdown's figure is the load of the moment (CPU "
            "time grows on a busy 2-CPU machine).")


FTS_PIECES = (
    ("term counts (the split's plan: one capped count a term)", "fts_split", "_count"),
    ("most-rows checks (frequent terms, newest 2,000 rows)", "fts_split", "_in_most_rows"),
    ("newest floor (a query with no selective term)", "fts_split", "newest_floor"),
    ("BM25 queries (selective, both; or the whole query)", "fts_lists", "_pairs"),
    ("filter checks of the top ids", "fts_lists", "_passing"),
    ("coverage: rows read and tokenized", "fts_lists", "_covered"),
    ("of which the tokenizer call and the split of its tokens", "fts_lists", "_held"),
)


def fts_pieces(conn, qs, project: str, rounds: int = 2) -> dict[str, dict[str, float]]:
    """Mean CPU (this thread) per list of each piece of the full-text list, as hybrid runs
    it (50 deep, coverage, superseded rows seen) and as ``mode=fts`` runs it (20 deep):
    each piece's function wrapped, one warm-up round."""
    from memlite.storage import fts_lists

    modules = {"fts_split": fts_split, "fts_lists": fts_lists}
    spent: dict[str, float] = {}
    saved = [(modules[m], name, getattr(modules[m], name)) for _, m, name in FTS_PIECES]

    def wrap(fn, label):
        def timed(*args, **kwargs):
            c0 = time.thread_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.thread_time() - c0
        return timed

    for (label, _, _), (owner, name, fn) in zip(FTS_PIECES, saved, strict=True):
        setattr(owner, name, wrap(fn, label))
    cases = {"hybrid": (Filters(project=project, include_superseded=True), 50, True),
             "fts": (Filters(project=project), 20, False)}
    out: dict[str, dict[str, float]] = {}
    try:
        for case, (filters, depth, coverage) in cases.items():
            total = 0.0
            for round_ in range(rounds + 1):
                if round_ == 1:
                    spent.clear()
                    total = 0.0
                for _, text in qs:
                    c0 = time.thread_time()
                    fts_lists.fts_list(conn, text, filters, depth, coverage=coverage)
                    total += time.thread_time() - c0
            n = rounds * len(qs)
            out[case] = {"whole list": total / n,
                         **{label: spent.get(label, 0.0) / n for label, _, _ in FTS_PIECES}}
    finally:
        for owner, name, fn in saved:
            setattr(owner, name, fn)
    return out


def fts_pieces_text(r: dict) -> str:
    got = r.get("fts_pieces")
    if not got:
        return ""

    def listed(case: str) -> str:
        return "; ".join(f"{label} {ms * 1000:.2f} ms" for label, ms in got[case].items()
                         if label == "whole list" or ms >= 0.000005)

    return ("Where the full-text list's own time goes (CPU of this thread, mean per list "
            "over the 50 queries, 2 rounds after a warm-up; each piece's function timed "
            f"alone): as hybrid runs it (50 deep, coverage, superseded rows seen): "
            f"{listed('hybrid')}. As `mode=fts` runs it (20 deep): {listed('fts')}. The "
            "rest of a list is Python between the pieces (the query's terms, the merge).")
