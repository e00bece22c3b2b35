"""FTS5's ``bm25()`` over the in-memory copy of its index (``bm25_copy.Bm25Index``):
an any-term query's best rows, scored with FTS5's formula, constants and order of
operations, so that every score equals FTS5's. What the copy holds and how it stays
current: ``memlite.storage.bm25_copy``; why, and what it answers:
``memlite.storage.bm25_index``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from memlite.storage.bm25_copy import Bm25Index

__all__ = ["B", "K1", "best", "idf"]

K1 = 1.2
B = 0.75


def idf(n_rows: int, hits: int) -> float:
    """FTS5's IDF of a phrase in ``hits`` of ``n_rows`` rows (<= 0 becomes 1e-6)."""
    idf = math.log((n_rows - hits + 0.5) / (hits + 0.5))
    return idf if idf > 0.0 else 1e-6


def best(index: Bm25Index, tokens: Sequence[str | tuple[np.ndarray, np.ndarray]], fetch: int,
         newest: int, project: str | None = None) -> list[tuple[int, float]]:
    """The ``fetch`` best ``(id, bm25)`` of the any-term query over ``tokens`` (one
    per phrase, in the query's order: a token, or a phrase's rows and weighted
    counts from ``phrase_rows``) among the rows of ``project`` (None: all),
    best (lowest) first, ties by id; when every token is in more than ``newest``
    rows of the table, among the newest ``newest`` of those matches only
    (``fts_split.newest_floor``'s rule). The IDFs are the whole table's, as FTS5's.

    A query of one term scores its postings alone (each row holds it once, and
    FTS5's sum from 0.0 of one value is that value): no array the size of the table
    is made or scanned (~20 µs of ~90 at 10,000 observations, with the fewer numpy
    calls of the rest)."""
    n_rows, n_tokens = index.fts_rows, index.fts_tokens
    if not tokens or n_rows <= 0:
        return []
    code = -1
    if project is not None:
        code = index.projects.get(project, -1)
        if code < 0:
            return []
    lists = [index.postings(term) if isinstance(term, str) else term for term in tokens]
    sizes = [len(slots) for slots, _ in lists]
    if len(lists) == 1:
        every, f = lists[0]
    else:
        every = np.concatenate([slots for slots, _ in lists])
        f = np.concatenate([weights for _, weights in lists])
    if every.size == 0:
        return []
    f = f.astype(np.float64)
    idfs = [idf(n_rows, size) for size in sizes]
    # FTS5's operations in its order (``fts5Bm25Function``); ``norms`` holds each
    # row's ``k1 * (1 - b + b * D / avgdl)``, the same double as computed per row.
    each = f * (K1 + 1.0)
    np.divide(each, f + index.norms(n_tokens / n_rows)[every], out=each)
    each = (idfs[0] if len(lists) == 1 else np.repeat(idfs, sizes)) * each
    if len(lists) == 1:
        matched, neg = every, -each
        if code >= 0:
            keep = index.project_of[matched] == code
            matched, neg = matched[keep], neg[keep]
        ids = index.ids[matched]
        if sizes[0] > newest and len(ids) > newest:  # a common term: the newest matches
            keep = ids >= np.partition(ids, len(ids) - newest)[-newest]
            ids, neg = ids[keep], neg[keep]
    else:
        ids, neg = _summed(index, lists, sizes, every, each, fetch, newest, code)
    if len(neg) > fetch:  # the best ``fetch``, and any tied with the last of them
        chosen = np.flatnonzero(neg <= np.partition(neg, fetch - 1)[fetch - 1])
        neg, ids = neg[chosen], ids[chosen]
    order = np.lexsort((ids, neg))[:fetch]
    return list(zip(ids[order].tolist(), neg[order].tolist(), strict=True))

def _summed(index: Bm25Index, lists: list[tuple[np.ndarray, np.ndarray]], sizes: list[int],
            every: np.ndarray, each: np.ndarray, fetch: int, newest: int,
            code: int) -> tuple[np.ndarray, np.ndarray]:
    """``best``'s candidates of a query of several terms, ``(ids, -score)``: each
    row's terms summed in the query's phrase order, from 0.0, as FTS5 sums them."""
    scores = np.bincount(every, weights=each, minlength=index.count)
    rarest = min(range(len(lists)), key=sizes.__getitem__)
    if sizes[rarest] > newest:  # every term common: the newest matches
        matched = np.flatnonzero(scores)  # every match scores > 0 (weights, IDFs > 0)
        if code >= 0:
            matched = matched[index.project_of[matched] == code]
        if len(matched) > newest:
            if index.ascending:  # slots in id order: the newest matches are the last
                matched = matched[-newest:]
            else:
                ids = index.ids[matched]
                matched = matched[ids >= np.partition(ids, len(ids) - newest)[-newest]]
    else:
        # The best ``fetch`` score at least the ``fetch``-th best of any subset of the
        # matches: the rarest term's rows give that bar, and only the rows over it
        # are sorted (not every match: 42,000 rows of a 100,000 table, ~0.4 ms).
        some = lists[rarest][0]
        if code >= 0:
            some = some[index.project_of[some] == code]
        bar = float(np.partition(scores[some], len(some) - fetch)[len(some) - fetch]) \
            if len(some) >= fetch else 0.0
        matched = np.flatnonzero(scores >= bar) if bar > 0.0 else np.flatnonzero(scores)
        if code >= 0:
            matched = matched[index.project_of[matched] == code]
    return index.ids[matched], -scores[matched]
