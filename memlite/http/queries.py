"""The read side of the API: one sync function per request, run on a pooled reader.

Each function here does ALL the reading of one request, so a handler costs one thread
hop (``await conn.async_run(fn, conn, ...)``) or none (``ReaderPool.run_short``: the
full-text search), and returns plain JSON-ready values; the
records come from ``memlite.storage`` and are turned into dicts here, in one place, so
every route shows an observation the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import apsw
import attrs
import orjson

from memlite.http.rawjson import RawJson
from memlite.storage.fts import search_prompts, search_summaries
from memlite.storage.reads import (
    columns,
    get_observation,
    get_observations,
    observation_index_rows,
    observation_json_texts,
    to_record,
)
from memlite.storage.records import Observation, Prompt, SearchHit, Summary
from memlite.storage.search import Filters, Ranking, VectorSource, rank

__all__ = [
    "batch",
    "index",
    "observation_json",
    "search",
    "timeline",
]


_FIELDS = {cls: tuple(f.name for f in attrs.fields(cls))
           for cls in (Observation, Prompt, Summary)}


def _flat(record: Observation | Prompt | Summary) -> dict[str, Any]:
    """A flat record (strings, numbers, tuples of them) as a dict: what ``attrs.asdict``
    gives, built directly (``asdict`` walks every value recursively: ~5x the cost, and a
    search turns up to 60 records into dicts)."""
    return {name: getattr(record, name) for name in _FIELDS[type(record)]}


def observation_json(obs: Observation) -> dict[str, Any]:
    return _flat(obs)


def _hit_json(hit: SearchHit) -> dict[str, Any]:
    """A summary's or a prompt's hit: its record and score."""
    body = _flat(hit.item)
    body["score"] = round(hit.score, 6)
    return body


def _ranked_json(found: Ranking, oid: int, score: float, record: bytes) -> RawJson:
    """A hit of ``/api/search``: the search's figures (``fts_rank``, ``score``,
    ``vector_rank``), then its record with its ``tokens`` as SQLite wrote them
    (``reads.observation_json_texts``): one JSON object."""
    head = orjson.dumps({"fts_rank": found.fts_rank.get(oid), "score": round(score, 6),
                         "vector_rank": found.vector_rank.get(oid)})
    return RawJson(head[:-1] + b"," + record[1:])


def search(conn: apsw.Connection, q: str, *, mode: str, filters: Filters, limit: int,
           vector: bytes | VectorSource | None,
           no_vector_reason: str | None = None) -> dict[str, Any]:
    """Observations through the search engine (``mode``, ``filters``); summaries and
    prompts by full text in the same project. Best first in each list.

    Summaries and prompts are searched first: they need no embedding, so with a
    ``VectorSource`` they run while the query is still being embedded."""
    project = filters.project
    summaries = [_hit_json(h) for h in search_summaries(conn, q, project=project, limit=limit)]
    prompts = [_hit_json(h) for h in search_prompts(conn, q, project=project, limit=limit)]
    found = rank(conn, q, mode=mode, filters=filters, query_vector=vector, limit=limit,
                 no_vector_reason=no_vector_reason)
    records = observation_json_texts(conn, found.ids)
    return {
        "mode": found.mode, "mode_used": found.mode_used, "note": found.note,
        "observations": [_ranked_json(found, oid, score, records[oid])
                         for oid, score in found.ranked if oid in records],
        "summaries": summaries, "prompts": prompts,
    }


def index(conn: apsw.Connection, q: str, *, mode: str, filters: Filters, limit: int,
          vector: bytes | VectorSource | None,
          no_vector_reason: str | None = None) -> dict[str, Any]:
    """The compact index: enough to choose which observations to fetch in full. Only
    the columns shown are read (``observation_index_rows``), not the records."""
    found = rank(conn, q, mode=mode, filters=filters, query_vector=vector, limit=limit,
                 no_vector_reason=no_vector_reason)
    rows = observation_index_rows(conn, found.ids)
    results = [
        {"id": oid, "date": date, "type": kind, "title": title, "project": project,
         "session_id": session_id, "tokens": tokens,
         "files": list(dict.fromkeys((*modified, *read)))[:5], "score": round(score, 6)}
        for oid, score in found.ranked if oid in rows
        for date, kind, title, project, session_id, tokens, read, modified in (rows[oid],)
    ]
    return {"mode": found.mode, "mode_used": found.mode_used, "note": found.note,
            "count": len(results), "results": results}


def _around(conn: apsw.Connection, anchor: Observation, scope: str, *, newer: bool,
            limit: int) -> list[Observation]:
    if limit == 0:
        return []
    key, value = ("session_id", anchor.session_id) if scope == "session" else (
        "project", anchor.project)
    op, order = (">", "ASC") if newer else ("<", "DESC")
    sql = (
        f"SELECT {columns(Observation)} FROM observations "
        f"WHERE {key} = ? AND superseded_by IS NULL AND id != ? "
        f"AND (created_at_epoch {op} ? OR (created_at_epoch = ? AND id {op} ?)) "
        f"ORDER BY created_at_epoch {order}, id {order} LIMIT ?"
    )
    epoch = anchor.created_at_epoch
    rows = conn.execute(sql, (value, anchor.id, epoch, epoch, anchor.id, limit)).fetchall()
    found = [to_record(Observation, row) for row in rows]
    return found if newer else found[::-1]


def timeline(conn: apsw.Connection, anchor_id: int, *, before: int, after: int,
             scope: str) -> dict[str, Any] | None:
    """Observations around ``anchor_id`` in its project (or session), in time order.

    Returns None when the anchor does not exist. Superseded observations are left out
    (the anchor itself is always shown).
    """
    anchor = get_observation(conn, anchor_id)
    if anchor is None:
        return None
    older = _around(conn, anchor, scope, newer=False, limit=before)
    newer = _around(conn, anchor, scope, newer=True, limit=after)
    return {
        "anchor": anchor.id,
        "scope": scope,
        "project": anchor.project,
        "session_id": anchor.session_id,
        "observations": [observation_json(obs) for obs in (*older, anchor, *newer)],
    }


def batch(conn: apsw.Connection, ids: Sequence[int]) -> dict[str, Any]:
    """Full records in the order asked; ids that name nothing are listed in ``missing``."""
    found = get_observations(conn, ids)
    present = {obs.id for obs in found}
    return {
        "observations": [observation_json(obs) for obs in found],
        "missing": [i for i in dict.fromkeys(ids) if i not in present],
    }
