"""An in-memory sign-bit index per large project (and one over the whole database, for
searches with no project filter), with exact rescoring, for fast KNN.

Why: sqlite-vec's KNN is exact and reads every float vector of the project's partition:
about 58 ms for 100,000 observations in one project, against issue 14's 10 ms for a whole
search, query embedding included. This index keeps, per project, the ids, one bit per
dimension (the sign of the vector minus the project's mean vector: centring is what makes
sign bits of sentence embeddings informative) and, within a memory budget, the int8 codes
themselves. A query:

1. every row's Hamming distance between its sign bits and the query's (``np.bitwise_count``
   over the XOR of packed 64-bit words: ~0.4 ms at 100,000 rows, 256-d); the
   ``CANDIDATES`` nearest kept, by a threshold on the distances' histogram (they are
   small integers: no sort);
2. those candidates rescored with the cosine of their int8 codes against the float query
   (int8 cosine differs from float by ~1e-3): from the codes held in memory (~1 ms for
   8,000 candidates), or, for an index past ``CODES_BUDGET``, read from the codes table
   by primary key (``vector_codes``; then only ``SQL_CANDIDATES`` rows: ~2.5 µs each);
3. the search's filters (project, superseded) checked on the best ``2k``, then more,
   until ``k`` pass; returned closest first as ``(id, cosine distance)`` like vec0.

Exactness: this is approximate. On the synthetic 100k benchmark (random coding words,
wordllama, cosines within 0.1 of each other over the top 600), 8,000 Hamming candidates
hold 0.93 of the exact top 10 (the previous first stage, an asymmetric float-query
scoring of every row from lookup tables, kept 0.78 with 600 rescored candidates, at
twice the cost of the Hamming pass plus the SQLite reads). Recall against the exact KNN
is measured in ``bench/bench_search.py`` (``--index``).

Memory: the int8 codes take ``dim`` bytes per row (25.6 MB at 100,000 wordllama vectors,
38.4 MB at 384-d MiniLM), the bits ``dim / 8``, the id 8 and the norm 4. Codes are held
while the process's indexes together stay within ``CODES_BUDGET``; an index built past it
keeps the bits alone and reads its candidates' codes from SQLite.

Freshness: before each query the index reads the codes table's ``epoch`` and the
project's highest ``seq`` (two indexed lookups, a few µs); rows written since are folded
in (new, re-embedded, or deleted = tombstone). Another epoch (table recreated for a new
model) rebuilds it. The mean is the one of the first build; rows added later use it too
(it moves little); the index is rebuilt from scratch when more rows changed since the
build than it held.

Used only for a project with at least ``MIN_VECTORS`` vectors and no narrowing filter
(types, dates, file, session): below that the exact KNN costs less than a few ms anyway,
and a narrowing filter restricts the exact KNN to its ids. A search with no project filter
(the dashboard's "all projects", an MCP search without one) uses the same kind of index
over every project's vectors (``project=None``): without it the exact KNN reads every
vector of the database (~100 ms at 100,000). Indexes live per process, keyed by database
file and project (None for the whole database; a project holding every vector uses that
one: ``index_scope``), shared by the reader threads (a lock per index, held while scoring:
the arrays are updated in place). The worker builds them at its start
(``memlite.storage.vector_warm``), not the first search.

Matrix-vector products go through ``np.einsum``, not ``@``: numpy's ``@`` calls OpenBLAS,
whose threads, on a busy 2-CPU machine, turned a 0.2 ms product of 8,000 rows into 12 ms.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import apsw
import numpy as np

from memlite.storage.filters import Filters, json_ids
from memlite.storage.filters import passing as filters_passing
from memlite.storage.sqlvalue import blob, blob_or_none, integer, integer_or_none
from memlite.storage.vector_codes import CODES_TABLE, codes_epoch

__all__ = ["CANDIDATES", "CODES_BUDGET", "MIN_VECTORS", "SQL_CANDIDATES", "ProjectIndex",
           "Ranked", "index_for", "index_scope", "nearest", "passing", "prepared",
           "project_share", "reset", "scored"]

MIN_VECTORS = 4_000
"""A project with fewer vectors is searched with the exact KNN. sqlite-vec's exact KNN
grows linearly: 9.0 ms at 10,000 MiniLM vectors (384-d) on a quiet machine, against
3.7 ms through the previous version of this index (bench_peer_http.py's 10k database,
the 50 bench queries); below ~4,000 the exact KNN costs about what the index does.
Quality: run with the index on every LoCoMo conversation (MiniLM; ~250 facts each, so
the 50 candidates a search asks for are a fifth of them), semantic hit@5 went 0.725 ->
0.715 on the dev half and 0.721 -> 0.712 on the test half, default hybrid 0.811 -> 0.792
and 0.808 -> 0.797; the previous lookup-table first stage, same run conditions, 0.718 /
0.718 and 0.798 / 0.798: at an equal number of candidates Hamming keeps slightly fewer
MiniLM neighbours; it is cheap enough to keep thirteen times as many (8,000, not 600)."""
CANDIDATES = 8_000
"""Rows kept by the Hamming distance for rescoring from the in-memory codes (a project
of at most this many is rescored whole: exact up to int8). On bench_search's 100k-1p
database (wordllama, crowded cosines): 4,000 keep 0.86 of the exact top 10, 8,000 0.93,
16,000 0.97; rescoring costs ~0.1 ms per 1,000 rows. MiniLM (384-d), LoCoMo's 2,541
facts pooled, its 1,302 questions: 200 Hamming candidates (8%, the share 8,000 is of
100,000) keep 0.999 of the exact top 10, 15 lookup-table candidates (the previous 600 of
100,000) 0.816; at an equal count the lookup table keeps a little more (50: 0.986
against 0.961)."""
SQL_CANDIDATES = 1_000
"""Rows kept by the Hamming distance when their codes must be read from SQLite (an index
past ``CODES_BUDGET``): ~2.5 ms of primary-key reads."""
CODES_BUDGET = 128 * 1024 * 1024
"""Bytes of int8 codes the process's indexes may hold together: 340,000 MiniLM (384-d)
vectors. Past it, a new index keeps its sign bits only."""


class ProjectIndex:
    """Sign bits (and codes) of one project's vectors (see the module docstring).

    Arrays have spare capacity (``_grow``) so that folding in a new row does not copy
    the whole index; the first ``count`` rows are in use."""

    def __init__(self, epoch: str) -> None:
        self.epoch = epoch
        self.last_seq = 0
        self.built_size = 0
        self.changed = 0
        self.count = 0
        self.ascending = True  # ids[:count] strictly ascending (``codes_for``'s lookup)
        self.mean: np.ndarray | None = None  # of the int8 codes (their own scale)
        self.ids = np.zeros(0, dtype=np.int64)
        self.words = np.zeros((0, 0), dtype=np.uint64)  # (dim / 64, capacity)
        self.codes: np.ndarray | None = None  # (capacity, dim) int8, or None
        self.inv_norms = np.zeros(0, dtype=np.float32)
        self.alive = np.zeros(0, dtype=bool)
        self.lock = threading.Lock()

    @property
    def size(self) -> int:
        # count_nonzero, not sum: a bool sum casts every element (~6x the time; this
        # runs for every search, twice on the full-text side: ``project_share``).
        return int(np.count_nonzero(self.alive[:self.count]))

    @property
    def nbytes(self) -> int:
        """Memory held by the arrays (what the index costs per project)."""
        return (self.ids.nbytes + self.words.nbytes + self.inv_norms.nbytes
                + self.alive.nbytes + (self.codes.nbytes if self.codes is not None else 0))

    def _signs(self, codes: np.ndarray) -> np.ndarray:
        """Sign bits of ``codes - mean`` as 64-bit words: shape (dim/64, rows)."""
        assert self.mean is not None  # packing happens after the first build
        return _words(codes.astype(np.float32) - self.mean > 0)

    def refresh(self, conn: apsw.Connection, project: str | None,
                held_elsewhere: int = 0) -> None:
        """Fold in what changed since ``last_seq`` (call with ``lock`` held); ``project``
        None: every project's rows. ``held_elsewhere``: code bytes the other indexes
        hold (for ``CODES_BUDGET``)."""
        scope, args = ("WHERE project = ?", (project,)) if project is not None else ("", ())
        top = integer_or_none(conn.execute(f"SELECT MAX(seq) FROM {CODES_TABLE} {scope}",
                                           args).fetchall()[0][0]) or 0
        if top <= self.last_seq:
            return
        rows = [(integer(r[0]), integer(r[1]), blob_or_none(r[2])) for r in conn.execute(
            f"SELECT observation_id, seq, code FROM {CODES_TABLE} "
            f"{scope + ' AND' if scope else 'WHERE'} seq > ? ORDER BY seq",
            (*args, self.last_seq))]
        if not rows:
            return
        self.last_seq = max(self.last_seq, rows[-1][1])
        if self.mean is None:
            self._build([(oid, code) for oid, _, code in rows if code is not None],
                        held_elsewhere)
            return
        self.changed += len(rows)
        latest = {oid: code for oid, _, code in rows}  # later seq wins
        n = self.count
        # Rows already held (re-embedded or deleted): found by one vectorised pass, not
        # a per-id dict (which would cost more memory than the bits themselves).
        rows_held = np.flatnonzero(np.isin(self.ids[:n], np.fromiter(latest, dtype=np.int64)))
        held = set()
        for row in rows_held.tolist():
            oid = int(self.ids[row])
            held.add(oid)
            code = latest[oid]
            self.alive[row] = code is not None
            if code is not None:
                self._set(row, _codes([code]))
        new = [(oid, code) for oid, code in latest.items()
               if oid not in held and code is not None]
        if new:
            self._grow(n + len(new))
            self.ids[n:n + len(new)] = [oid for oid, _ in new]
            self.ascending = self.ascending and _ascending(self.ids[max(n - 1, 0):n + len(new)])
            self._set(slice(n, n + len(new)), _codes([code for _, code in new]))
            self.alive[n:n + len(new)] = True
            self.count = n + len(new)

    def _set(self, rows: int | slice, codes: np.ndarray) -> None:
        self.words[:, rows] = self._signs(codes)[:, 0] if isinstance(rows, int) \
            else self._signs(codes)
        floats = codes.astype(np.float32)
        norms = 1.0 / np.maximum(np.sqrt(np.einsum("ij,ij->i", floats, floats)), 1e-12)
        self.inv_norms[rows] = norms[0] if isinstance(rows, int) else norms
        if self.codes is not None:
            self.codes[rows] = codes[0] if isinstance(rows, int) else codes

    def _grow(self, needed: int) -> None:
        """Room for ``needed`` rows (capacity grows by half, so appends are amortised)."""
        capacity = len(self.ids)
        if needed <= capacity:
            return
        capacity = max(needed, capacity + capacity // 2, 64)
        n = self.count

        def grown(old: np.ndarray, shape: tuple[int, ...], axis: int = 0) -> np.ndarray:
            new = np.zeros(shape, dtype=old.dtype)
            if axis == 0:
                new[:n] = old[:n]
            else:
                new[:, :n] = old[:, :n]
            return new

        self.ids = grown(self.ids, (capacity,))
        self.words = grown(self.words, (self.words.shape[0], capacity), axis=1)
        self.inv_norms = grown(self.inv_norms, (capacity,))
        self.alive = grown(self.alive, (capacity,))
        if self.codes is not None:
            self.codes = grown(self.codes, (capacity, self.codes.shape[1]))

    def stale(self) -> bool:
        return self.changed > max(self.built_size, 1000)

    def _build(self, rows: list[tuple[int, bytes]], held_elsewhere: int) -> None:
        codes = _codes([code for _, code in rows])
        self.mean = codes.astype(np.float32).mean(axis=0) if len(rows) else None
        if self.mean is None:
            return
        n, dim = codes.shape
        self.ids = np.asarray([oid for oid, _ in rows], dtype=np.int64)
        self.ascending = _ascending(self.ids)
        self.words = np.zeros(((dim + 63) // 64, n), dtype=np.uint64)
        self.inv_norms = np.zeros(n, dtype=np.float32)
        self.alive = np.ones(n, dtype=bool)
        keep = held_elsewhere + codes.nbytes <= CODES_BUDGET
        self.codes = codes.copy() if keep else None  # writable (frombuffer is not)
        for start in range(0, n, 16_384):  # bounded temporaries while packing
            part = slice(start, min(n, start + 16_384))
            self._set(part, codes[part])
        self.count = n
        self.built_size, self.changed = n, 0

    def usable(self, dim: int) -> bool:
        """Whether this index answers ``dim``-wide queries (else the exact KNN does)."""
        return self.mean is not None and self.size >= MIN_VECTORS and dim == len(self.mean)

    def codes_for(self, ids: Sequence[int]) -> dict[int, bytes] | None:
        """The int8 codes of ``ids`` held in memory (live rows only; ids without one are
        left out), the same bytes as the codes table's; None when this index holds no
        codes or its ids are not in ascending order (the caller reads SQLite). Takes
        ``lock`` (another reader may be folding in rows)."""
        with self.lock:
            if self.codes is None or not self.ascending:
                return None
            n = self.count
            if n == 0:
                return {}
            wanted = np.asarray(ids, dtype=np.int64)
            rows = np.minimum(np.searchsorted(self.ids[:n], wanted), n - 1)
            found = (self.ids[rows] == wanted) & self.alive[rows]
            return {int(oid): self.codes[row].tobytes() for oid, row in
                    zip(wanted[found].tolist(), rows[found].tolist(), strict=True)}

    def distances(self, query: np.ndarray) -> np.ndarray:
        """Hamming distance of every row in use to the query's sign bits (dead rows:
        past the largest possible distance)."""
        n = self.count
        words = _words(query[None, :] > 0)[:, 0]
        out: np.ndarray = np.bitwise_count(self.words[0, :n] ^ words[0]).astype(np.uint16)
        for j in range(1, len(words)):
            out += np.bitwise_count(self.words[j, :n] ^ words[j])
        out[~self.alive[:n]] = 64 * len(words) + 1
        return out

    def candidates(self, query: np.ndarray, count: int) -> np.ndarray:
        """Row numbers of the ``count`` live rows nearest ``query`` by Hamming distance,
        in no particular order (a threshold on the distances' histogram, ties cut in row
        order)."""
        distance = self.distances(query)
        dead = 64 * self.words.shape[0] + 1
        if count >= len(distance):
            return np.flatnonzero(distance < dead)
        cumulative = np.cumsum(np.bincount(distance, minlength=dead + 1))
        threshold = min(int(np.searchsorted(cumulative, count)), dead - 1)
        below = np.flatnonzero(distance < threshold)
        at = np.flatnonzero(distance == threshold)[:max(count - len(below), 0)]
        return np.concatenate([below, at])

    def rescored(self, query: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Ids and cosines of ``rows`` (from the codes held in memory)."""
        assert self.codes is not None
        dots = np.einsum("ij,j->i", np.take(self.codes, rows, axis=0), query)
        cosine = dots * self.inv_norms[rows] / max(float(np.linalg.norm(query)), 1e-12)
        return self.ids[rows], cosine


