"""An in-memory copy of the observations' full-text index: BM25 top-k in numpy.

Why: FTS5's ``bm25()`` is computed row by row (each row's size and phrase instances read
from the index: ~1 µs a row on this machine), and an any-term query must score every
row it matches to sort them: a one-word query matching 1,900 of 10,000 observations cost
1.85 ms, a question of five common words ~2.5-4.9 ms, most of a full-text search
(``bench/search_breakdown.py``). The same scores from arrays cost a few µs per thousand
matches: each term's postings (the rows holding it, and its weighted count there) and
each row's length, scored and summed by numpy.

Exactness: the tokens are FTS5's own (the table's tokenizer through apsw, on the same
column values the insert trigger gives FTS5), ``N`` and the total length are the ones
FTS5 keeps in its averages record (read here, so ``avgdl`` is FTS5's), and the formula
is ``fts5_aux.c``'s ``bm25()`` with the column weights ``OBSERVATION_WEIGHTS``, its
operations in the same order: for each phrase ``i`` of the query, in order,

    idf_i  = ln((N - n_i + 0.5) / (n_i + 0.5)), or 1e-6 when that is <= 0
    score += idf_i * (f_i * (k1 + 1)) / (f_i + k1 * (1 - b + b * D / avgdl))

with ``f_i`` the sum of the column weights over the row's instances of the term, ``D``
the row's tokens in all columns, k1 = 1.2, b = 0.75; the answer is ``-score`` (lower is
better, as SQLite reports it). The tests compare every score with FTS5's. Positions
are not kept: a phrase of several tokens (``"os.path"`` is the phrase ``os path``,
``user's`` is ``user s``) gets its rows and counts from FTS5 itself
(``_phrase_rows``).

What it answers: the best rows of an any-term query over the whole table or one
project's rows (IDFs over the whole table, as FTS5's); the caller checks the other
filters on them (supersession; ``fts_lists``), and leaves narrowing filters to FTS5.
Every match is scored, so the answer is the full query's, where FTS5 at scale scored a
split of it (``memlite.storage.fts_split``: rows holding only frequent terms left out,
past ``fts_split.BUDGET`` matches); the one rule kept from there is that a query all of
whose terms are common (each in more than ``BUDGET`` rows) ranks its newest ``BUDGET``
matches only (within the project, when one is asked).

Only for a table of at least ``MIN_ROWS`` observations (below, FTS5 scores every match
in at most ~2.5 ms and nothing is held in memory) and within ``bm25_copy.MEMORY_BUDGET``.

Freshness, checked before each search (two lookups, a few µs): rows with a higher id
than any held are tokenized and added (more than ``bm25_copy.FOLD_LIMIT`` at once: a
new copy is built on its thread instead, FTS5 answering meanwhile); then the held row
count and per-column token totals must equal FTS5's averages record. When they do not
(rows deleted), the table's ids are read (~15 ms at 100,000) and the missing rows
dropped, the new ones added; if the totals still differ (a text changed in place, an id
reused between two searches), the copy cannot say which row changed: it answers nothing
(FTS5 does) and a new one is built. Postings added since the build go to per-term lists,
merged into the arrays once they hold a quarter as many.

Building: every row read and tokenized (one tokenizer call per 2,048 rows' texts, their
tokens counted and weighted by numpy), on a thread of its own with its own read-only
connection (``build_soon``): the worker starts it when it starts (``tree``), and in the
worker (``allow_builds``) a search that finds none starts it; searches meanwhile are
answered by FTS5, as are a one-off process's (``memlite search`` with no worker). ~0.6 s
at 10,000 observations, ~5 s at 100,000 (``bench/bench_search.py --index``), holding the
GIL in 5 ms slices like any Python thread.

Memory: per posting (a distinct term in a row) a row slot (int32) and its weighted
count (uint16; float32 if one exceeds 65,535): ~650,000 postings at 10,000 of
``bench_search``'s observations, 4.4-4.7 MB in all; 6.5 million and 44-45 MB at
100,000; per row its id, length, project and six column lengths, and an id -> slot dict
(~5 MB at 100,000). A build's temporaries are given back to the system when it ends
(``memlite.heap``): the process's own memory is then ~65 MB over what it was before the
build at 100,000 (~160 MB at its peak), ~22 MB at 10,000 (~35 MB at its peak). Past
``bm25_copy.MEMORY_BUDGET`` the copy is dropped and FTS5 answers.

Indexes live per process, keyed by database file, shared by the reader threads (a lock
per index, held while it is read or changed). The copy itself (its arrays, how rows are
added and merged) is ``memlite.storage.bm25_copy.Bm25Index``, its scoring
``memlite.storage.bm25_score``; this module keeps one per database, builds it, and
answers searches from it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from typing import Any

import apsw
import numpy as np

from memlite.heap import release_free_memory
from memlite.storage import fts
from memlite.storage.bm25_copy import TOKENIZER, Bm25Index
from memlite.storage.bm25_score import K1, best, idf
from memlite.storage.db import connect
from memlite.storage.fts import OBSERVATION_WEIGHTS
from memlite.storage.sqlvalue import integer, real

__all__ = ["BUILT", "MIN_ROWS", "Bm25Index", "allow_builds", "build_soon", "coverage",
           "phrase_tokens", "reset", "top", "warm"]

log = logging.getLogger(__name__)

MIN_ROWS = 2_500
"""Observations below which FTS5 scores every query itself (``fts_split.BUDGET``: at
most ~2.5 ms of ``bm25()``), and no copy is held."""
BUILT = "full-text index built"
"""The worker log's line when a build is done (benchmarks wait for it)."""


