"""Read functions: plain sync calls that return frozen records.

They run on a reader connection (``await reader.async_run(get_observation, reader, 7)``)
or on the writer inside a batch. Column lists are spelled out from the record's fields so
a schema change that a record does not know about is an error here, not a silent shift.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import apsw
import attrs

from memlite.storage.filters import id_list
from memlite.storage.records import (
    AuditEntry,
    Event,
    Observation,
    Prompt,
    Session,
    Summary,
    decode_ints,
    decode_list,
)
from memlite.storage.sqlvalue import integer

__all__ = [
    "TOKENS",
    "IndexRow",
    "audit_entries",
    "count_events",
    "count_observations",
    "get_event",
    "get_observation",
    "get_observations",
    "get_prompts",
    "get_session",
    "get_summary",
    "observation_dicts",
    "observation_index_rows",
    "observation_json_texts",
    "pending_events",
    "recent_observations",
    "recent_sessions",
    "recent_summaries",
    "session_observations",
    "table_counts",
]

if TYPE_CHECKING:
    from attrs import AttrsInstance

R = TypeVar("R", bound="AttrsInstance")  # a record class of memlite.storage.records

_JSON_LIST_FIELDS = frozenset({"facts", "concepts", "files_read", "files_modified"})


@functools.cache
def columns(cls: type[Any], alias: str = "") -> str:
    """The record's fields as a SELECT list (optionally qualified with ``alias.``).
    Kept once made (a few record classes and aliases; ~1.5 µs each to join again, and
    a search names three)."""
    prefix = f"{alias}." if alias else ""
    return ", ".join(prefix + f.name for f in attrs.fields(cls))


_NAMES: dict[type, tuple[str, ...]] = {}


def _values(cls: type[Any], row: Sequence[Any]) -> dict[str, Any]:
    """The record's field values, by name, from a row selected with ``columns(cls)``."""
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = tuple(f.name for f in attrs.fields(cls))
    values = dict(zip(names, row, strict=True))
    if cls is Observation:
        for name in _JSON_LIST_FIELDS:
            values[name] = decode_list(values[name])
        values["source_event_ids"] = decode_ints(values["source_event_ids"])
    return values


def to_record(cls: type[R], row: Sequence[Any]) -> R:
    """Build a record from a row selected with ``columns(cls)``."""
    return cls(**_values(cls, row))


def _all(conn: apsw.Connection, cls: type[R], where: str, params: Any = ()) -> list[R]:
    table = _TABLES[cls]
    sql = f"SELECT {columns(cls)} FROM {table} {where}"
    return [to_record(cls, row) for row in conn.execute(sql, params)]


def _first(conn: apsw.Connection, cls: type[R], where: str, params: Any = ()) -> R | None:
    rows = _all(conn, cls, where, params)
    return rows[0] if rows else None


_TABLES: dict[type[Any], str] = {
    Session: "sessions",
    Prompt: "user_prompts",
    Event: "events",
    Observation: "observations",
    Summary: "summaries",
    AuditEntry: "audit_log",
}


# --- sessions, prompts, events ----------------------------------------------------------


def get_session(conn: apsw.Connection, session_id: str) -> Session | None:
    return _first(conn, Session, "WHERE id = ?", (session_id,))


def recent_sessions(
    conn: apsw.Connection, *, project: str | None = None, limit: int = 20
) -> list[Session]:
    """Newest first; all projects when ``project`` is None."""
    if project is None:
        return _all(conn, Session, "ORDER BY started_at_epoch DESC, id LIMIT ?", (limit,))
    return _all(
        conn, Session, "WHERE project = ? ORDER BY started_at_epoch DESC, id LIMIT ?",
        (project, limit),
    )


def get_prompts(conn: apsw.Connection, session_id: str) -> list[Prompt]:
    """A session's prompts in order."""
    return _all(conn, Prompt, "WHERE session_id = ? ORDER BY prompt_number", (session_id,))


def get_event(conn: apsw.Connection, event_id: int) -> Event | None:
    return _first(conn, Event, "WHERE id = ?", (event_id,))


def pending_events(
    conn: apsw.Connection, *, session_id: str | None = None, limit: int = 100
) -> list[Event]:
    """Events still waiting for the observer, oldest first (one session, or all)."""
    if session_id is None:
        return _all(conn, Event, "WHERE status = 'pending' ORDER BY id LIMIT ?", (limit,))
    return _all(
        conn, Event, "WHERE session_id = ? AND status = 'pending' ORDER BY id LIMIT ?",
        (session_id, limit),
    )


# --- observations and summaries ---------------------------------------------------------


def get_observation(conn: apsw.Connection, observation_id: int) -> Observation | None:
    return _first(conn, Observation, "WHERE id = ?", (observation_id,))


def get_observations(conn: apsw.Connection, ids: Iterable[int]) -> list[Observation]:
    """The observations with these ids, in the order asked (missing ids are skipped)."""
    wanted = [int(i) for i in ids]
    found = observation_dicts(conn, wanted)
    return [Observation(**found[i]) for i in wanted if i in found]


TOKENS = (
    "max(1, (octet_length(title) + octet_length(subtitle) + octet_length(narrative) "
    "+ octet_length(facts) + octet_length(concepts) + octet_length(files_read) "
    "+ octet_length(files_modified) + 3) / 4)"
)
"""About how many tokens an observation's full record costs a model (the ``tokens`` of
the search answers): one per 4 bytes of its text, as stored (UTF-8; the lists as their
JSON), rounded up, at least 1. In SQL because SQLite knows a column's size without
reading it: the compact index reads no narrative, fact or concept to count them (its 20
entries at 10,000 observations: ~0.11 -> ~0.07 ms in process). Bytes, not characters:
text beyond ASCII costs a model more tokens a character, and the JSON's quotes and commas
are part of what it reads."""


