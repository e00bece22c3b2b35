"""The typed values that go into and come out of the database.

Rows come back as frozen ``attrs`` records, never as tuples or dicts, so a caller cannot
confuse column orders and a reader can hand them across task boundaries safely. JSON
columns (facts, concepts, file lists) are decoded into tuples of strings on the way out.
Inputs with many fields (an observation, a summary) are records too, so a message to the
storage actor carries one value instead of a dozen keyword arguments.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Literal

import attrs
import orjson

__all__ = [
    "AuditEntry",
    "Event",
    "EventStatus",
    "InsertResult",
    "NewObservation",
    "NewSummary",
    "Observation",
    "Prompt",
    "SearchHit",
    "Session",
    "Summary",
    "VectorHit",
]

EventStatus = Literal["pending", "processing", "done", "skipped"]
EVENT_STATUSES: frozenset[str] = frozenset({"pending", "processing", "done", "skipped"})


def _strings(values: Iterable[str] | str) -> tuple[str, ...]:
    # A bare string is almost always a mistake (it would become a tuple of characters).
    if isinstance(values, str):
        return (values,)
    return tuple(str(v) for v in values)


def _ints(values: Iterable[int]) -> tuple[int, ...]:
    return tuple(int(v) for v in values)


def decode_list(text: str | None) -> tuple[str, ...]:
    """Decode a JSON array column; anything else becomes an empty tuple.

    Every observation read decodes four of these (a search reads 20-60 records). A list
    of strings (what memlite writes) is parsed by orjson and becomes a tuple as it is,
    checked by ``str.join`` in C: 0.25 µs a column against 0.60 through ``json``'s
    scanner and ``map(str, ...)`` (columns of ``bench_search``'s observations). Anything
    else goes through ``json.loads``, as it always did: what orjson refuses (a lone
    surrogate, ``NaN``), elements that are not strings (each becomes its ``str``; orjson
    would read an integer beyond 64 bits as a float), and malformed text (which fails
    there)."""
    if not text or text == "[]":
        return ()
    try:
        value = orjson.loads(text)
        _join(value)  # raises TypeError unless a list (or a str) of strings
    except (orjson.JSONDecodeError, TypeError):
        value = json.loads(text)
    else:
        if isinstance(value, list):
            return tuple(value)
    return tuple(map(str, value)) if isinstance(value, list) else ()


_join = "".join


def decode_ints(text: str) -> tuple[int, ...]:
    """Decode a JSON array of integers (``source_event_ids``), as ``json.loads`` reads
    it (orjson would read an integer beyond 64 bits as a float)."""
    return () if text == "[]" else tuple(map(int, json.loads(text)))


@attrs.frozen
class InsertResult:
    """What an idempotent insert did.

    Attributes:
        id: the row id (of the new row, or of the row that was already there).
        created: False when the row already existed and nothing was written.
    """

    id: int
    created: bool


@attrs.frozen(kw_only=True)
class Session:
    id: str
    project: str | None
    project_name: str | None
    cwd: str | None
    branch: str | None
    commit_sha: str | None
    source: str | None
    transcript_path: str | None
    status: str
    started_at: str
    started_at_epoch: int
    completed_at: str | None
    completed_at_epoch: int | None
    prompt_count: int
    sdk_session_id: str | None


@attrs.frozen(kw_only=True)
class Prompt:
    id: int
    session_id: str
    prompt_number: int
    prompt_text: str
    created_at: str
    created_at_epoch: int


@attrs.frozen(kw_only=True)
class Event:
    """One captured hook event (already redacted). ``payload`` is JSON text."""

    id: int
    session_id: str
    event_name: str
    tool_name: str | None
    tool_use_id: str | None
    payload: str
    content_hash: str
    status: str
    attempts: int
    created_at: str
    created_at_epoch: int

    def data(self) -> Any:
        """The payload, decoded."""
        return json.loads(self.payload)


@attrs.frozen(kw_only=True)
class NewObservation:
    """An observation to store, as the observer (or the rules extractor) produced it.

    ``source_event_ids`` are marked ``done`` in the same transaction; ``supersedes`` are
    older observations (typically the rules-based ones) that this one replaces: they get a
    ``superseded_by`` link, they are not deleted.
    """

    session_id: str
    project: str
    type: str
    title: str
    subtitle: str = ""
    narrative: str = ""
    facts: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    concepts: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    files_read: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    files_modified: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    source_event_ids: tuple[int, ...] = attrs.field(default=(), converter=_ints)
    supersedes: tuple[int, ...] = attrs.field(default=(), converter=_ints)
    branch: str | None = None
    commit_sha: str | None = None
    backend: str = "ai"
    at_ms: int | None = None


@attrs.frozen(kw_only=True)
class Observation:
    id: int
    session_id: str
    project: str
    branch: str | None
    commit_sha: str | None
    type: str
    title: str
    subtitle: str
    narrative: str
    facts: tuple[str, ...]
    concepts: tuple[str, ...]
    files_read: tuple[str, ...]
    files_modified: tuple[str, ...]
    source_event_ids: tuple[int, ...]
    superseded_by: int | None
    backend: str
    content_hash: str
    created_at: str
    created_at_epoch: int


@attrs.frozen(kw_only=True)
class NewSummary:
    """A session summary: the five fields the observer returns on Stop."""

    session_id: str
    project: str
    request: str = ""
    investigated: str = ""
    learned: str = ""
    completed: str = ""
    next_steps: str = ""
    at_ms: int | None = None


@attrs.frozen(kw_only=True)
class Summary:
    id: int
    session_id: str
    project: str
    request: str
    investigated: str
    learned: str
    completed: str
    next_steps: str
    created_at: str
    created_at_epoch: int


@attrs.frozen(kw_only=True)
class AuditEntry:
    id: int
    at: str
    at_epoch: int
    actor: str
    action: str
    target: str
    detail: str


@attrs.frozen
class SearchHit:
    """A full-text match. ``score`` is BM25 as SQLite reports it: lower is better."""

    item: Any
    score: float


@attrs.frozen
class VectorHit:
    """A nearest-neighbour match. ``distance`` is cosine distance: lower is closer."""

    observation_id: int
    distance: float
