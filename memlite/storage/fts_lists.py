"""The full-text list of a search: BM25 over any of the query's terms, filtered.

``fts_list`` answers one query on a reader connection. Three paths, the same answer:

* ``_fts_indexed``: a database of ``bm25_index.MIN_ROWS`` observations or more, no
  narrowing filter: the in-memory copy of the FTS5 index (``memlite.storage.bm25_index``)
  scores every match of the query with FTS5's own BM25, within the project, and the best
  are checked against the supersession filter; its term coverage comes from its postings;
* ``_fts_dominant``: when the project holds most of the database (or there is no project
  filter), the top matches are read from the FTS table alone and checked against the
  filters afterwards (joining every match to its row cost twice the matching at 100k);
* ``_fts_joined``: otherwise, matches joined to their observation rows inside SQL.

The two FTS5 paths use ``memlite.storage.fts_split`` past ``fts_split.BUDGET`` matches
(exact scores for the rows holding a selective term). With ``coverage``, each hit also
carries the share of the query's terms it holds, for the fusion
(``memlite.storage.fusion``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import apsw
import attrs

from memlite.storage import bm25_index, fts_split, vector_index
from memlite.storage.filters import Filters, json_ids, passing, superseded_among
from memlite.storage.fts import (
    OBSERVATION_WEIGHTS,
    STOPWORDS,
    TOKENIZER,
    document_tokens,
    fts_query,
    query_terms,
    tokens_of_texts,
)
from memlite.storage.sqlvalue import integer, text_or_none

__all__ = ["Listed", "fts_list"]


Fact = tuple[int, str, str]
"""``(created_at_epoch, session_id, type)`` of an observation (``search._facts``)."""


@attrs.frozen
class Listed:
    """One ranked list: ids best first, each id's score (``measure``), and for full
    text the share of the query's terms each holds (``coverage``)."""

    ids: list[int]
    measure: dict[int, float]
    coverage: dict[int, float] = attrs.field(factory=dict)  # full text: share of terms held
    facts: dict[int, Fact] = attrs.field(factory=dict)
    """Full text with coverage: ``(created_at_epoch, session_id, type)`` of the ids whose
    rows the coverage read (the fusion needs them: no second read of the same rows)."""



def _coverage(conn: apsw.Connection, text: str, ids: Sequence[int], *,
              matched: bool = False) -> dict[int, float]:
    """``_covered``'s shares."""
    return _covered(conn, text, ids, matched=matched)[0]


def _covered(conn: apsw.Connection, text: str, ids: Sequence[int], *,
             matched: bool = False) -> tuple[dict[int, float], dict[int, Fact]]:
    """For each id, the share of the query's terms (as full text searched them: small
    words dropped, stemmed by the FTS tokenizer) that the observation holds.

    Tokenizing the top rows in Python costs far less than asking FTS5 again for them: a
    MATCH restricted to a rowid list still walks every matching row (one query per term
    over 50 ids: ~4 ms at 100k observations). The rows are tokenized in one call
    (``_held``): 1.2 -> 0.6 ms for 50 rows at 100k, the same shares.

    ``matched``: every id is a match of the any-term query (``fts_list``'s hits). When
    the query then has one term with tokens, each id holds all of it (FTS5 matched that
    phrase, so its row holds the phrase's tokens): every share is 1.0 and no row is read
    or tokenized (a third of bench_search's queries: one word).

    Also returns the ``Fact`` of each row it read (``Listed.facts``), read with its text.
    """
    tokenize = conn.fts5_tokenizer(*TOKENIZER)
    phrases = _phrases(tokenize, text)
    if not phrases or not ids:
        return {}, {}
    if matched and len(phrases) == 1:
        return dict.fromkeys(ids, 1.0), {}
    # One string a row, joined by SQLite (the columns are NOT NULL; coalesce keeps the
    # old "" for a NULL all the same): half the cost of joining them in Python.
    rows = conn.execute(_ROW_TEXT, (json_ids(ids),)).fetchall()
    held = _held(tokenize, [text_or_none(r[1]) or "" for r in rows],
                 {token for phrase in phrases for token in phrase})
    shares = {integer(r[0]): sum(1 for p in phrases if tokens.issuperset(p)) / len(phrases)
              for r, tokens in zip(rows, held, strict=True)}
    return shares, {integer(r[0]): (integer(r[2]), str(r[3]), str(r[4])) for r in rows}


