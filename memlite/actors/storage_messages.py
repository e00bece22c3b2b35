"""The storage actor's messages (split from ``storage.py`` to keep it under 500 lines).

Import them from ``memlite.actors.storage``, which re-exports every one. Each message
may carry a ``reply``; None means fire-and-forget (errors are logged).

Each message's ``reply`` is typed with its answer (``Reply[InsertResult]``...); an error
is sent on the same reply and raised by ``ask``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from memlite.actors.core import Reply
from memlite.storage.capture import HookEventStored
from memlite.storage.records import InsertResult, NewObservation, NewSummary, Session

__all__ = [
    "CompleteSession",
    "DeleteObservation",
    "DeleteSession",
    "DeleteSummary",
    "EnsureVectorTable",
    "Inbox",
    "PruneEvents",
    "RecordAudit",
    "RequeueProcessingEvents",
    "SetEventStatus",
    "SetObserverHealth",
    "SetSdkSessionId",
    "Stop",
    "StoreHookEvent",
    "StoreObservation",
    "StoreObservations",
    "StorePrompt",
    "StoreSummary",
    "StoreVectors",
]

# ``reply`` is optional on every message: None means fire-and-forget (errors are logged).
_reply = attrs.field(default=None)


def _ints(values: Iterable[int]) -> tuple[int, ...]:
    return tuple(values)


def _observations(values: Iterable[NewObservation]) -> tuple[NewObservation, ...]:
    return tuple(values)


def _rows(values: Iterable[tuple[Any, ...]]) -> tuple[tuple[Any, ...], ...]:
    return tuple(values)


@attrs.frozen(kw_only=True)
class StartSession:
    """Create or resume a session. Answer: ``Session``.

    Test-only: not in ``__all__`` (the worker stores hook events with ``StoreHookEvent``,
    which starts sessions itself)."""

    session_id: str
    project: str | None = None
    project_name: str | None = None
    cwd: str | None = None
    branch: str | None = None
    commit_sha: str | None = None
    source: str | None = None
    transcript_path: str | None = None
    at_ms: int | None = None
    reply: Reply[Session] | None = _reply


@attrs.frozen(kw_only=True)
class CompleteSession:
    """Mark a session completed. Answer: ``bool`` (False: no such session)."""

    session_id: str
    at_ms: int | None = None
    reply: Reply[bool] | None = _reply


@attrs.frozen(kw_only=True)
class SetSdkSessionId:
    """Record the observer conversation's id. Answer: ``bool``."""

    session_id: str
    sdk_session_id: str | None
    reply: Reply[bool] | None = _reply


@attrs.frozen(kw_only=True)
class StoreEvent:
    """Append a redacted hook event to the durable queue. Answer: ``InsertResult``.

    Test-only: not in ``__all__`` (the worker uses ``StoreHookEvent``)."""

    session_id: str
    event_name: str
    payload: Mapping[str, Any] | str
    tool_name: str | None = None
    tool_use_id: str | None = None
    at_ms: int | None = None
    reply: Reply[InsertResult] | None = _reply


@attrs.frozen(kw_only=True)
class StorePrompt:
    """Store a user prompt (``''`` = private). Answer: ``InsertResult``."""

    session_id: str
    prompt_text: str
    prompt_number: int | None = None
    at_ms: int | None = None
    reply: Reply[InsertResult] | None = _reply


@attrs.frozen(kw_only=True)
class SetEventStatus:
    """Move events to pending/processing/done/skipped. Answer: ``int`` (rows changed)."""

    event_ids: tuple[int, ...] = attrs.field(converter=_ints)
    status: str
    reply: Reply[int] | None = _reply


@attrs.frozen(kw_only=True)
class RequeueProcessingEvents:
    """Put events a dead worker left ``processing`` back to pending. Answer: ``int``."""

    reply: Reply[int] | None = _reply


@attrs.frozen(kw_only=True)
class StoreObservation:
    """Store an observation and mark its source events done. Answer: ``InsertResult``."""

    observation: NewObservation
    reply: Reply[InsertResult] | None = _reply