def observation_dicts(conn: apsw.Connection, ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    """The observations with these ids as plain dicts, by id (missing ids are left out):
    each the fields of its ``Observation``, in the record's order, with the record's
    values (what ``attrs.asdict`` of ``get_observations``' records gives);
    ``get_observations`` makes its records from these."""
    listed, params = id_list(list(ids))
    sql = f"SELECT {columns(Observation)} FROM observations WHERE id IN {listed}"
    found = (_values(Observation, row) for row in conn.execute(sql, params))
    return {values["id"]: values for values in found}


_JSON_COLUMNS = _JSON_LIST_FIELDS | {"source_event_ids"}
_RECORD_JSON = "json_object(" + ", ".join(
    f"'{name}', " + (TOKENS if name == "tokens" else f"json({name})"
                     if name in _JSON_COLUMNS else name)
    for name in sorted([*(f.name for f in attrs.fields(Observation)), "tokens"])) + ")"


def observation_json_texts(conn: apsw.Connection, ids: Iterable[int]) -> dict[int, bytes]:
    """The observations with these ids as JSON objects written by SQLite (UTF-8), by id
    (missing ids are left out): each the fields of its ``Observation`` and its
    ``tokens`` (``TOKENS``), keys sorted, compact; the list columns as stored (what
    memlite writes is a list of strings, the record's values; an element of another
    type, written by other code, stays what it is where a record makes it a string).

    For ``/api/search``'s 20 full records: SQLite writes them in C, where a dict per row
    (four JSON columns decoded) then written again by orjson cost ~0.1 ms more at 10,000
    observations (``memlite.http.rawjson``)."""
    listed, params = id_list(list(ids))
    sql = f"SELECT id, {_RECORD_JSON} FROM observations WHERE id IN {listed}"
    return {oid: text.encode("utf-8") for oid, text in conn.execute(sql, params)}


IndexRow = tuple[str, str, str, str, str, int, tuple[str, ...], tuple[str, ...]]
"""``(created_at, type, title, project, session_id, tokens, files_read,
files_modified)``; ``tokens``: ``TOKENS``, what the full record costs."""


def observation_index_rows(conn: apsw.Connection, ids: Iterable[int]) -> dict[int, IndexRow]:
    """What the compact search index shows of each observation with these ids, by id
    (missing ids are left out): ``IndexRow``. No record is built, and the long text is
    not read (``TOKENS`` measures it)."""
    listed, params = id_list(list(ids))
    sql = (f"SELECT id, created_at, type, title, project, session_id, {TOKENS}, "
           f"files_read, files_modified FROM observations WHERE id IN {listed}")
    return {oid: (created_at, kind, title, project, session_id, size, decode_list(read),
                  decode_list(modified))
            for oid, created_at, kind, title, project, session_id, size, read, modified
            in conn.execute(sql, params)}


def recent_observations(
    conn: apsw.Connection,
    project: str,
    *,
    limit: int = 20,
    include_superseded: bool = False,
) -> list[Observation]:
    """A project's newest observations first (superseded ones hidden by default)."""
    live = "" if include_superseded else "AND superseded_by IS NULL"
    return _all(
        conn, Observation,
        f"WHERE project = ? {live} ORDER BY created_at_epoch DESC, id DESC LIMIT ?",
        (project, limit),
    )


def session_observations(conn: apsw.Connection, session_id: str) -> list[Observation]:
    """A session's observations in the order they were stored."""
    return _all(conn, Observation, "WHERE session_id = ? ORDER BY id", (session_id,))


def get_summary(conn: apsw.Connection, summary_id: int) -> Summary | None:
    return _first(conn, Summary, "WHERE id = ?", (summary_id,))


def recent_summaries(conn: apsw.Connection, project: str, *, limit: int = 5) -> list[Summary]:
    """A project's newest summaries first."""
    return _all(
        conn, Summary, "WHERE project = ? ORDER BY created_at_epoch DESC, id DESC LIMIT ?",
        (project, limit),
    )


def audit_entries(conn: apsw.Connection, *, limit: int = 100) -> list[AuditEntry]:
    """The newest audit entries first."""
    return _all(conn, AuditEntry, "ORDER BY id DESC LIMIT ?", (limit,))


# --- counts -----------------------------------------------------------------------------


def count_events(
    conn: apsw.Connection, *, status: str | None = None, session_id: str | None = None
) -> int:
    """How many events, optionally only with ``status`` and/or in one session."""
    clauses, params = [], []
    if status is not None:
        clauses.append("status = ?")
        params.append(status)
    if session_id is not None:
        clauses.append("session_id = ?")
        params.append(session_id)
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    return integer(conn.execute(f"SELECT count(*) FROM events {where}", params).fetchall()[0][0])


def count_observations(conn: apsw.Connection, *, project: str | None = None) -> int:
    """How many observations (superseded included), optionally in one project."""
    if project is None:
        return integer(conn.execute("SELECT count(*) FROM observations").fetchall()[0][0])
    return integer(conn.execute(
        "SELECT count(*) FROM observations WHERE project = ?", (project,)
    ).fetchall()[0][0])


def table_counts(conn: apsw.Connection) -> dict[str, int]:
    """Row counts of every main table, for status pages and tests."""
    return {
        table: integer(conn.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0])
        for table in ("sessions", "user_prompts", "events", "observations", "summaries",
                      "audit_log")
    }