def _phrases(tokenize: Any, text: str) -> list[tuple[str, ...]]:
    """The query's terms as full text searched them (small words dropped, each term's
    tokens from the FTS tokenizer), the ones with tokens."""
    terms = query_terms(text)
    content = [t for t in terms if t.lower().strip("?!.,;:'\"") not in STOPWORDS] or terms
    return [p for p in (tuple(document_tokens(tokenize, t)) for t in content) if p]


_ROW_TEXT = ("SELECT id, " + " || ' ' || ".join(
    f"coalesce({c}, '')" for c in ("title", "subtitle", "narrative", "facts", "concepts",
                                   "files_read", "files_modified"))
             + ", created_at_epoch, session_id, type FROM observations "
             "WHERE id IN (SELECT value FROM json_each(?))")
"""The text ``_coverage`` tokenizes: a row's indexed columns, space-separated (as the
FTS table holds them, files read and modified apart), and the row's ``Fact``."""


def _held(tokenize: Any, texts: list[str], wanted: set[str]) -> list[set[str]]:
    """For each text, which of the ``wanted`` tokens it holds once tokenized: the rows in
    one tokenizer call (``fts.tokens_of_texts``), else one by one."""
    split = tokens_of_texts(tokenize, texts)
    if split is None:
        return [wanted.intersection(document_tokens(tokenize, t)) for t in texts]
    tokens, counts = split
    out: list[set[str]] = []
    start = 0
    for count in counts:  # set.intersection walks the tokens in C
        out.append(wanted.intersection(tokens[start:start + count]))
        start += count
    return out


def fts_list(conn: apsw.Connection, text: str, filters: Filters, depth: int, *,
              coverage: bool = False) -> Listed:
    """BM25 over any of the terms (OR): documents with more, and rarer, terms rank first.
    With ``coverage``, each hit also carries the share of the query's terms it holds."""
    query = fts_query(text, any_term=True)
    if query is None:
        return Listed([], {})
    rows = _fts_indexed(conn, query, filters, depth)
    indexed = rows is not None
    if rows is None:
        plan = fts_split.plan(conn, query)  # once: both paths score the query the same way
        rows = _fts_dominant(conn, query, plan, filters, depth)
        if rows is None:
            rows = _fts_joined(conn, query, plan, filters, depth)
    ids = [r[0] for r in rows]
    shares: dict[int, float] | None = None
    facts: dict[int, Fact] = {}
    if coverage and indexed:  # from the postings: no row read or tokenized
        tokenize = conn.fts5_tokenizer(*TOKENIZER)
        shares = bm25_index.coverage(conn, _phrases(tokenize, text), ids)
    if coverage and shares is None:
        shares, facts = _covered(conn, text, ids, matched=True)
    return Listed(ids, {r[0]: r[1] for r in rows}, shares or {}, facts)


def _dominant(conn: apsw.Connection, filters: Filters) -> bool:
    """True when the unfiltered best matches can be checked against ``filters``
    afterwards (``_fts_dominant``): no narrowing filter, and the project (if any) holds
    at least half the observations."""
    return not filters.narrows and (
        filters.project is None or vector_index.project_share(conn, filters.project) >= 0.5)


_INDEXED_ROUNDS = 4
"""Times the in-memory list is asked for twice as many rows when too few of its best
pass the filters (superseded rows), before the joined FTS5 query answers instead."""


def _fts_indexed(conn: apsw.Connection, query: str, filters: Filters,
                 depth: int) -> list[tuple[int, float]] | None:
    """The BM25 list from the in-memory index (``memlite.storage.bm25_index``: the same
    scores as FTS5's ``bm25()``, every match scored, ~0.2 ms instead of 1.4 ms at 10,000
    observations), its rows in the project filter's project; superseded ones left out
    (``_current``), or, when they are shown, the rows read again (``_kept``: one
    deleted since the index answered is not listed, which the fusion relies on); None
    when the index cannot answer (a small table, not built yet or being built again) or
    a filter narrows the rows (types, dates, file, session: FTS5 joins them)."""
    if filters.narrows:
        return None
    fetch = 2 * depth
    for _ in range(_INDEXED_ROUNDS):
        rows = bm25_index.top(conn, query, fetch, fts_split.BUDGET, filters.project)
        if rows is None:
            return None
        kept = _kept(conn, rows, filters, depth) if filters.include_superseded \
            else _current(conn, rows, depth)
        if len(kept) >= depth or len(rows) < fetch:
            return kept[:depth]
        fetch *= 2
    return None