@attrs.frozen(kw_only=True)
class StoreObservations:
    """Store one reply's observations as one batch (see ``storage.observing``); a replay
    is a no-op. ``mark_done=False``: provisional, events stay pending. Answer:
    ``list[InsertResult]``."""

    observations: tuple[NewObservation, ...] = attrs.field(converter=_observations)
    mark_done: bool = True
    reply: Reply[list[InsertResult]] | None = _reply


@attrs.frozen(kw_only=True)
class PruneEvents:
    """Prune payloads of events finished before ``older_than_ms``. Answer: ``int``."""

    older_than_ms: int
    reply: Reply[int] | None = _reply


@attrs.frozen(kw_only=True)
class SetObserverHealth:
    """Record a session's observer failures in a row. Answer: ``bool``."""

    session_id: str
    failures: int
    error: str | None = None
    reply: Reply[bool] | None = _reply


@attrs.frozen(kw_only=True)
class StoreSummary:
    """Store a session summary and mark ``done_event_ids`` (the Stop events it answers)
    done, in one transaction. Answer: ``int`` (its id)."""

    summary: NewSummary
    done_event_ids: tuple[int, ...] = attrs.field(default=(), converter=_ints)
    reply: Reply[int] | None = _reply


@attrs.frozen(kw_only=True)
class RecordAudit:
    """Append to the audit log. Answer: ``int`` (the entry's id)."""

    actor: str
    action: str
    target: str
    detail: Mapping[str, Any] | None = None
    reply: Reply[int] | None = _reply


@attrs.frozen(kw_only=True)
class DeleteObservation:
    """Delete an observation, audited as done by ``actor``. Answer: ``bool``."""

    observation_id: int
    actor: str
    reply: Reply[bool] | None = _reply


@attrs.frozen(kw_only=True)
class DeleteSummary:
    """Delete a summary, audited. Answer: ``bool``."""

    summary_id: int
    actor: str
    reply: Reply[bool] | None = _reply


@attrs.frozen(kw_only=True)
class DeleteSession:
    """Delete a session and all it recorded, audited. Answer: ``bool``."""

    session_id: str
    actor: str
    reply: Reply[bool] | None = _reply


@attrs.frozen(kw_only=True)
class EnsureVectorTable:
    """Create (or recreate for a new model, or when ``recreate``) the vector table.

    Answer: ``bool``, True when the table is new (every observation needs a vector)."""

    dim: int
    model: str
    recreate: bool = False
    reply: Reply[bool] | None = _reply


@attrs.frozen(kw_only=True)
class StoreVectors:
    """Store ``(observation_id, project, embedding[, content_hash])`` rows (see
    ``vectors.upsert_vectors``: rows of deleted or replaced observations are dropped).
    Answer: ``int`` stored."""

    vectors: tuple[tuple[Any, ...], ...] = attrs.field(converter=_rows)
    reply: Reply[int] | None = _reply


@attrs.frozen(kw_only=True)
class StoreHookEvent:
    """Store a hook event and its effect on the session in one savepoint (ingestion).

    Answer: ``HookEventStored``; ``NotFound`` when ``require_session`` and the session is
    unknown. See ``memlite.storage.capture.record_hook_event`` for the fields.
    """

    session_id: str
    event_name: str
    payload: Mapping[str, Any] | str
    tool_name: str | None = None
    tool_use_id: str | None = None
    skipped: bool = False
    project: str | None = None
    project_name: str | None = None
    cwd: str | None = None
    branch: str | None = None
    commit_sha: str | None = None
    source: str | None = None
    transcript_path: str | None = None
    start: bool = False
    prompt_text: str | None = None
    complete: bool = False
    require_session: bool = False
    at_ms: int | None = None
    reply: Reply[HookEventStored] | None = _reply


@attrs.frozen(kw_only=True)
class Stop:
    """Commit the batch in hand, then stop (queued messages get ``ActorDied``)."""

    reply: Reply[None] | None = _reply


Inbox = (
    StartSession | CompleteSession | SetSdkSessionId | StoreEvent | StorePrompt
    | SetEventStatus | RequeueProcessingEvents | StoreObservation | StoreSummary
    | RecordAudit | DeleteObservation | DeleteSummary | DeleteSession | EnsureVectorTable
    | StoreVectors | StoreHookEvent | StoreObservations | PruneEvents | SetObserverHealth
    | Stop
)
