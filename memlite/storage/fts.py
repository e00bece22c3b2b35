"""Full-text search over observations, summaries and prompts (FTS5, BM25).

User text never reaches ``MATCH`` as FTS5 syntax. ``fts_query`` splits it on whitespace
and quotes every token as an FTS5 string (``"tok"``, inner quotes doubled), so ``"``,
``*``, ``-x``, ``OR``, ``NEAR``, ``(``, ``col:`` and emoji are searched for as text and
can never raise a syntax error. Control characters are dropped, and so are small words
("what", "did", "the": ``STOPWORDS``) when other terms remain. Tokens are ANDed; when
that finds nothing and there were several tokens, the search is retried with OR, so a
long natural-language question still returns its best partial matches.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import apsw

from memlite.storage.reads import columns, to_record
from memlite.storage.records import Observation, Prompt, SearchHit, Summary

__all__ = [
    "MAX_TERMS",
    "OBSERVATION_WEIGHTS",
    "TOKENIZER",
    "document_tokens",
    "fts5_averages",
    "fts_query",
    "query_terms",
    "search_observations",
    "search_prompts",
    "search_summaries",
    "tokens_of_texts",
    "varints",
]

# Bounds the work one query can ask for; nobody types more than this on purpose.
MAX_TERMS = 32

# BM25 column weights for observations_fts: title, subtitle, narrative, facts, concepts, files.
OBSERVATION_WEIGHTS = "5.0, 3.0, 1.0, 2.0, 2.0, 1.0"


# Left out of a query when other terms remain: "what did we decide about locks" is a
# search for "decide" and "locks"; the small words match nearly every row (or, ANDed,
# none) and only add noise to BM25.
STOPWORDS = frozenset("""
a about after all also am an and any are as at be been before being but by can could did
do does doing done for from had has have having how i if in into is it its itself just me
my no not now of on once only or our out over so some such than that the their them then
there these they this those to too under up us very was we were what when where which
while who whom why will with would you your
""".split())


def query_terms(text: str) -> list[str]:
    """The whitespace-separated terms of user text, control characters dropped."""
    return _terms(text)


_UNMEANT = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
"""Unicode's control characters (category Cc: these two ranges, fixed by the standard)
and surrogates (Cs): a pattern, not ``unicodedata.category`` per character (~4 µs for a
question; a search splits its query five times)."""


def _terms(text: str) -> list[str]:
    # Control characters and lone surrogates become spaces: they cannot be meant, and a
    # NUL would cut the query short inside SQLite.
    return _UNMEANT.sub(" ", text).split()[:MAX_TERMS]


def fts_query(text: str, *, any_term: bool = False) -> str | None:
    """Turn user text into a safe FTS5 query, or None when there is nothing to search.

    Args:
        text: whatever the user typed.
        any_term: OR the tokens instead of ANDing them.
    """
    tokens = _terms(text)
    if not tokens:
        return None
    content = [t for t in tokens if t.lower().strip("?!.,;:'\"") not in STOPWORDS]
    tokens = content or tokens
    quoted = ['"' + token.replace('"', '""') + '"' for token in tokens]
    return (" OR " if any_term else " ").join(quoted)


def _holds_rows(conn: apsw.Connection, table: str) -> bool:
    """True when ``table`` holds a row (a primary-key probe: microseconds)."""
    return bool(conn.execute(f"SELECT EXISTS (SELECT 1 FROM {table})").fetchall()[0][0])


def _search(
    conn: apsw.Connection, text: str, sql: str, params: tuple[Any, ...], build: Any,
    table: str,
) -> list[SearchHit]:
    # An empty table answers nothing: asking FTS5 anyway costs two MATCH queries (the
    # all-words one and its any-term retry), ~0.2 ms of a ~3 ms search at 10,000
    # observations for summaries and prompts that a store without summaries never has.
    query = fts_query(text)
    if query is None or not _holds_rows(conn, table):
        return []
    hits = [build(row) for row in conn.execute(sql, (query, *params))]
    if not hits and len(_terms(text)) > 1:
        hits = [build(row) for row in conn.execute(sql, (fts_query(text, any_term=True), *params))]
    return hits


def search_observations(
    conn: apsw.Connection,
    text: str,
    *,
    project: str | None = None,
    limit: int = 20,
    include_superseded: bool = False,
) -> list[SearchHit]:
    """Best BM25 matches first; each hit's ``item`` is an ``Observation``."""
    where = ["observations_fts MATCH ?"]
    params: list[Any] = []
    if project is not None:
        where.append("o.project = ?")
        params.append(project)
    if not include_superseded:
        where.append("o.superseded_by IS NULL")
    sql = (
        f"SELECT {columns(Observation, 'o')}, "
        f"bm25(observations_fts, {OBSERVATION_WEIGHTS}) AS score "
        "FROM observations_fts JOIN observations AS o ON o.id = observations_fts.rowid "
        f"WHERE {' AND '.join(where)} ORDER BY score LIMIT ?"
    )
    return _search(
        conn, text, sql, (*params, limit),
        lambda row: SearchHit(to_record(Observation, row[:-1]), row[-1]), "observations",
    )


