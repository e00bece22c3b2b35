"""The search engine over observations: full text, vectors, and the two fused.

One sync call, run on a reader connection, answers one search (the HTTP API, the MCP
tools through it, and the dashboard all use it)::

    outcome = search(conn, "why were users billed twice", mode="hybrid",
                     filters=Filters(project="/src/billing"), query_vector=vec, limit=10)

``search`` returns each hit with its observation read; ``rank`` (the same arguments)
returns the ids and scores alone, for a caller that reads only some columns of each (the
HTTP API's answers: ``memlite.http.queries``).

Modes
    ``fts``       BM25 over title, subtitle, narrative, facts, concepts and files (FTS5,
                  user text quoted token by token: ``memlite.storage.fts``). Any of the
                  query's terms may match; BM25 ranks the documents holding more (and
                  rarer) terms first, so partial matches come after full ones instead of
                  an all-words query that finds nothing on a paraphrase.
    ``semantic``  cosine nearest neighbours of ``query_vector`` in the sqlite-vec table
                  (partitioned by project, so a project filter is a partition scan), at
                  or above the model's relevance floor. A project of 4,000 vectors or
                  more (or, with no project filter, a database of as many) is searched
                  with an in-memory sign-bit index and int8 rescoring of its candidates
                  (``memlite.storage.vector_index``).
    ``hybrid``    the default: both lists fused by weighted reciprocal rank, plus what
                  the query says besides its words (``memlite.storage.query``): a file
                  path is matched exactly against ``files_read`` / ``files_modified``
                  (the asked role first), and a temporal query ("current", "latest",
                  "what did we decide") favours the newest of the similar matches (see
                  ``memlite.storage.fusion``). ``fts`` and ``semantic`` stay each list
                  alone, so that they can be measured against it. When the in-memory
                  index answers the KNN, it runs on a pool thread (after the query's
                  embedding, when that is still being computed) while this thread builds
                  the full-text list (``memlite.storage.vector_job``): same answer, the
                  two lists' times overlap instead of adding up.

With no query vector (no embedder, or a model change waiting for its reindex) or no
vectors stored, ``semantic`` and ``hybrid`` answer with full text and say so in
``mode_used`` and ``note``: vectors being off never empties a search.

Filters (``Filters``) apply to both lists, inside SQL: project, types, a date range on
``created_at``, a file path (a substring of any path read or modified), a session.
Superseded observations (a rules observation replaced by the AI's, an older decision
replaced by a newer one) are left out unless asked for; when shown, one never ranks above
the observation that replaced it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Mapping, Sequence

import apsw
import attrs
import numpy as np

from memlite.storage import vector_index, vector_job
from memlite.storage.filters import Filters, json_ids
from memlite.storage.followup import with_next_in_session
from memlite.storage.fts_lists import Listed, fts_list
from memlite.storage.fusion import (
    DEFAULT_FUSION,
    Fusion,
    admit_followup,
    diversify,
    favour_newest,
    fuse,
)
from memlite.storage.query import (
    QueryIntent,
    analyse,
    path_matches,
    project_words,
)
from memlite.storage.reads import get_observations
from memlite.storage.records import Observation, decode_list
from memlite.storage.search_after import current_in_place, superseded_last, that_day_first
from memlite.storage.sqlvalue import integer, text_or_none
from memlite.storage.vector_codes import CODES_TABLE
from memlite.storage.vector_lists import under_floor, vector_list, vectors_usable

__all__ = [
    "DEFAULT_FUSION",
    "Filters",
    "Fusion",
    "MODES",
    "RELEVANCE_FLOOR",
    "RankedHit",
    "Ranking",
    "SearchOutcome",
    "VectorSource",
    "fuse",
    "rank",
    "search",
]

MODES = ("fts", "semantic", "hybrid")
RELEVANCE_FLOOR = {"minilm-l6-v2-int8": 0.25, "minilm-l6-v2-dynint8": 0.25,
                   "wordllama-l2supercat-256": 0.2}
"""Cosine similarity below which a neighbour is not a match, by model. A KNN always
returns k neighbours, however unrelated; without a floor "parser" would list "renamed
the greeting helper". Calibrated per model on the dev halves (``python -m
bench.eval.tune --floors-only``): the floor keeps the relevant top-10 neighbours of 99%
of the dev questions of both sets. MiniLM's (int8 copy and shipped file alike) score
>= 0.27 on the own eval's dev half (>= 0.49 on LoCoMo's): 0.25; wordllama's >= 0.21
(>= 0.39): 0.2. Other models (Ollama) get none. ``hybrid`` lets its first ten neighbours
through down to a share of it when full text matched (``fusion.Fusion.vector_free_ranks``)."""


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
class Ranking:
    """A search's answer before any record is read (``rank``): ``ranked`` holds
    ``(id, score)`` best first, at most ``limit``; the other maps are each list's rank
    (1 = first) and measure of the ids it found (``RankedHit``'s fields)."""

    ranked: list[tuple[int, float]]
    fts_rank: Mapping[int, int]
    bm25: Mapping[int, float]
    vector_rank: Mapping[int, int]
    distance: Mapping[int, float]
    mode: str
    mode_used: str
    note: str | None = None

    @property
    def ids(self) -> list[int]:
        return [oid for oid, _ in self.ranked]


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


FILE_CANDIDATES = 2_000
"""Rows whose indexed file names hold a path's words, checked for an exact path match."""


def _file_lists(conn: apsw.Connection, intent: QueryIntent, filters: Filters,
                depth: int) -> tuple[list[int], list[int]]:
    """Observations holding a file the query names exactly, newest first: (in the asked
    role, in the other one only). With no role asked, all are in the first list.

    Superseded ones are listed too when a later session replaced them ("what did we
    change in locks.py" asks for the file's history, the reverted decision included; the
    rules observation an AI one of the same session replaced is a twin, not history).
    Only this list holds them, so their fused score is the file's alone; their
    replacement, when it names the file too, is listed before them (newer) and found by
    the other lists as well."""
    if not intent.paths:
        return [], []
    clauses, params = attrs.evolve(filters, include_superseded=True).where("o")
    if not filters.include_superseded:  # history yes; an AI note's rules twin no
        clauses.append("(o.superseded_by IS NULL OR o.session_id != (SELECT r.session_id "
                       "FROM observations AS r WHERE r.id = o.superseded_by))")
    # The FTS index finds the rows whose file names hold the path's words as a phrase;
    # the exact check then runs on those few rows only.
    phrase = " OR ".join('files : "' + p.replace('"', '""') + '"' for p in intent.paths)
    sql = (
        "SELECT o.id, o.files_read, o.files_modified FROM observations_fts "
        "JOIN observations AS o ON o.id = observations_fts.rowid "
        f"WHERE {' AND '.join(['observations_fts MATCH ?', *clauses])} "
        "ORDER BY o.created_at_epoch DESC, o.id DESC LIMIT ?"
    )
    try:
        rows = conn.execute(sql, (phrase, *params, FILE_CANDIDATES)).fetchall()
    except apsw.SQLError:  # a path of nothing but punctuation: no phrase to match
        return [], []
    first: list[int] = []
    other: list[int] = []
    for oid, read_json, modified_json in rows:
        read = any(path_matches(f, p) for f in decode_list(text_or_none(read_json))
                   for p in intent.paths)
        modified = any(path_matches(f, p) for f in decode_list(text_or_none(modified_json))
                       for p in intent.paths)
        if not (read or modified):
            continue
        wanted = {"modified": modified, "read": read}.get(intent.file_role or "", True)
        (first if wanted else other).append(integer(oid))
    return first[:depth], other[:depth]


# ---------------------------------------------------------------------------------------
# Fusion
# ---------------------------------------------------------------------------------------


def _newest_first(conn: apsw.Connection, ids: Sequence[int]) -> list[int]:
    rows = conn.execute(
        "SELECT id FROM observations WHERE id IN (SELECT value FROM json_each(?)) "
        "ORDER BY created_at_epoch DESC, id DESC", (json_ids(ids),))
    return [r[0] for r in rows]


# ---------------------------------------------------------------------------------------
# The entry point
# ---------------------------------------------------------------------------------------


VectorSource = Callable[[], tuple[bytes | None, str | None]]
"""A query embedding still being computed: called when the search needs it, it returns
``(vector or None, why not)``, waiting for it if need be (see ``search``)."""


def search(conn: apsw.Connection, text: str, *, mode: str = "hybrid",
           filters: Filters = Filters(), query_vector: bytes | VectorSource | None = None,
           limit: int = 20, fusion: Fusion = DEFAULT_FUSION,
           no_vector_reason: str | None = None) -> SearchOutcome:
    """Search observations; see the module docstring and ``rank`` (the same arguments):
    ``rank``'s answer with each hit's observation read (a hit whose row was deleted
    meanwhile is left out)."""
    found = rank(conn, text, mode=mode, filters=filters, query_vector=query_vector,
                 limit=limit, fusion=fusion, no_vector_reason=no_vector_reason)
    by_id = {obs.id: obs for obs in get_observations(conn, found.ids)}
    hits = [
        RankedHit(observation=by_id[oid], score=score, fts_rank=found.fts_rank.get(oid),
                  bm25=found.bm25.get(oid), vector_rank=found.vector_rank.get(oid),
                  distance=found.distance.get(oid))
        for oid, score in found.ranked if oid in by_id
    ]
    return SearchOutcome(hits=hits, mode=found.mode, mode_used=found.mode_used,
                         note=found.note)


def rank(conn: apsw.Connection, text: str, *, mode: str = "hybrid",
         filters: Filters = Filters(), query_vector: bytes | VectorSource | None = None,
         limit: int = 20, fusion: Fusion = DEFAULT_FUSION,
         no_vector_reason: str | None = None) -> Ranking:
    """The search's answer as ids and scores, best first, no observation read: what
    ``search`` reads the records of, and what a caller wanting a few columns of each
    (the compact index, ``memlite.http.queries.index``) reads itself.

    ``no_vector_reason`` says why ``query_vector`` is None (for the note), when the caller
    knows better than "no embedding model is loaded" (still loading, timed out...).

    ``query_vector`` may be a ``VectorSource``, so that the caller can embed the query
    on another thread while full text runs (the HTTP API does: MiniLM takes ~3 ms, the
    BM25 list as long at 100k observations). In ``hybrid`` mode, when the in-memory index
    answers the KNN (a large project, no narrowing filter), the source is awaited and the
    KNN run on a pool thread while this one builds the full-text list
    (``memlite.storage.vector_job``); otherwise the source is called after full text.

    Raises:
        ValueError: ``mode`` is not one of ``MODES`` or ``limit`` is below 1.
    """
    if mode not in MODES:
        raise ValueError(f"search mode must be one of {', '.join(MODES)}, not {mode!r}")
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")
    depth = max(limit, fusion.depth)
    if mode == "fts" and not filters.include_superseded:
        # The list is the answer: its top ``limit`` is all that is shown (deeper lists
        # feed the fusion, and ``search_after.superseded_last``, which may move a hit below one
        # found further down). At 10,000 observations: 1.4 ms instead of 1.7.
        depth = limit
    intent = analyse(text, framing=project_words(filters.project)) if mode == "hybrid" \
        else QueryIntent(text)
    fts: Listed | None = None
    job: vector_job.VectorJob | None = None
    scored: vector_index.Ranked | None = None
    # Hybrid lists see superseded rows too; each one found stands for its replacement
    # (``search_after.current_in_place``): the old decision often shares the query's
    # words, the new one not.
    resolve = mode == "hybrid" and not filters.include_superseded
    seen_by_lists = attrs.evolve(filters, include_superseded=True) if resolve else filters
    if mode == "hybrid":  # needs no vector: runs while the query is being embedded
        if query_vector is not None:  # and the KNN meanwhile, when the index allows
            job = vector_job.start(conn, query_vector, seen_by_lists, depth)
        fts = fts_list(conn, intent.text, seen_by_lists, depth, coverage=True)
    # The fusion's facts of the full-text hits whose rows the coverage read (with them).
    early: dict[int, tuple[int, str, str]] = dict(fts.facts) if fts is not None else {}
    files_listed: tuple[list[int], list[int]] | None = None
    if job is not None:
        assert fts is not None  # a job is started in hybrid mode, after which full text ran
        if not job.ready():
            # What needs no vector, read while the query is still being embedded or the
            # pool thread is still scoring: this wait then costs no wall time (otherwise
            # it is read in one go, below). Before, only while the pool thread scored:
            # with the embedding not there yet, the search's thread sat idle and read
            # these after the KNN (the usual case once full text took less than the
            # embedding and the KNN).
            files_listed = _file_lists(conn, intent, filters, depth)
            early.update(_facts(conn, [oid for oid in dict.fromkeys(
                [*fts.ids, *files_listed[0], *files_listed[1]]) if oid not in early]))
        query_vector, reason_given, scored = job.result()
        no_vector_reason = no_vector_reason or reason_given
    elif callable(query_vector):
        query_vector, reason_given = query_vector()
        no_vector_reason = no_vector_reason or reason_given
    note: str | None = None
    model = ""
    use_vectors = mode != "fts"
    if use_vectors:
        reason, model = vectors_usable(conn, query_vector)
        if query_vector is None and no_vector_reason:
            reason = no_vector_reason
        if reason is not None:
            use_vectors = False
            note = f"{mode} search answered with full text (BM25): {reason}"
    if fts is None:
        fts = fts_list(conn, intent.text, filters, depth) \
            if mode != "semantic" or not use_vectors else Listed([], {})
    vec = Listed([], {})
    if use_vectors and query_vector is not None:
        floor = RELEVANCE_FLOOR.get(model, 0.0)
        free = fusion.vector_free_ranks if mode == "hybrid" and fts.ids else 0
        vec = vector_list(conn, query_vector, seen_by_lists, depth, floor, scored,
                           free_ranks=free, free_floor=floor * fusion.vector_free_floor)
    if mode == "hybrid":
        mode_used = "hybrid" if use_vectors else "fts"
        files, other_files = files_listed if files_listed is not None \
            else _file_lists(conn, intent, filters, depth)
        candidates = list(dict.fromkeys([*fts.ids, *vec.ids, *files, *other_files]))
        vec_share = under_floor(vec, RELEVANCE_FLOOR.get(model, 0.0))
        facts = {**early, **_facts(conn, [oid for oid in candidates if oid not in early])}
        created = {oid: fact[0] for oid, fact in facts.items()}
        newest = sorted(candidates, key=lambda oid: (-created[oid], -oid)) \
            if fusion.recency_weight else ()
        ranked = fuse(fts.ids, vec.ids, fusion=fusion, newest_first=newest,
                      file_ids=files, other_file_ids=other_files, fts_coverage=fts.coverage,
                      vector_share=vec_share)
        if intent.dated is not None and fusion.date_weight:
            since, until = intent.dated
            dated = [oid for oid, _ in ranked if since <= created[oid] <= until]
            if dated:
                ranked = fuse(fts.ids, vec.ids, fusion=fusion, newest_first=newest,
                              file_ids=files, other_file_ids=other_files,
                              fts_coverage=fts.coverage, dated_ids=dated,
                              vector_share=vec_share)
        if intent.temporal:
            like = _like_best(conn, ranked[:fusion.temporal_depth], facts, job) \
                if use_vectors and fusion.temporal_like < 1.0 else None
            ranked = favour_newest(ranked, created, fusion=fusion, like_best=like)
    elif not use_vectors:
        mode_used = "fts"
        ranked = [(oid, -fts.measure[oid]) for oid in fts.ids]
    else:
        mode_used = "semantic"
        ranked = [(oid, 1.0 - vec.measure[oid]) for oid in vec.ids]
    if mode == "hybrid" and use_vectors and fusion.diversity:
        head = [oid for oid, _ in ranked[:fusion.diversity_window]]
        ranked = diversify(ranked, _codes_of(conn, head, job), fusion=fusion)
    if mode == "hybrid" and fusion.followup_slot and ranked:
        listed = _followup_candidates(fts.ids, vec.ids, fusion.followup_depth)
        following: int | None = None
        if fusion.followup_next and use_vectors and ranked[0][0] in facts \
                and (not intent.temporal or fusion.temporal_companion < 1.0):
            before = (ranked, listed)
            ranked, listed, following = with_next_in_session(
                conn, ranked, listed, facts, created, filters, fusion.followup_window_ms)
            if intent.temporal and following is not None and (
                    facts[following][2] == "discovery" or _like_best(
                        conn, [ranked[0], (following, 0.0)], facts, job
                    ).get(following, 0.0) < fusion.temporal_companion):
                (ranked, listed), following = before, None
        sessions = {oid: facts[oid][1] for oid in [ranked[0][0], *listed] if oid in facts}
        ranked = admit_followup(ranked, listed, sessions, created, fusion=fusion,
                                preferred=following if following is not None
                                and fusion.followup_prefer_next
                                and facts[following][2] != "discovery" else None)
    day: set[int] = set()
    if mode == "hybrid" and intent.date_only:
        ranked, day = that_day_first(conn, ranked, intent, filters, depth)
    if resolve:  # a file's or a day's own history stays as it is
        ranked = current_in_place(conn, ranked, filters, keep={*files, *other_files, *day})
    if filters.include_superseded:
        ranked = superseded_last(conn, ranked)
    return Ranking(ranked=[(oid, _finite(score)) for oid, score in ranked[:limit]],
                   fts_rank={oid: i for i, oid in enumerate(fts.ids, start=1)},
                   bm25=fts.measure,
                   vector_rank={oid: i for i, oid in enumerate(vec.ids, start=1)},
                   distance=vec.measure, mode=mode, mode_used=mode_used, note=note)


def _like_best(conn: apsw.Connection, ranked: Sequence[tuple[int, float]],
               facts: dict[int, tuple[int, str, str]],
               job: vector_job.VectorJob | None) -> dict[int, float]:
    """Cosine of each of ``ranked``'s vectors (int8 codes) to the first one's: how much
    each match is about the same thing as the best (``fusion.favour_newest``). Only
    matches that can replace an earlier state are listed: not discoveries."""
    if not ranked:
        return {}
    ids = [oid for oid, _ in ranked]
    codes = _codes_of(conn, ids, job)
    top = codes.get(ranked[0][0])
    # A discovery adds to what is known, it replaces nothing (``topics.SUPERSEDING_TYPES``
    # reasons the same way): it is never lifted as the newer state of the best match.
    replacing = {oid for oid in ids[1:] if oid in facts and facts[oid][2] != "discovery"}
    codes = {oid: code for oid, code in codes.items() if oid in replacing}
    if top is None:
        return {}
    base = np.frombuffer(top, dtype=np.int8).astype(np.float32)
    base /= max(float(np.linalg.norm(base)), 1e-12)
    out: dict[int, float] = {}
    for oid, code in codes.items():
        vec = np.frombuffer(code, dtype=np.int8).astype(np.float32)
        if vec.shape == base.shape:
            out[oid] = float(vec @ base) / max(float(np.linalg.norm(vec)), 1e-12)
    return out


def _codes_of(conn: apsw.Connection, ids: Sequence[int],
              job: vector_job.VectorJob | None = None) -> dict[int, bytes]:
    """The int8 vector codes of ``ids``: from the memory of the index ``job`` searched
    (brought up to date by this search), else primary-key reads of small rows (a vec0
    lookup by id would read a whole chunk per row); ids without a code are left out."""
    if not ids:
        return {}
    held = job.index.codes_for(ids) if job is not None else None
    if held is not None:
        return held
    try:
        rows = conn.execute(
            f"SELECT observation_id, code FROM {CODES_TABLE} WHERE observation_id IN "
            "(SELECT value FROM json_each(?)) AND code IS NOT NULL", (json_ids(ids),))
        return {r[0]: r[1] for r in rows}
    except apsw.SQLError:  # no codes table (a database written before it existed)
        return {}


def _followup_candidates(fts_ids: Sequence[int], vector_ids: Sequence[int],
                         depth: int) -> list[int]:
    """Either list's top ``depth``, interleaved best first (no duplicates)."""
    pairs = itertools.zip_longest(fts_ids[:depth], vector_ids[:depth])
    return list(dict.fromkeys(oid for pair in pairs for oid in pair if oid is not None))


def _facts(conn: apsw.Connection, ids: Sequence[int]) -> dict[int, tuple[int, str, str]]:
    """``id -> (created_at_epoch, session_id, type)`` of the fusion's candidates: one
    read for the recency, follow-up and like-the-best steps (three reads before)."""
    if not ids:
        return {}
    rows = conn.execute(
        "SELECT id, created_at_epoch, session_id, type FROM observations WHERE id IN "
        "(SELECT value FROM json_each(?))", (json_ids(ids),))
    return {integer(r[0]): (integer(r[1]), str(r[2]), str(r[3])) for r in rows}


def _finite(value: float) -> float:
    return value if math.isfinite(value) else 0.0