def _ascending(ids: np.ndarray) -> bool:
    return bool(np.all(ids[1:] > ids[:-1]))


def _words(signs: np.ndarray) -> np.ndarray:
    """Boolean rows packed into 64-bit words, transposed: shape (ceil(dim/64), rows)."""
    packed = np.packbits(signs, axis=1)
    pad = -packed.shape[1] % 8
    if pad:
        packed = np.pad(packed, ((0, 0), (0, pad)))
    return np.ascontiguousarray(np.ascontiguousarray(packed).view(np.uint64).T)


def _codes(blobs: Sequence[bytes]) -> np.ndarray:
    return np.frombuffer(b"".join(blobs), dtype=np.int8).reshape(len(blobs), -1)


_INDEXES: dict[tuple[str, str | None], ProjectIndex] = {}
_GUARD = threading.Lock()


def reset() -> None:
    """Forget every index (tests, and a process that closes its databases)."""
    with _GUARD:
        _INDEXES.clear()


def index_scope(conn: apsw.Connection, project: str | None) -> str | None:
    """Whose index answers a search of ``project``: the whole database's (None) when
    every vector is that project's (the same rows, read in the same order: the same
    index, built and held once), else the project's own. Two lookups in the codes
    table's ``(project, seq)`` index (apart: one statement asking for both reads the
    whole index), ~5 µs."""
    if project is None:
        return None
    try:
        low, high = conn.execute(f"SELECT (SELECT MIN(project) FROM {CODES_TABLE}), "
                                 f"(SELECT MAX(project) FROM {CODES_TABLE})").fetchall()[0]
    except apsw.SQLError:  # no vectors yet (no codes table): no index either
        return project
    return None if low == project == high else project


