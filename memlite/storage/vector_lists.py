"""The vector list of a search: the KNN's neighbours of the query, filtered, over a floor.

:mod:`memlite.storage.search` fuses it with the full-text list (``fts_lists.py``). Small
projects (and filtered searches) run sqlite-vec's exact KNN; large ones the in-memory
sign-bit index (``vector_index.py``).
"""

from __future__ import annotations

from typing import Any

import apsw

from memlite.storage import vector_index
from memlite.storage.filters import Filters, json_ids, passing
from memlite.storage.fts_lists import Listed
from memlite.storage.sqlvalue import integer, real
from memlite.storage.vectors import VECTOR_TABLE, vector_table_info

__all__ = ["FILTERED_SCAN_LIMIT", "MAX_CANDIDATES", "under_floor", "vector_list",
           "vectors_usable"]

MAX_CANDIDATES = 4096  # sqlite-vec's own limit on k
FILTERED_SCAN_LIMIT = 50_000
"""A filtered semantic search restricts the KNN to the ids the filters allow when there
are at most this many; past that it over-fetches neighbours and filters them."""


def _allowed_ids(conn: apsw.Connection, filters: Filters) -> list[int] | None:
    """The ids the filters allow, or None when there are too many to list."""
    clauses, params = filters.where("o")
    rows = conn.execute(
        f"SELECT o.id FROM observations AS o WHERE {' AND '.join(clauses) or '1'} LIMIT ?",
        (*params, FILTERED_SCAN_LIMIT + 1)).fetchall()
    if len(rows) > FILTERED_SCAN_LIMIT:
        return None
    return [integer(r[0]) for r in rows]


def vector_list(conn: apsw.Connection, vector: bytes, filters: Filters,
                depth: int, floor: float,
                scored: vector_index.Ranked | None = None, *,
                free_ranks: int = 0, free_floor: float = 0.0) -> Listed:
    """The KNN's matches at or above ``floor``; ``scored``: the candidates a
    ``vector_job`` already ranked (then only the filters are checked here).

    The first ``free_ranks`` neighbours need only ``free_floor`` (``hybrid``: see
    ``fusion.Fusion.vector_free_ranks``)."""
    found = _neighbours(conn, vector, filters, depth) if scored is None \
        else vector_index.passing(conn, scored, depth, filters)
    kept = [(oid, distance) for rank, (oid, distance) in enumerate(found)
            if 1.0 - distance >= (free_floor if rank < free_ranks else floor)]
    return Listed([oid for oid, _ in kept], dict(kept))


def under_floor(vec: Listed, floor: float) -> dict[int, float]:
    """``id -> cosine / floor`` of the vector list's neighbours under ``floor`` (let in
    by ``Fusion.vector_free_ranks``): how much of a full vote each gets in the fusion."""
    return {oid: max(0.0, 1.0 - distance) / floor for oid, distance in vec.measure.items()
            if floor > 0 and 1.0 - distance < floor}


def _neighbours(conn: apsw.Connection, vector: bytes, filters: Filters,
                depth: int) -> list[tuple[int, float]]:
    partition = "AND project = ? " if filters.project is not None else ""
    base: list[Any] = [vector]
    tail: list[Any] = [filters.project] if filters.project is not None else []
    if filters.narrows:
        allowed = _allowed_ids(conn, filters)
        if allowed is not None:
            if not allowed:
                return []
            # The KNN runs over exactly the allowed ids (vec0 takes a rowid IN list).
            rows = conn.execute(
                f"SELECT observation_id, distance FROM {VECTOR_TABLE} "
                f"WHERE embedding MATCH ? AND k = ? {partition}"
                "AND observation_id IN (SELECT value FROM json_each(?)) ORDER BY distance",
                (*base, min(depth, MAX_CANDIDATES), *tail, json_ids(allowed))).fetchall()
            return [(integer(r[0]), real(r[1])) for r in rows]
    if not filters.narrows:
        # A large project (or, with no project filter, a large database): the in-memory
        # sign-bit index with exact rescoring (ms, not tens of ms); None for a small one,
        # where the exact KNN below is cheap.
        found = vector_index.nearest(conn, vector, filters.project, depth,
                                     filters.where("o"))
        if found is not None:
            return found
    # Over-fetch, then drop what the filters (or supersession) rule out.
    fetch = min(MAX_CANDIDATES, depth * (8 if filters.narrows else 2))
    rows = conn.execute(
        f"SELECT observation_id, distance FROM {VECTOR_TABLE} "
        f"WHERE embedding MATCH ? AND k = ? {partition}ORDER BY distance",
        (*base, fetch, *tail)).fetchall()
    found = [(integer(r[0]), real(r[1])) for r in rows]
    keep = passing(conn, [oid for oid, _ in found], filters)
    return [hit for hit in found if hit[0] in keep][:depth]


def vectors_usable(conn: apsw.Connection, vector: bytes | None) -> tuple[str | None, str]:
    """``(None, model)`` when a KNN can run, else ``(why not, "")`` (for the note)."""
    if vector is None:
        return "no embedding model is loaded", ""
    info = vector_table_info(conn)
    if info is None:
        return "no vectors are stored yet", ""
    dim, model = info
    if len(vector) != dim * 4:
        return (f"the query embedding has {len(vector) // 4} dimensions but the stored "
                f"vectors ({model}) have {dim}; a reindex is pending"), ""
    # sqlite-vec reads every vector to answer "SELECT 1 FROM <vec0> LIMIT 1" (14 ms at
    # 100k); its rowid shadow table answers the same question in microseconds.
    if not conn.execute(f"SELECT 1 FROM {VECTOR_TABLE}_rowids LIMIT 1").fetchall():
        return "no vectors are stored yet", ""
    return None, model