def _current(conn: apsw.Connection, rows: list[tuple[int, float]],
             depth: int) -> list[tuple[int, float]]:
    """The rows no other observation superseded, in order: all the in-memory index's
    answer leaves to check (its rows exist, in the project asked). The top ``depth``
    first; the rest only when one of them is superseded."""
    gone = superseded_among(conn, [r[0] for r in rows[:depth]])
    if gone:
        gone |= superseded_among(conn, [r[0] for r in rows[depth:]])
    return [r for r in rows if r[0] not in gone]


def _kept(conn: apsw.Connection, rows: list[tuple[int, float]], filters: Filters,
          depth: int) -> list[tuple[int, float]]:
    """The rows passing ``filters``, in order. The top ``depth`` first: when all of
    them pass (most searches: few rows are superseded), the rest need no check (each
    checked id costs ~1.5-2.5 µs)."""
    keep = _passing(conn, [r[0] for r in rows[:depth]], filters)
    if len(keep) < min(depth, len(rows)):
        keep |= _passing(conn, [r[0] for r in rows[depth:]], filters)
    return [(r[0], r[1]) for r in rows if r[0] in keep]


def _fts_dominant(conn: apsw.Connection, query: str, plan: fts_split.Split | int,
                  filters: Filters, depth: int) -> list[tuple[int, float]] | None:
    """The BM25 list without the join, when the project holds most of the database (or
    there is no project filter).

    Joining every full-text match to its observation row for the project and supersession
    checks costs twice the matching itself at 100k rows in one project (16 of 24 ms). When
    the project holds at least half the observations (and no narrowing filter, which few
    rows would pass), the unfiltered top ``2 * depth`` are checked instead (the second
    half only when one of the first fails); the answer is the same list whenever ``depth``
    of them pass (or there are no more matches); otherwise None and the caller runs the
    joined query. A query with no selective term (one common
    word) is scored over its newest ``fts_split.BUDGET`` matches (``newest_floor``)."""
    if not _dominant(conn, filters):
        return None  # with no project filter, every row is in scope: the same shortcut
    fetch = 2 * depth
    sql = (f"SELECT rowid, bm25(observations_fts, {OBSERVATION_WEIGHTS}) AS score "
           "FROM observations_fts WHERE observations_fts MATCH ?")
    if isinstance(plan, int):  # scored whole; among the newest matches only when too many
        rows = _pairs(conn, f"{sql} AND rowid >= ? ORDER BY score LIMIT ?", (query, plan, fetch))
    else:  # every row holding a selective term, exactly scored (``fts_split``)
        top = f"{sql} ORDER BY score LIMIT ?"
        rows = plan.merge(_pairs(conn, top, (plan.selective, fetch)),
                          _pairs(conn, top, (plan.both, fetch)) if plan.both else [])[:fetch]
    kept = _kept(conn, rows, filters, depth)
    if len(kept) >= depth or len(rows) < fetch:
        return kept[:depth]
    return None


def _pairs(conn: apsw.Connection, sql: str, params: tuple[Any, ...]) -> list[tuple[int, float]]:
    return [(r[0], r[1]) for r in conn.execute(sql, params)]


def _passing(conn: apsw.Connection, ids: list[int], filters: Filters) -> set[int]:
    """``filters.passing`` (for the project filter alone it reads the
    ``(project, superseded_by)`` index, not the rows)."""
    return passing(conn, ids, filters)


def _fts_joined(conn: apsw.Connection, query: str, plan: fts_split.Split | int,
                filters: Filters, depth: int) -> list[tuple[int, float]]:
    clauses, params = filters.where("o")
    # Within one project, the (project, superseded_by) index tells which matches count
    # without reading each row; SQLite does not always pick it by itself (1M rows).
    # With superseded rows included the index cannot be sought by rowid (its second
    # column is open): each row is then read by its rowid instead.
    hint = " INDEXED BY observations_project_live" \
        if filters.project is not None and not filters.include_superseded else ""
    sql = (
        f"SELECT o.id, bm25(observations_fts, {OBSERVATION_WEIGHTS}) AS score "
        f"FROM observations_fts JOIN observations AS o{hint} "
        "ON o.id = observations_fts.rowid "
        f"WHERE {' AND '.join(['observations_fts MATCH ?', *clauses])}"
    )
    if not isinstance(plan, int):  # every row holding a selective term, exactly scored
        top = f"{sql} ORDER BY score LIMIT ?"
        return plan.merge(_pairs(conn, top, (plan.selective, *params, depth)),
                          _pairs(conn, top, (plan.both, *params, depth))
                          if plan.both else [])[:depth]
    return _pairs(conn, f"{sql} ORDER BY score LIMIT ?", (query, *params, depth))
