"""Any-term BM25 at scale: score only the documents holding a selective term.

Why: FTS5 scores every document an ``OR`` query matches (its ``bm25()`` reads each
row's size and term instances: ~1 µs a row), then sorts them. A question such as "why
does the flush checker fail when the error returns none" holds words that match most
of a 100,000-observation project, so the query scores ~50,000 rows (15-100 ms) to
keep 50. Counting the matches of one term costs ~20x less than scoring them.

How: each term's matches are counted, bounded at ``BUDGET`` (a count stops there). When
the terms together match more than ``BUDGET`` rows, they are split into the selective
terms ``E`` (the rarest, together within ``BUDGET``) and the frequent rest ``F``, and
two queries run instead of one::

    E             every row holding a selective term, scored on E alone
    (E) AND (F)   the rows holding both kinds, scored on all the terms

A frequent term held by more than half of the newest ``WINDOW`` rows is left out of
the second query: FTS5 clamps a BM25 IDF <= 0 (a term in most rows) to 1e-6, so it adds
nothing to a score, yet merging its doclist cost most of the query (20 of 22 ms).

FTS5's BM25 is a sum over the query's phrases, each phrase's IDF computed over the whole
table, so the second query's score is exactly the full query's score for its rows, and a
row holding no ``F`` term has the same score in the first query as in the full one. Every
row holding a selective term therefore gets its exact full score; what is left out are
the rows holding frequent terms only. Those score at most ``sum(idf(F)) * (k1 + 1)``
and rank below the rows holding a rare term in practice: on bench_search's 100k-1p
database the top 10 is 0.96 the full query's (``bench/bench_search.py --index``).

When the whole query matches at most ``BUDGET`` rows (every project of a few thousand
observations: the evals), the full query runs unchanged, so small databases rank exactly
as before.

When no term is selective (one common word, or only common words) and the query matches
more than ``BUDGET`` rows, there is nothing to split: only its newest ``BUDGET`` matches
are scored (``newest_floor``: the rowid of the ``BUDGET``-th newest match, found by
walking the doclists newest first, ~0.1 ms). A word held by 10,000 of a project's
observations says little about which of them are wanted; among them, the memory shows
the best of the recent ones (a project's newest observations hold its current state),
in 1.5 ms instead of 8-20 ms at 100,000 observations. The top 10 then differs from the
whole query's (bench: 0.2-0.5 of the top 10 kept on such words; nothing changes below
``BUDGET`` matches).
"""

from __future__ import annotations

import apsw

__all__ = ["BUDGET", "Split", "newest_floor", "plan", "split"]

BUDGET = 2_500
"""Matches scored per query before the split applies (~2-3 ms of BM25 scoring)."""

_COUNT = ("SELECT count(*) FROM (SELECT 1 FROM observations_fts "
          "WHERE observations_fts MATCH ? LIMIT ?)")


class Split:
    """The two queries that replace one any-term query (see the module docstring);
    ``both`` is None when every frequent term is in most rows (nothing to add)."""

    __slots__ = ("selective", "both")

    def __init__(self, selective: str, both: str | None) -> None:
        self.selective = selective
        self.both = both

    def merge(self, selective_rows: list[tuple[int, float]],
              both_rows: list[tuple[int, float]]) -> list[tuple[int, float]]:
        """``(rowid, bm25)`` of every row holding a selective term, best (lowest) first:
        the score of ``both`` where the row is there, else the selective one.

        The top ``n`` of each query is enough for the top ``n`` of the merge (what the
        search asks with ``ORDER BY score LIMIT n``, so that only ``2n`` rows reach
        Python, not the ~2,500 scored): a row's full score is never worse than its
        selective one, so every row above a selective-only row in the selective
        query's order is above it in the merge too; and a ``both`` row missing from
        the ``both`` top ``n`` has ``n`` better rows already. A row that is in the
        selective top but not the ``both`` top gets its (worse) selective score here,
        which still leaves it below those ``n``."""
        scores = dict(selective_rows)
        scores.update(both_rows)
        return sorted(scores.items(), key=lambda item: (item[1], item[0]))


def split(conn: apsw.Connection, query: str, budget: int | None = None) -> Split | None:
    """The split of ``query`` (an any-term query from ``fts_query(..., any_term=True)``:
    quoted phrases joined by `` OR ``), or None when the full query is cheap enough or
    no term is selective. ``budget`` defaults to ``BUDGET``."""
    return _split(conn, query, BUDGET if budget is None else budget)[0]