def phrase_tokens(conn: apsw.Connection, query: str) -> list[tuple[str, ...]]:
    """The tokens of each phrase of ``query`` (``fts_query(..., any_term=True)``:
    quoted phrases joined by `` OR ``), in order. A phrase of none matches nothing and
    is left out."""
    return [tokens for _, tokens in _phrases(conn, query)]


def _phrases(conn: apsw.Connection, query: str) -> list[tuple[str, tuple[str, ...]]]:
    """``phrase_tokens``, each with its phrase as the query quotes it."""
    tokenize: Any = conn.fts5_tokenizer(*TOKENIZER)
    out: list[tuple[str, tuple[str, ...]]] = []
    for phrase in query.split(" OR "):  # a quoted phrase never holds a space
        text = phrase[1:-1].replace('""', '"')
        tokens: list[str] = tokenize(text.encode("utf-8", "replace"),
                                     apsw.FTS5_TOKENIZE_QUERY, None,
                                     include_offsets=False, include_colocated=False)
        if tokens:
            out.append((phrase, tuple(tokens)))
    return out


_INDEXES: dict[str, Bm25Index] = {}
_BUILDING: set[str] = set()
_AUTO_BUILD = False
_GUARD = threading.Lock()


def reset() -> None:
    """Forget every index (tests, and a process that closes its databases)."""
    with _GUARD:
        _INDEXES.clear()


def _large(conn: apsw.Connection) -> bool:
    averages = fts.fts5_averages(conn)
    values = fts.varints(averages, 1) if averages is not None else None
    return values is not None and values[0] >= MIN_ROWS


def warm(conn: apsw.Connection) -> bool:
    """Build (or refresh) the index of ``conn``'s database now, on this thread, when it
    is large enough; True when it can answer."""
    if not conn.filename or not _large(conn):
        return False
    with _GUARD:
        index = _INDEXES.get(conn.filename)
    if index is None:
        index = Bm25Index()
        with index.lock:
            ready = index.refresh(conn)
        with _GUARD:
            _INDEXES[conn.filename] = index
        return ready
    with index.lock:
        return index.refresh(conn)


def allow_builds(allowed: bool = True) -> None:
    """Let a search that finds no index start its build (``build_soon``): the worker
    does at its start; a one-off process (``memlite search`` with the worker down) does
    not, and FTS5 answers it."""
    global _AUTO_BUILD
    _AUTO_BUILD = allowed


def build_soon(conn: apsw.Connection) -> bool:
    """Start building the index of ``conn``'s database on a thread of its own (with its
    own read-only connection) when it is large enough and has none; True when one was
    started. Searches meanwhile are answered by FTS5."""
    filename = conn.filename
    if not filename or not _large(conn):
        return False
    with _GUARD:
        if filename in _INDEXES or filename in _BUILDING:
            return False
        _BUILDING.add(filename)
    threading.Thread(target=_build, args=(filename,), name="memlite-bm25-build",
                     daemon=True).start()
    return True


def _build(filename: str) -> None:
    try:
        started = time.monotonic()
        conn = connect(filename, writer=False)
        try:
            index = Bm25Index()
            with index.lock:
                ready = index.refresh(conn)
        finally:
            conn.close()
        with _GUARD:
            _INDEXES[filename] = index
        # The build's temporaries (rows' text, tokens, merge positions) are freed but
        # stay with the allocator: ~60 MB at 100,000 observations. Given back now.
        release_free_memory()
        log.info("%s: %d observations, %d terms, %.1f MB in %.1f s", BUILT if ready else
                 "full-text index not usable (FTS5 answers)", index.rows, len(index.terms),
                 index.nbytes() / 1e6, time.monotonic() - started)
    except Exception:  # a search never depends on it: FTS5 answers instead
        log.exception("the in-memory full-text index could not be built")
    finally:
        with _GUARD:
            _BUILDING.discard(filename)