def search_summaries(
    conn: apsw.Connection, text: str, *, project: str | None = None, limit: int = 20
) -> list[SearchHit]:
    """Best BM25 matches first; each hit's ``item`` is a ``Summary``."""
    project_clause = "AND s.project = ?" if project is not None else ""
    params = (project, limit) if project is not None else (limit,)
    sql = (
        f"SELECT {columns(Summary, 's')}, bm25(summaries_fts) AS score "
        "FROM summaries_fts JOIN summaries AS s ON s.id = summaries_fts.rowid "
        f"WHERE summaries_fts MATCH ? {project_clause} ORDER BY score LIMIT ?"
    )
    return _search(
        conn, text, sql, params, lambda row: SearchHit(to_record(Summary, row[:-1]), row[-1]),
        "summaries",
    )


def search_prompts(
    conn: apsw.Connection, text: str, *, project: str | None = None, limit: int = 20
) -> list[SearchHit]:
    """Best BM25 matches first; each hit's ``item`` is a ``Prompt``."""
    project_clause = (
        "AND p.session_id IN (SELECT id FROM sessions WHERE project = ?)"
        if project is not None
        else ""
    )
    params = (project, limit) if project is not None else (limit,)
    sql = (
        f"SELECT {columns(Prompt, 'p')}, bm25(prompts_fts) AS score "
        "FROM prompts_fts JOIN user_prompts AS p ON p.id = prompts_fts.rowid "
        f"WHERE prompts_fts MATCH ? {project_clause} ORDER BY score LIMIT ?"
    )
    return _search(
        conn, text, sql, params, lambda row: SearchHit(to_record(Prompt, row[:-1]), row[-1]),
        "user_prompts",
    )


def fts5_averages(conn: apsw.Connection) -> bytes | None:
    """FTS5's averages record of the observations' table (its row count, then each
    column's token total, as varints), or None when it has none yet."""
    try:
        rows = conn.execute("SELECT block FROM observations_fts_data WHERE id = 1").fetchall()
    except apsw.SQLError:
        return None
    block = rows[0][0] if rows else None
    return bytes(block) if isinstance(block, bytes | memoryview) else None


def varints(data: bytes, count: int) -> list[int] | None:
    """The first ``count`` SQLite varints of ``data`` (big-endian groups of seven bits,
    a ninth byte of eight), or None when it is too short."""
    out: list[int] = []
    pos = 0
    for _ in range(count):
        value = 0
        for i in range(9):
            if pos >= len(data):
                return None
            byte = data[pos]
            pos += 1
            if i == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


TOKENIZER = ("porter", ["unicode61", "remove_diacritics", "2"])
"""The observations' FTS table's tokenizer (``schema._TOKENIZE``), as
``conn.fts5_tokenizer(*TOKENIZER)`` takes it."""


def document_tokens(tokenize: Any, text: str | bytes) -> list[str]:
    """``text``'s tokens as the FTS table indexes them (tokens alone, no offsets and no
    colocated forms: half the cost of the tuples)."""
    data = text.encode("utf-8", "replace") if isinstance(text, str) else bytes(text)
    tokens: list[str] = tokenize(data, apsw.FTS5_TOKENIZE_DOCUMENT, None,
                                 include_offsets=False, include_colocated=False)
    return tokens


SEPARATOR = "memlitexrowxbreak"
"""Written between the texts ``tokens_of_texts`` tokenizes in one call."""


def tokens_of_texts(tokenize: Any, texts: Sequence[str]) -> tuple[list[str], list[int]] | None:
    """Every text's tokens in one list, in order, and how many each has, from ONE
    tokenizer call (``SEPARATOR`` written between two texts, its token then taken out):
    the per-call cost was half of tokenizing 50 rows one by one (0.70 ms against 0.35 ms
    for the same rows at once), six calls a row in a full-text index build.

    None when the texts cannot be split back that way: fewer than two, one that is not a
    string, or one that yields the separator's token itself (the separators found are
    then more than written). The caller tokenizes them one by one instead."""
    mark = document_tokens(tokenize, SEPARATOR)
    if len(texts) < 2 or len(mark) != 1:
        return None
    try:
        joined = f" {SEPARATOR} ".join(texts)
    except TypeError:  # a BLOB in a TEXT column
        return None
    (separator,) = mark
    tokens = document_tokens(tokenize, joined)
    flat: list[str] = []
    counts: list[int] = []
    start = 0
    try:  # list.index walks the tokens in C
        for _ in range(len(texts) - 1):
            end = tokens.index(separator, start)
            flat += tokens[start:end]
            counts.append(end - start)
            start = end + 1
    except ValueError:  # fewer separators than written: cannot happen, but never guess
        return None
    if separator in tokens[start:]:  # a text yielded it itself: misaligned
        return None
    flat += tokens[start:]
    counts.append(len(tokens) - start)
    return flat, counts