def plan(conn: apsw.Connection, query: str, budget: int | None = None) -> Split | int:
    """How to score ``query``: its ``Split``, or else the rowid floor (``newest_floor``)
    under which its matches are left out (0: score every match).

    Why not ``split`` then ``newest_floor``: when ``split`` finds the terms' counts
    together within ``budget``, the query matches at most ``budget`` rows and the floor
    is 0 without walking the doclists again (that walk was 0.17 ms of the ~2.8 ms of a
    full-text search at 10,000 observations, bench_peer_http's queries)."""
    budget = BUDGET if budget is None else budget
    parts, within = _split(conn, query, budget)
    if parts is not None:
        return parts
    return 0 if within else newest_floor(conn, query, budget)


def _split(conn: apsw.Connection, query: str, budget: int) -> tuple[Split | None, bool]:
    """``split``'s answer, and True when the phrases' counts add up to at most
    ``budget`` (then the query matches no more rows than that)."""
    phrases = query.split(" OR ")  # a quoted phrase never holds a space
    if len(phrases) < 2:
        return None, False
    counted = sorted((_count(conn, phrase, budget + 1), i, phrase)
                     for i, phrase in enumerate(phrases))
    if sum(count for count, _, _ in counted) <= budget:
        return None, True
    selective: list[str] = []
    total = 0
    for count, _, phrase in counted:
        if total + count > budget:
            break
        selective.append(phrase)
        total += count
    frequent = [phrase for _, _, phrase in counted[len(selective):]]
    if not selective or not frequent:
        return None, False
    # A phrase in most rows adds nothing to BM25 (FTS5 clamps an IDF <= 0 to 1e-6) but
    # costs the most: its whole doclist is merged and counted (one word in 96% of 100k
    # rows: 20 of 22 ms of the ``both`` query). Left out, the scores move by ~1e-6.
    window = _window(conn)
    frequent = [phrase for phrase in frequent if not _in_most_rows(conn, phrase, window)]
    e = " OR ".join(selective)
    return Split(e, f"({e}) AND ({' OR '.join(frequent)})" if frequent else None), False


_NEWEST = ("SELECT rowid FROM observations_fts WHERE observations_fts MATCH ? "
           "ORDER BY rowid DESC LIMIT 1 OFFSET ?")


def newest_floor(conn: apsw.Connection, query: str, budget: int | None = None) -> int:
    """The smallest rowid among the newest ``budget`` (default ``BUDGET``) rows matching
    ``query``, or 0 when it matches no more than that: ``rowid >= floor`` then keeps
    the newest ``budget`` matches, or every match."""
    budget = BUDGET if budget is None else budget
    for (rowid,) in conn.execute(_NEWEST, (query, budget - 1)):
        return int(rowid) if isinstance(rowid, int) else 0
    return 0


WINDOW = 2_000
"""Newest rows over which a frequent phrase's share of the rows is estimated."""


def _window(conn: apsw.Connection) -> tuple[int, int]:
    """``(rowid floor, ids above it)`` for the newest ``WINDOW`` observations. Ids of
    deleted rows count too: the share is then underestimated, and a term kept."""
    top = conn.execute("SELECT MAX(id) FROM observations").fetchall()[0][0]
    top = top if isinstance(top, int) else 0
    return max(top - WINDOW, 0), min(top, WINDOW)


def _in_most_rows(conn: apsw.Connection, phrase: str, window: tuple[int, int]) -> bool:
    """True when ``phrase`` is in more than half of the newest rows (then its BM25 IDF,
    over the whole table, is almost surely <= 0: it scores nothing)."""
    floor, rows = window
    if rows < 100:
        return False
    # Whether the window holds more than ``rows // 2`` matches, newest first: the walk
    # stops there (a phrase in 90% of the window is not counted to its end), and starts
    # at the newest row instead of walking the doclist up to the window (0.14 -> 0.09 ms
    # a phrase at 100k; the old count walked both).
    return bool(conn.execute(_IN_WINDOW, (phrase, floor, rows // 2)).fetchall())


_IN_WINDOW = ("SELECT 1 FROM observations_fts WHERE observations_fts MATCH ? AND rowid > ? "
              "ORDER BY rowid DESC LIMIT 1 OFFSET ?")


def _count(conn: apsw.Connection, phrase: str, cap: int) -> int:
    """Rows matching ``phrase``, counted up to ``cap`` (~0.06 µs a row)."""
    for (count,) in conn.execute(_COUNT, (phrase, cap)):
        return int(count) if isinstance(count, int) else 0
    return 0
