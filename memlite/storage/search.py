"""The search engine over observations: full text, vectors, and the two fused.

One sync call, run on a reader connection, answers one search (the HTTP API, the MCP
tools through it, and the dashboard all use it)::

    outcome = search(conn, "why were users billed twice", mode="hybrid",
                     filters=Filters(project="/src/billing"), query_vector=vec, limit=10)

Modes
    ``fts``       BM25 over title, subtitle, narrative, facts, concepts and files (FTS5,
                  user text quoted token by token: ``memlite.storage.fts``).
    ``semantic``  cosine nearest neighbours of ``query_vector`` in the sqlite-vec table
                  (partitioned by project, so a project filter is a partition scan).
    ``hybrid``    both lists fused by weighted reciprocal rank (see ``Fusion``).

With no query vector (no embedder, or a model change waiting for its reindex) or no
vectors stored, ``semantic`` and ``hybrid`` answer with full text and say so in
``mode_used`` and ``note``: vectors being off never empties a search.

Filters (``Filters``) apply to both lists, inside SQL: project, types, a date range on
``created_at``, a file path (a substring of any path read or modified), a session.
Superseded observations (a rules observation replaced by the AI's) are left out unless
asked for.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import apsw
import attrs

from memlite.storage.fts import OBSERVATION_WEIGHTS, fts_query, query_terms
from memlite.storage.reads import get_observations
from memlite.storage.records import Observation
from memlite.storage.vectors import VECTOR_TABLE, vector_table_info

__all__ = [
    "DEFAULT_FUSION",
    "Filters",
    "Fusion",
    "MODES",
    "RELEVANCE_FLOOR",
    "RankedHit",
    "SearchOutcome",
    "fuse",
    "search",
]

MODES = ("fts", "semantic", "hybrid")
RELEVANCE_FLOOR = {"minilm-l6-v2-int8": 0.2, "wordllama-l2supercat-256": 0.2}
"""Cosine similarity below which a neighbour is not a match, by model. A KNN always
returns k neighbours, however unrelated; without a floor "parser" would list "renamed
the greeting helper". Calibrated on the retrieval eval (unrelated pairs score about
0.0-0.15 with both models, relevant ones 0.3 and up); other models (Ollama) get none."""
MAX_CANDIDATES = 4096  # sqlite-vec's own limit on k
FILTERED_SCAN_LIMIT = 50_000
"""A filtered semantic search restricts the KNN to the ids the filters allow when there
are at most this many; past that it over-fetches neighbours and filters them."""


@attrs.frozen(kw_only=True)
class Filters:
    """What a search may return. Every field is optional; they combine with AND.

    Attributes:
        project: the project's identity (its root path), exactly as stored.
        types: observation types (any of them).
        since_ms / until_ms: ``created_at`` bounds in epoch ms, both inclusive.
        file: a path or part of one; matches observations that read or modified a file
            whose path contains it (``invoice.py`` finds ``src/billing/invoice.py``).
        session_id: one Claude Code session.
        include_superseded: also return observations another one replaced.
    """

    project: str | None = None
    types: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    since_ms: int | None = None
    until_ms: int | None = None
    file: str | None = None
    session_id: str | None = None
    include_superseded: bool = False

    @property
    def narrows(self) -> bool:
        """True when something besides the project restricts the rows."""
        return bool(self.types or self.since_ms is not None or self.until_ms is not None
                    or self.file or self.session_id)

    def where(self, alias: str = "o") -> tuple[list[str], list[Any]]:
        """SQL conditions on ``observations AS alias`` and their parameters."""
        clauses: list[str] = []
        params: list[Any] = []
        if self.project is not None:
            clauses.append(f"{alias}.project = ?")
            params.append(self.project)
        if self.types:
            clauses.append(f"{alias}.type IN ({', '.join('?' * len(self.types))})")
            params.extend(self.types)
        if self.since_ms is not None:
            clauses.append(f"{alias}.created_at_epoch >= ?")
            params.append(self.since_ms)
        if self.until_ms is not None:
            clauses.append(f"{alias}.created_at_epoch <= ?")
            params.append(self.until_ms)
        if self.session_id is not None:
            clauses.append(f"{alias}.session_id = ?")
            params.append(self.session_id)
        if self.file:
            clauses.append(
                f"EXISTS (SELECT 1 FROM json_each({alias}.files_modified) WHERE instr(value, ?)"
                f" UNION ALL SELECT 1 FROM json_each({alias}.files_read) WHERE instr(value, ?))")
            params.extend((self.file, self.file))
        if not self.include_superseded:
            clauses.append(f"{alias}.superseded_by IS NULL")
        return clauses, params


@attrs.frozen(kw_only=True)
class Fusion:
    """How ``hybrid`` merges the BM25 list and the vector list.

    Each list gives a document ``weight / (k + rank)`` (rank from 1); the sums order the
    result. ``partial_fts_weight`` replaces ``fts_weight`` when full text found no
    observation holding every query term and fell back to matching any of them (STACK.md
    §7 saw such a list drag a good vector list down on paraphrased questions).
    ``recency_weight`` adds a third list, the candidates newest first, so that of two
    equally good matches the later one (the decision as it stands now) comes first.

    The defaults were chosen on the dev half of the retrieval eval (``bench/eval``,
    ``python -m bench.eval.run --tune``) as the best mean over both local models: a
    small k (10) trusts each list's top ranks; discounting the any-term BM25 list did
    not help on our set (its keyword lists are good), so it keeps full weight; a light
    recency list (0.1) helped the "what did we end up doing" questions a little without
    costing the others. Differences between the top settings were one or two queries.
    """

    k: float = 10.0
    fts_weight: float = 1.0
    partial_fts_weight: float = 1.0
    vector_weight: float = 1.0
    recency_weight: float = 0.1
    depth: int = 50  # how many of each list take part


DEFAULT_FUSION = Fusion()


@attrs.frozen(kw_only=True)
class RankedHit:
    """One result. ``score`` orders the results (higher is better, whatever the mode);
    ``bm25`` (lower is better, as SQLite reports it) and ``distance`` (cosine distance)
    are each list's own measure, None when that list did not find it."""

    observation: Observation
    score: float
    fts_rank: int | None = None
    bm25: float | None = None
    vector_rank: int | None = None
    distance: float | None = None