def index_for(conn: apsw.Connection, project: str | None) -> ProjectIndex | None:
    """The index that answers ``project``'s searches (``index_scope``), brought up to
    date, built first if there is none (or it is of another model, or more changed
    since its build than it held); None when the database has no vectors."""
    epoch = codes_epoch(conn)
    if epoch is None or not conn.filename:
        return None
    project = index_scope(conn, project)
    key = (conn.filename, project)
    with _GUARD:
        index = _INDEXES.get(key)
        if index is None or index.epoch != epoch:
            index = _INDEXES[key] = ProjectIndex(epoch)
    with index.lock:
        index.refresh(conn, project, _codes_held(but=key))
        stale = index.stale()
    if stale:  # more changed since the build than it held: start over
        index = ProjectIndex(epoch)
        with index.lock:
            index.refresh(conn, project, _codes_held(but=key))
        with _GUARD:
            _INDEXES[key] = index
    return index


def _codes_held(but: tuple[str, str | None]) -> int:
    """Code bytes held by every index but ``but`` (``CODES_BUDGET``)."""
    with _GUARD:
        return sum(index.codes.nbytes for key, index in _INDEXES.items()
                   if key != but and index.codes is not None)


def project_share(conn: apsw.Connection, project: str) -> float:
    """The share of the database's observations held by ``project``, as far as its index
    knows (0.0 with no index yet): vectors indexed over the highest observation id, an
    underestimate after deletions. Lets full text skip a join that filters nothing."""
    index = _INDEXES.get((conn.filename, index_scope(conn, project)))
    size = index.size if index is not None else 0
    if not size:
        return 0.0
    top = integer_or_none(conn.execute("SELECT MAX(id) FROM observations").fetchall()[0][0]) or 0
    return size / top if top else 0.0


