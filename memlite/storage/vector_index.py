"""An in-memory sign-bit index per large project, with exact rescoring, for fast KNN.

Why: sqlite-vec's KNN is exact and reads every float vector of the project's partition:
about 58 ms for 100,000 observations in one project, against issue 14's 10 ms for a whole
search. This index keeps, per project, one bit per dimension (the sign of the vector
minus the project's mean vector: centring is what makes sign bits of sentence embeddings
informative) and the ids: 48 bytes + 9 per observation for 384-d MiniLM, 5.7 MB at
100,000. A query:

1. every row scored by the float query times its signs, ``q . sign(x - mean)``, summed
   from one 65,536-entry lookup table per 16 dimensions (3-4 ms at 100,000 rows, 384-d;
   Hamming distance between sign bits costs more and finds half the true neighbours); the
   ``CANDIDATES`` best kept;
2. those candidates' int8 codes read by primary key (``vector_codes``; tombstones
   skipped) and rescored with the cosine against the float query (int8 cosine differs
   from float by ~1e-3);
3. the search's filters (project, superseded) checked on the best ``2k``, then more,
   until ``k`` pass; returned closest first as ``(id, cosine distance)`` like vec0.

Exactness: this is approximate. The recall of the exact top 10 depends on how crowded
the neighbours are; on the synthetic 100k benchmark (random coding words, wordllama,
cosines within 0.1 of each other over the top 600) it is 0.78 with 600 candidates.

Recall against the exact KNN is measured in ``bench/bench_search.py`` (``--index``).

Freshness: before each query the index reads the codes table's ``epoch`` and the
project's highest ``seq`` (two indexed lookups, a few µs); rows written since are folded
in (new, re-embedded, or deleted = tombstone). Another epoch (table recreated for a new
model) rebuilds it. The mean is the one of the first build; rows added later use it too
(it moves little); the index is rebuilt from scratch when more rows changed since the
build than it held.

Used only for a project with at least ``MIN_VECTORS`` vectors and no narrowing filter
(types, dates, file, session): below that the exact KNN costs less than a few ms anyway,
and a narrowing filter restricts the exact KNN to its ids. Indexes live per process,
keyed by database file and project, shared by the reader threads (a lock per index).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import apsw
import numpy as np

from memlite.storage.sqlvalue import blob, blob_or_none, integer, integer_or_none
from memlite.storage.vector_codes import CODES_TABLE, codes_epoch

__all__ = ["CANDIDATES", "MIN_VECTORS", "ProjectIndex", "nearest", "project_share", "reset"]

MIN_VECTORS = 20_000
"""A project with fewer vectors is searched with the exact KNN (a few ms at most)."""
CANDIDATES = 600
"""Rows kept by the sign scores for exact rescoring. On bench_search's 100k-1p database
(wordllama, crowded cosines: top 1 0.32, 600th 0.22) 600 keep 0.78 of the exact top 10 at
~7 ms, 2,000 keep 0.91 at ~16 ms (same-day runs under load)."""


class ProjectIndex:
    """Sign bits of one project's vectors (see the module docstring)."""

    def __init__(self, epoch: str) -> None:
        self.epoch = epoch
        self.last_seq = 0
        self.built_size = 0
        self.changed = 0
        self.mean: np.ndarray | None = None  # of the int8 codes (their own scale)
        self.ids = np.zeros(0, dtype=np.int64)
        self.cols = np.zeros((0, 0), dtype=np.uint16)
        self.alive = np.zeros(0, dtype=bool)
        self.lock = threading.Lock()

    @property
    def size(self) -> int:
        return int(self.alive.sum())

    @property
    def nbytes(self) -> int:
        """Memory held by the arrays (what the index costs per project)."""
        return self.ids.nbytes + self.cols.nbytes + self.alive.nbytes
    def _pack(self, codes: np.ndarray) -> np.ndarray:
        """Sign bits of ``codes - mean`` as uint16 columns: shape (dim/16, rows)."""
        mean = self.mean
        assert mean is not None  # set by _build before anything is packed
        signs = (codes.astype(np.float32) - mean) > 0
        packed = np.packbits(signs, axis=1)  # (rows, dim/8), first dimension = high bit
        if packed.shape[1] % 2:
            packed = np.pad(packed, ((0, 0), (0, 1)))
        pairs = packed[:, 0::2].astype(np.uint16) << 8 | packed[:, 1::2]
        return np.ascontiguousarray(pairs.T)

    def scores(self, query: np.ndarray) -> np.ndarray:
        """``query . sign(row - mean)`` for every row (asymmetric: the query stays float,
        which finds twice the true neighbours that Hamming distance between sign bits
        finds), summed from 16-bit lookup tables, one per 16 dimensions."""
        q = np.zeros(self.cols.shape[0] * 16, dtype=np.float32)
        # Not centred: q . x = q . (x - mean) + a constant, and (x - mean) is what the
        # signs approximate (centring q too halved the recall on wordllama vectors).
        q[:len(query)] = query
        per_byte = (q.reshape(-1, 8)[:, None, :] * _SIGNS[None, :, :]).sum(axis=2)
        out = np.zeros(self.cols.shape[1], dtype=np.float32)
        for j, column in enumerate(self.cols):
            table = (per_byte[2 * j][:, None] + per_byte[2 * j + 1][None, :]).ravel()
            out += np.take(table, column)
        return out

    def refresh(self, conn: apsw.Connection, project: str) -> None:
        """Fold in what changed since ``last_seq`` (call with ``lock`` held)."""
        top = integer_or_none(conn.execute(
            f"SELECT MAX(seq) FROM {CODES_TABLE} WHERE project = ?",
            (project,)).fetchall()[0][0]) or 0
        if top <= self.last_seq:
            return
        rows = conn.execute(
            f"SELECT observation_id, seq, code FROM {CODES_TABLE} "
            "WHERE project = ? AND seq > ? ORDER BY seq", (project, self.last_seq)).fetchall()
        if not rows:
            return
        self.last_seq = max(self.last_seq, integer(rows[-1][1]))
        if self.mean is None:
            self._build([(integer(oid), blob(code)) for oid, _, code in rows if code is not None])
            return
        self.changed += len(rows)
        latest = {integer(oid): blob_or_none(code) for oid, _, code in rows}  # later seq wins
        ids, cols, alive = self.ids, self.cols.copy(), self.alive.copy()
        # Rows already held (re-embedded or deleted): found by one vectorised pass, not
        # a per-id dict (which would cost more memory than the bits themselves).
        rows_held = np.flatnonzero(np.isin(ids, np.fromiter(latest, dtype=np.int64)))
        held = set()
        for row in rows_held.tolist():
            oid = int(ids[row])
            held.add(oid)
            code = latest[oid]
            alive[row] = code is not None
            if code is not None:
                cols[:, row] = self._pack(_codes([code]))[:, 0]
        new = [(oid, code) for oid, code in latest.items()
               if oid not in held and code is not None]
        if new:
            ids = np.concatenate([ids, np.asarray([oid for oid, _ in new], dtype=np.int64)])
            cols = np.concatenate([cols, self._pack(_codes([code for _, code in new]))], axis=1)
            alive = np.concatenate([alive, np.ones(len(new), dtype=bool)])
        self.ids, self.cols, self.alive = ids, cols, alive

    def stale(self) -> bool:
        return self.changed > max(self.built_size, 1000)

    def _build(self, rows: list[tuple[int, bytes]]) -> None:
        codes = _codes([code for _, code in rows])
        self.mean = codes.astype(np.float32).mean(axis=0) if len(rows) else None
        if self.mean is None:
            return
        self.ids = np.asarray([oid for oid, _ in rows], dtype=np.int64)
        self.cols = self._pack(codes)
        self.alive = np.ones(len(rows), dtype=bool)
        self.built_size, self.changed = len(rows), 0

    def candidates(self, query: np.ndarray, count: int) -> np.ndarray:
        """Ids of the ``count`` live rows scoring highest against ``query``."""
        score = self.scores(query)
        score[~self.alive] = -np.inf
        if count < len(score):
            top = np.argpartition(score, len(score) - count)[len(score) - count:]
        else:
            top = np.arange(len(score))
        top = top[self.alive[top]]
        return self.ids[top]


