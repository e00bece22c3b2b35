"""Building the in-memory vector indexes (``memlite.storage.vector_index``) before a
search asks: what the worker starts when it starts (``warm_soon``).

Why: an index is otherwise built by the first search that needs it, inside that search
(~0.5 s of CPU at 100,000 observations). After an idle shutdown, the first search of a
session was then the slow one.
"""

from __future__ import annotations

import logging
import threading
import time

import apsw

from memlite.heap import release_free_memory
from memlite.storage import vector_index
from memlite.storage.db import connect
from memlite.storage.sqlvalue import integer
from memlite.storage.vector_codes import CODES_TABLE, codes_epoch

__all__ = ["warm", "warm_soon"]

log = logging.getLogger(__name__)


def warm(conn: apsw.Connection) -> list[str | None]:
    """Build now the indexes the first searches use: the whole database's (a search with
    no project filter) and the one of the project written to last (the session that
    started the worker is most likely there), each when it has at least
    ``vector_index.MIN_VECTORS`` vectors; returns the scopes built (None: the whole
    database's).

    The first hybrid search 3 s after a worker start took 0.7-1.1 s at 100,000
    observations and 50-70 ms at 10,000 when it built the index itself, where the next
    took 7-16 ms (BENCHMARKS.md, "First search after a worker start"). A search arriving
    during this build waits for it (the index's lock) instead of starting its own. The
    memory is what those searches would hold anyway; a database of one project holds one
    index for both (``vector_index.index_scope``). The vectors counted include deletions'
    tombstones: an index built on a few too many says itself that it cannot answer."""
    if codes_epoch(conn) is None or not conn.filename:
        return []
    newest = conn.execute(f"SELECT project FROM {CODES_TABLE} ORDER BY seq DESC LIMIT 1"
                          ).fetchall()
    built: list[str | None] = []
    for project in dict.fromkeys([None, *(str(r[0]) for r in newest)]):
        scope = vector_index.index_scope(conn, project)
        where, args = ("WHERE project = ?", (project,)) if project is not None else ("", ())
        vectors = integer(conn.execute(f"SELECT COUNT(*) FROM {CODES_TABLE} {where}",
                                       args).fetchall()[0][0])
        if vectors < vector_index.MIN_VECTORS or scope in built:
            continue
        if vector_index.index_for(conn, project) is not None:
            built.append(scope)
    return built


def warm_soon(conn: apsw.Connection) -> bool:
    """Start ``warm`` for ``conn``'s database on a thread of its own, with its own
    read-only connection: the worker's start waits for none of it (the spool's drain and
    the pool's readers are free meanwhile). True when started: not for a database without
    ``vector_index.MIN_VECTORS`` vectors."""
    filename = conn.filename
    if not filename or codes_epoch(conn) is None or integer(conn.execute(
            f"SELECT COUNT(*) FROM {CODES_TABLE}").fetchall()[0][0]) < vector_index.MIN_VECTORS:
        return False  # no vectors, or too few for an index: no thread, no connection
    threading.Thread(target=_warm, args=(filename,), name="memlite-vector-warm",
                     daemon=True).start()
    return True


def _warm(filename: str) -> None:
    try:
        started = time.monotonic()
        conn = connect(filename, writer=False)
        try:
            built = warm(conn)
        finally:
            conn.close()
        if built:
            release_free_memory()  # the codes read as bytes, freed once packed
            log.info("vector index built for %s in %.1f s", ", ".join(
                "every project" if scope is None else scope for scope in built),
                time.monotonic() - started)
    except Exception:  # a search never depends on it: the first one builds the index
        log.exception("the vector indexes could not be built at start")