def nearest(conn: apsw.Connection, vector: bytes, project: str | None, k: int,
            where: tuple[list[str], list[Any]]) -> list[tuple[int, float]] | None:
    """The ``k`` nearest observations of ``project`` (None: of any project) passing
    ``where`` (SQL conditions on ``observations AS o``), as ``(id, cosine distance)``
    closest first; or None when there are too few vectors for the index (the caller runs
    the exact KNN)."""
    index = index_for(conn, project)
    if index is None:
        return None
    query = np.frombuffer(vector, dtype=np.float32)
    with index.lock:
        if not index.usable(query.shape[0]):
            return None
        in_memory = index.codes is not None
    if in_memory:
        return passing(conn, scored(index, vector, k), k, where)
    with index.lock:
        ids = index.ids[index.candidates(query, max(SQL_CANDIDATES, k))]
    ids, cosine = _rescored_from_sql(conn, ids, query)
    return passing(conn, _best_first(ids, cosine, 2 * k), k, where)


def prepared(conn: apsw.Connection, project: str | None, dim: int) -> ProjectIndex | None:
    """The index of ``project`` brought up to date, when it can answer a ``dim``-wide
    query without SQLite (codes in memory, enough vectors); else None.

    With ``scored`` and ``passing``, the three steps of ``nearest`` for a caller that
    overlaps the KNN with other work (``memlite.storage.search``): ``prepared`` and
    ``passing`` read SQLite (on the caller's connection), ``scored`` is numpy alone and
    may run on another thread meanwhile (an apsw connection must not be used by two
    threads at once)."""
    index = index_for(conn, project)
    if index is None:
        return None
    with index.lock:
        return index if index.usable(dim) and index.codes is not None else None