@attrs.frozen(kw_only=True)
class SearchOutcome:
    """The results, best first, and what was actually done to find them."""

    hits: list[RankedHit]
    mode: str
    mode_used: str
    note: str | None = None


# ---------------------------------------------------------------------------------------
# The two lists
# ---------------------------------------------------------------------------------------


@attrs.frozen
class _Listed:
    ids: list[int]
    measure: dict[int, float]
    complete: bool = True  # full text: every term matched (not the any-term fallback)


def _fts_list(conn: apsw.Connection, text: str, filters: Filters, depth: int) -> _Listed:
    clauses, params = filters.where("o")
    # Within one project, the (project, superseded_by) index tells which matches count
    # without reading each row; SQLite does not always pick it by itself (1M rows).
    hint = " INDEXED BY observations_project_live" if filters.project is not None else ""
    sql = (
        f"SELECT o.id, bm25(observations_fts, {OBSERVATION_WEIGHTS}) AS score "
        f"FROM observations_fts JOIN observations AS o{hint} "
        "ON o.id = observations_fts.rowid "
        f"WHERE {' AND '.join(['observations_fts MATCH ?', *clauses])} "
        "ORDER BY score LIMIT ?"
    )
    for any_term in (False, True):
        query = fts_query(text, any_term=any_term)
        if query is None:
            break
        rows = conn.execute(sql, (query, *params, depth)).fetchall()
        if rows or len(query_terms(text)) < 2:
            return _Listed([r[0] for r in rows], {r[0]: r[1] for r in rows},
                           complete=not any_term)
    return _Listed([], {})


def _allowed_ids(conn: apsw.Connection, filters: Filters) -> list[int] | None:
    """The ids the filters allow, or None when there are too many to list."""
    clauses, params = filters.where("o")
    rows = conn.execute(
        f"SELECT o.id FROM observations AS o WHERE {' AND '.join(clauses) or '1'} LIMIT ?",
        (*params, FILTERED_SCAN_LIMIT + 1)).fetchall()
    if len(rows) > FILTERED_SCAN_LIMIT:
        return None
    return [r[0] for r in rows]


def _vector_list(conn: apsw.Connection, vector: bytes, filters: Filters,
                 depth: int, floor: float) -> _Listed:
    found = _neighbours(conn, vector, filters, depth)
    kept = [(oid, distance) for oid, distance in found if 1.0 - distance >= floor]
    return _Listed([oid for oid, _ in kept], dict(kept))


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
                (*base, min(depth, MAX_CANDIDATES), *tail, _json_ids(allowed))).fetchall()
            return [(r[0], r[1]) for r in rows]
    # Over-fetch, then drop what the filters (or supersession) rule out.
    fetch = min(MAX_CANDIDATES, depth * (8 if filters.narrows else 2))
    rows = conn.execute(
        f"SELECT observation_id, distance FROM {VECTOR_TABLE} "
        f"WHERE embedding MATCH ? AND k = ? {partition}ORDER BY distance",
        (*base, fetch, *tail)).fetchall()
    keep = _passing(conn, [r[0] for r in rows], filters)
    return [(r[0], r[1]) for r in rows if r[0] in keep][:depth]


def _json_ids(ids: Sequence[int]) -> str:
    return "[" + ",".join(str(int(i)) for i in ids) + "]"


