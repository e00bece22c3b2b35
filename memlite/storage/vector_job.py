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
from collections.abc import Callable

import apsw
import attrs

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


@attrs.frozen
class VectorJob:
    """A KNN under way: ``result()`` waits for ``(vector or None, why not, ranked
    candidates or None)``; the candidates are None when there is no vector or it does
    not fit the index (the caller reports why, as without a job). ``index`` is the index
    the job searches (its codes serve the fusion: ``ProjectIndex.codes_for``)."""

    future: concurrent.futures.Future[Outcome]
    index: vector_index.ProjectIndex

    def result(self) -> Outcome:
        return self.future.result()


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

    def work() -> Outcome:
        vector, reason = query_vector() if callable(query_vector) else (query_vector, None)
        if vector is None or len(vector) != dim * 4:
            return vector, reason, None
        return vector, reason, vector_index.scored(index, vector, depth)

    return VectorJob(_POOL.submit(work), index)