Ranked = Iterator[list[tuple[int, float]]]
"""``(id, cosine distance)`` closest first, in chunks (``_best_first``)."""


def scored(index: ProjectIndex, vector: bytes, k: int) -> Ranked:
    """The candidates of ``index`` (from ``prepared``) nearest ``vector``, rescored,
    closest first in chunks; the first chunk (``2k``) is already sorted. No SQLite."""
    query = np.frombuffer(vector, dtype=np.float32)
    with index.lock:
        ids, cosine = index.rescored(query, index.candidates(query, max(CANDIDATES, k)))
    chunks = _best_first(ids, cosine, 2 * k)
    first = next(chunks, None)
    return itertools.chain([first] if first is not None else [], chunks)


def passing(conn: apsw.Connection, chunks: Ranked, k: int,
            where: tuple[list[str], list[Any]] | Filters) -> list[tuple[int, float]]:
    """The first ``k`` of ``chunks`` that pass ``where`` (conditions on
    ``observations AS o``: project, supersession; or the search's ``Filters``, checked
    by ``filters.passing``, which answers a project filter from its index without
    reading the rows), closest first."""
    # A project filter that counts superseded rows needs no check: the project's index
    # holds its live rows only (a deleted one is a tombstone). ~0.45 ms at 100k (a hybrid
    # search's lists see superseded rows).
    unchecked = isinstance(where, Filters) and where.project is not None \
        and not where.narrows and where.include_superseded
    out: list[tuple[int, float]] = []
    for chunk in chunks:
        ids = [oid for oid, _ in chunk]
        if unchecked:
            kept = set(ids)
        elif isinstance(where, Filters):
            kept = filters_passing(conn, ids, where)
        else:
            clauses, params = where
            kept = {r[0] for r in conn.execute(
                "SELECT o.id FROM observations AS o WHERE o.id IN "
                f"(SELECT value FROM json_each(?)){''.join(' AND ' + c for c in clauses)}",
                (json_ids(ids), *params))}
        out.extend(hit for hit in chunk if hit[0] in kept)
        if len(out) >= k:
            break
    return out[:k]