def _passing(conn: apsw.Connection, ids: Sequence[int], filters: Filters) -> set[int]:
    if not ids:
        return set()
    clauses, params = filters.where("o")
    sql = (f"SELECT o.id FROM observations AS o WHERE o.id IN "
           f"(SELECT value FROM json_each(?)) {''.join(' AND ' + c for c in clauses)}")
    return {r[0] for r in conn.execute(sql, (_json_ids(ids), *params))}


def _vectors_usable(conn: apsw.Connection, vector: bytes | None) -> tuple[str | None, str]:
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


# ---------------------------------------------------------------------------------------
# Fusion
# ---------------------------------------------------------------------------------------


def fuse(fts_ids: Sequence[int], vector_ids: Sequence[int], *, fusion: Fusion = DEFAULT_FUSION,
         fts_complete: bool = True, newest_first: Sequence[int] = ()) -> list[tuple[int, float]]:
    """Weighted reciprocal-rank fusion: ``[(id, score)]``, best first (ties: lower id).

    ``newest_first`` (the candidates by time, newest first) is a third list, weighted
    ``recency_weight``: among equally good matches the newer one wins.
    """
    scores: dict[int, float] = {}
    fts_weight = fusion.fts_weight if fts_complete else fusion.partial_fts_weight
    for weight, ids in ((fts_weight, fts_ids), (fusion.vector_weight, vector_ids)):
        for rank, oid in enumerate(ids[:fusion.depth], start=1):
            scores[oid] = scores.get(oid, 0.0) + weight / (fusion.k + rank)
    if fusion.recency_weight:
        for rank, oid in enumerate(newest_first, start=1):
            if oid in scores:
                scores[oid] += fusion.recency_weight / (fusion.k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def _newest_first(conn: apsw.Connection, ids: Sequence[int]) -> list[int]:
    rows = conn.execute(
        "SELECT id FROM observations WHERE id IN (SELECT value FROM json_each(?)) "
        "ORDER BY created_at_epoch DESC, id DESC", (_json_ids(ids),))
    return [r[0] for r in rows]


# ---------------------------------------------------------------------------------------
# The entry point
# ---------------------------------------------------------------------------------------


def search(conn: apsw.Connection, text: str, *, mode: str = "hybrid",
           filters: Filters = Filters(), query_vector: bytes | None = None, limit: int = 20,
           fusion: Fusion = DEFAULT_FUSION, no_vector_reason: str | None = None,
           ) -> SearchOutcome:
    """Search observations; see the module docstring.

    ``no_vector_reason`` says why ``query_vector`` is None (for the note), when the caller
    knows better than "no embedding model is loaded" (still loading, timed out...).

    Raises:
        ValueError: ``mode`` is not one of ``MODES`` or ``limit`` is below 1.
    """
    if mode not in MODES:
        raise ValueError(f"search mode must be one of {', '.join(MODES)}, not {mode!r}")
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")
    depth = max(limit, fusion.depth)
    note: str | None = None
    model = ""
    use_vectors = mode != "fts"
    if use_vectors:
        reason, model = _vectors_usable(conn, query_vector)
        if query_vector is None and no_vector_reason:
            reason = no_vector_reason
        if reason is not None:
            use_vectors = False
            note = f"{mode} search answered with full text (BM25): {reason}"
    fts = _fts_list(conn, text, filters, depth) if mode != "semantic" or not use_vectors \
        else _Listed([], {})
    vec = _Listed([], {})
    if use_vectors and query_vector is not None:
        vec = _vector_list(conn, query_vector, filters, depth, RELEVANCE_FLOOR.get(model, 0.0))
    if not use_vectors:
        mode_used = "fts"
        ranked = [(oid, -fts.measure[oid]) for oid in fts.ids]
    elif mode == "semantic":
        mode_used = "semantic"
        ranked = [(oid, 1.0 - vec.measure[oid]) for oid in vec.ids]
    else:
        mode_used = "hybrid"
        newest = (_newest_first(conn, list(dict.fromkeys([*fts.ids, *vec.ids])))
                  if fusion.recency_weight else ())
        ranked = fuse(fts.ids, vec.ids, fusion=fusion, fts_complete=fts.complete,
                      newest_first=newest)
    ranked = ranked[:limit]
    by_id = {obs.id: obs for obs in get_observations(conn, [oid for oid, _ in ranked])}
    fts_rank = {oid: i for i, oid in enumerate(fts.ids, start=1)}
    vec_rank = {oid: i for i, oid in enumerate(vec.ids, start=1)}
    hits = [
        RankedHit(observation=by_id[oid], score=_finite(score), fts_rank=fts_rank.get(oid),
                  bm25=fts.measure.get(oid), vector_rank=vec_rank.get(oid),
                  distance=vec.measure.get(oid))
        for oid, score in ranked if oid in by_id
    ]
    return SearchOutcome(hits=hits, mode=mode, mode_used=mode_used, note=note)


def _finite(value: float) -> float:
    return value if math.isfinite(value) else 0.0

