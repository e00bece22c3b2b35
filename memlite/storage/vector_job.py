"""The vector side of a hybrid search, run on another thread while full text runs.

Why: a hybrid search builds two independent lists, BM25 (SQLite) and the vector KNN
(waiting for the query's embedding, then numpy over the in-memory index). One after the
other they add up; SQLite and numpy both release the GIL, so on a free CPU the KNN costs
no wall time beside the full-text list (100k observations in one project: BM25 ~5 ms,
the embedding ~2 ms plus the KNN ~2-3 ms).

An apsw connection must not be used by two threads at once, so the work is cut where
SQLite is needed (``memlite.storage.vector_index``'s three steps):

1. ``start`` (the search's thread): the index brought up to date (``prepared``: two
   indexed reads, µs, or its first build), then the job submitted;
2. the job (a pool thread, no SQLite): the query's embedding awaited when it is still
   being computed (``VectorSource``), then the Hamming pass and the int8 rescoring
   (``scored``);
3. ``VectorJob.result`` (the search's thread, after full text): the embedding, why there
   is none, and the ranked candidates, which the search filters in SQL (``passing``).

Only searches the index answers from memory are split (a project of ``MIN_VECTORS``
vectors or more, no narrowing filter, codes within the budget); the others (the exact
vec0 KNN, SQL rescoring) run after full text on the search's thread, as before. The
answer is the same list either way: the same calls, in another place.

Threads: one pool per process (``WORKERS`` threads, made on demand): a job holds one
while it waits for the embedding, at most the embedder's timeout.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable

import apsw

from memlite.storage import vector_index
from memlite.storage.filters import Filters
from memlite.storage.vectors import vector_table_info

__all__ = ["VectorJob", "WORKERS", "start"]

WORKERS = 8
"""Pool threads: a reader pool's concurrent searches, each holding one while it waits
for its query's embedding."""

_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=WORKERS,
                                              thread_name_prefix="memlite-knn")

Source = Callable[[], tuple[bytes | None, str | None]]
Outcome = tuple[bytes | None, str | None, vector_index.Ranked | None]


class VectorJob:
    """A KNN under way: ``result()`` waits for ``(vector or None, why not, ranked
    candidates or None)``; the candidates are None when there is no vector or it does
    not fit the index (the caller reports why, as without a job). ``index`` is the index
    the job searches (its codes serve the fusion: ``ProjectIndex.codes_for``).

    Whichever thread first holds the query's vector scores it: the pool thread, as soon
    as the embedding arrives (while full text still runs), or the search's own thread in
    ``result()`` when the pool thread has not got that far. Why: on a busy machine a
    woken pool thread waited ~5 ms for a CPU after the embedding arrived (load ~3, 2
    CPUs), while the search's thread, its full text done, sat waiting for it. The
    answer is the same either way (the same call on the same vector); the source may
    then be called on both threads (the HTTP API's is a future's result: the same
    answer twice)."""

    __slots__ = ("index", "_source", "_dim", "_depth", "_lock", "_claimed", "future")

    def __init__(self, index: vector_index.ProjectIndex, source: Source | bytes, dim: int,
                 depth: int) -> None:
        self.index = index
        self._source = source
        self._dim = dim
        self._depth = depth
        self._lock = threading.Lock()
        self._claimed = False
        self.future: concurrent.futures.Future[Outcome | None] = _POOL.submit(self._work)

    def _claim(self) -> bool:
        with self._lock:
            if self._claimed:
                return False
            self._claimed = True
            return True

    def _vector(self) -> tuple[bytes | None, str | None]:
        source = self._source
        return source() if callable(source) else (source, None)

    def _score(self, vector: bytes | None, reason: str | None) -> Outcome:
        if vector is None or len(vector) != self._dim * 4:
            return vector, reason, None
        return vector, reason, vector_index.scored(self.index, vector, self._depth)

    def _work(self) -> Outcome | None:
        """The pool thread: the vector, then the KNN unless the search's thread took it
        (None then)."""
        vector, reason = self._vector()
        return self._score(vector, reason) if self._claim() else None

    def ready(self) -> bool:
        """True once the pool thread is through (it scored, or left the KNN to the
        search's thread): ``result()`` would not wait for the embedding or the KNN."""
        return self.future.done()

    def result(self) -> Outcome:
        if self._claim():  # the pool thread has not started scoring: score here
            vector, reason = self._vector()
            return self._score(vector, reason)
        outcome = self.future.result()
        assert outcome is not None  # claimed by the pool thread: it scored
        return outcome


def start(conn: apsw.Connection, query_vector: bytes | Source, filters: Filters,
          depth: int) -> VectorJob | None:
    """The KNN of ``depth`` candidates started on a pool thread, or None when the index
    cannot answer it from memory (the caller runs the KNN itself, after full text)."""
    if filters.narrows:
        return None
    info = vector_table_info(conn)
    if info is None:
        return None
    dim = info[0]
    index = vector_index.prepared(conn, filters.project, dim)
    if index is None:
        return None
    return VectorJob(index, query_vector, dim, depth)