def _best_first(ids: np.ndarray, cosine: np.ndarray, first: int) -> Ranked:
    """``(id, cosine distance)`` closest first, in chunks of ``first``, then 4x as many,
    and so on; sorting only as far as the chunks reach (most searches need one)."""
    start, step = 0, first
    while start < len(ids):
        end = min(len(ids), start + step)
        if end < len(ids):  # the rows ranked start..end, without sorting the rest
            part = np.argpartition(-cosine, end - 1)[:end]
        else:
            part = np.arange(len(ids))
        order = part[np.argsort(-cosine[part], kind="stable")][start:end]
        # Whole arrays to Python at once: indexing numpy scalars one by one cost ~1 ms.
        yield list(zip(ids[order].tolist(), (1.0 - cosine[order]).astype(np.float64).tolist(),
                       strict=True))
        start, step = end, step * 4


def _rescored_from_sql(conn: apsw.Connection, ids: np.ndarray,
                       query: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ids and cosines of ``ids`` whose codes are still stored (tombstones skipped),
    read by primary key (in id order: neighbouring pages)."""
    rows = conn.execute(
        f"SELECT observation_id, code FROM {CODES_TABLE} WHERE observation_id IN "
        "(SELECT value FROM json_each(?)) AND code IS NOT NULL",
        (json_ids(np.sort(ids).tolist()),)).fetchall()
    if not rows:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
    codes = _codes([blob(r[1]) for r in rows]).astype(np.float32)
    norms = np.sqrt(np.einsum("ij,ij->i", codes, codes)) * max(float(np.linalg.norm(query)),
                                                              1e-12)
    cosine = np.einsum("ij,j->i", codes, query) / np.maximum(norms, 1e-12)
    return np.asarray([r[0] for r in rows], dtype=np.int64), cosine