def top(conn: apsw.Connection, query: str, fetch: int, newest: int,
        project: str | None = None) -> list[tuple[int, float]] | None:
    """The ``fetch`` best ``(id, bm25)`` of ``query`` over the observations of
    ``project`` (None: every one), best first, or None when the index cannot answer it
    (a small table, a phrase of several tokens, over budget, not built yet: then its
    build is started): the caller asks FTS5."""
    filename = conn.filename
    if not filename:
        return None
    with _GUARD:
        index = _INDEXES.get(filename)
    if index is None:
        if _AUTO_BUILD:
            build_soon(conn)
        return None
    phrases = _phrases(conn, query)
    with index.lock:
        if index.refresh(conn, rebuild=False):
            terms: list[str | tuple[np.ndarray, np.ndarray]] = []
            for quoted, tokens in phrases:
                held = tokens[0] if len(tokens) == 1 else _phrase_rows(index, conn, quoted)
                if held is None:
                    return None
                terms.append(held)
            return best(index, terms, fetch, newest, project)
        stale = index.stale
    if stale:  # a text changed in place: built again from scratch, off this search
        with _GUARD:
            if _INDEXES.get(filename) is index:
                del _INDEXES[filename]
        if _AUTO_BUILD:
            build_soon(conn)
    return None


def _phrase_rows(index: Bm25Index, conn: apsw.Connection,
                 quoted: str) -> tuple[np.ndarray, np.ndarray] | None:
    """The rows (slots) holding the phrase ``quoted`` (as the query quotes it: its
    tokens are stemmed again from it, and stemming a stem can change it; several
    tokens, adjacent: positions this copy does not keep) and its weighted count in
    each, from FTS5; None when a row is not held or a count is not a whole number.

    FTS5 scores the phrase alone, ``s = idf * f (k1 + 1) / (f + norm)`` per row with
    the IDF, row lengths and average this copy holds too, so ``f = s * norm / (idf *
    (k1 + 1) - s)``: a sum of whole column weights, rounded back exactly. FTS5's cost
    is the phrase's own rows (a term of several tokens, such as a file name or
    ``user's``, is rarer than its words), not every match of the query."""
    rows = conn.execute(f"SELECT rowid, bm25(observations_fts, {OBSERVATION_WEIGHTS}) "
                        "FROM observations_fts WHERE observations_fts MATCH ?",
                        (quoted,)).fetchall()
    slots = [index.by_id.get(integer(r[0])) for r in rows]
    if any(slot is None for slot in slots):
        return None
    at = np.asarray(slots, dtype=np.int32)
    score = -np.asarray([real(r[1]) for r in rows], dtype=np.float64)
    weight = idf(index.fts_rows, len(rows))
    norm = index.norms(index.fts_tokens / index.fts_rows)[at] if index.fts_rows else at
    f = score * norm / (weight * (K1 + 1.0) - score)
    whole = np.rint(f)
    if not np.all(np.abs(f - whole) <= 1e-6 * np.maximum(whole, 1.0)) or \
            (len(whole) and float(whole.min()) < 1.0):
        return None
    return at, whole


def coverage(conn: apsw.Connection, phrases: Sequence[Sequence[str]],
             ids: Sequence[int]) -> dict[int, float] | None:
    """For each of ``ids`` (a list ``top`` just answered on ``conn``: the index was
    brought up to date for it, and is not read again), the share of ``phrases`` (each a
    term's tokens) it holds every token of, from the postings (``fts_lists._covered``'s
    shares, without reading or tokenizing a row); None when the index cannot say (gone,
    waiting for a new build, an id it no longer holds)."""
    with _GUARD:
        index = _INDEXES.get(conn.filename) if conn.filename else None
    if index is None:
        return None
    with index.lock:
        if index.stale or index.too_big or index.unusable:
            return None
        slots = [index.by_id.get(int(oid)) for oid in ids]
        if any(slot is None for slot in slots):
            return None
        if not phrases or not ids:
            return {}
        at = np.asarray(slots, dtype=np.int64)
        held = np.zeros(len(at), dtype=np.int64)
        for phrase in phrases:
            holds = np.ones(len(at), dtype=bool)
            for token in phrase:
                mark = np.zeros(index.count, dtype=bool)
                mark[index.postings(token)[0]] = True
                holds &= mark[at]
            held += holds
    return {int(oid): int(n) / len(phrases) for oid, n in zip(ids, held, strict=True)}