_SIGNS = np.where((np.arange(256)[:, None] >> np.arange(7, -1, -1)[None, :]) & 1,
                  1.0, -1.0).astype(np.float32)
"""For each byte value, the sign (+1 bit set, -1 not) of each of its 8 bits, high first."""


def _codes(blobs: Sequence[bytes]) -> np.ndarray:
    return np.frombuffer(b"".join(blobs), dtype=np.int8).reshape(len(blobs), -1)


_INDEXES: dict[tuple[str, str], ProjectIndex] = {}
_GUARD = threading.Lock()


def reset() -> None:
    """Forget every index (tests, and a process that closes its databases)."""
    with _GUARD:
        _INDEXES.clear()


def _index_for(conn: apsw.Connection, project: str) -> ProjectIndex | None:
    epoch = codes_epoch(conn)
    if epoch is None or not conn.filename:
        return None
    key = (conn.filename, project)
    with _GUARD:
        index = _INDEXES.get(key)
        if index is None or index.epoch != epoch:
            index = _INDEXES[key] = ProjectIndex(epoch)
    with index.lock:
        index.refresh(conn, project)
        stale = index.stale()
    if stale:  # more changed since the build than it held: start over
        index = ProjectIndex(epoch)
        with index.lock:
            index.refresh(conn, project)
        with _GUARD:
            _INDEXES[key] = index
    return index


def project_share(conn: apsw.Connection, project: str) -> float:
    """The share of the database's observations held by ``project``, as far as its index
    knows (0.0 with no index yet): vectors indexed over the highest observation id, an
    underestimate after deletions. Lets full text skip a join that filters nothing."""
    index = _INDEXES.get((conn.filename, project))
    if index is None or not index.size:
        return 0.0
    top = integer_or_none(conn.execute("SELECT MAX(id) FROM observations").fetchall()[0][0]) or 0
    return index.size / top if top else 0.0


def nearest(conn: apsw.Connection, vector: bytes, project: str, k: int,
            where: tuple[list[str], list[object]]) -> list[tuple[int, float]] | None:
    """The ``k`` nearest observations of ``project`` passing ``where`` (SQL conditions
    on ``observations AS o``), as ``(id, cosine distance)`` closest first; or None when
    the project is too small for the index (the caller runs the exact KNN)."""
    index = _index_for(conn, project)
    if index is None:
        return None
    query = np.frombuffer(vector, dtype=np.float32)
    with index.lock:
        if index.mean is None or index.size < MIN_VECTORS or query.shape[0] != len(index.mean):
            return None
        ids = index.candidates(query, max(CANDIDATES, k))
    # The codes alone (primary-key reads of small rows); the filters (project, not
    # superseded, not deleted) then run on the best few only: joining every candidate to
    # its observation row costs more than the whole scoring pass.
    rows = conn.execute(
        f"SELECT observation_id, code FROM {CODES_TABLE} WHERE observation_id IN "
        "(SELECT value FROM json_each(?)) AND code IS NOT NULL",
        (_json(ids.tolist()),)).fetchall()
    if not rows:
        return []
    codes = _codes([blob(r[1]) for r in rows]).astype(np.float32)
    norms = np.linalg.norm(codes, axis=1) * max(float(np.linalg.norm(query)), 1e-12)
    cosine = (codes @ query) / np.maximum(norms, 1e-12)
    ranked = [(int(rows[i][0]), float(1.0 - cosine[i]))
              for i in np.argsort(-cosine, kind="stable")]
    clauses, params = where
    out: list[tuple[int, float]] = []
    start, step = 0, 2 * k
    while len(out) < k and start < len(ranked):
        chunk = ranked[start:start + step]
        passing = {r[0] for r in conn.execute(
            "SELECT o.id FROM observations AS o WHERE o.id IN (SELECT value FROM json_each(?))"
            f"{''.join(' AND ' + c for c in clauses)}",
            (_json([oid for oid, _ in chunk]), *params))}
        out.extend(hit for hit in chunk if hit[0] in passing)
        start, step = start + step, step * 4
    return out[:k]


def _json(ids: Sequence[int]) -> str:
    return "[" + ",".join(str(int(i)) for i in ids) + "]"
