"""Capture: one hook event and what it does to its session, as one change.

``record_hook_event`` is what ingestion asks the storage actor to do for every hook event
(the ``StoreHookEvent`` message). It runs inside the actor's batch transaction, in one
savepoint, so the event row and its effects (session started or resumed, prompt stored,
session completed) are committed together or not at all. That is what makes replays
safe: if the event row already exists, its effects were applied with it, so a replay
(a spool drained twice, a hook retrying after a lost reply) writes nothing at all.
A prompt that asks to remember something ("remember: we never deploy on Fridays") is
stored with its note, an observation of its own (``storage.notes``), in the same change.

Sessions are never a precondition (DESIGN §7: never lose an event because SessionStart
was missed): an event of an unknown session creates it, with whatever details the event
carries, and says so in ``session_created``. The one exception is ``require_session``,
for callers whose whole point is an existing session (``/api/summarize``,
``/api/sessions/complete``): then an unknown session raises ``NotFound``.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import apsw
import attrs

from memlite.errors import NotFound
from memlite.storage.notes import record_note
from memlite.storage.sqlvalue import integer
from memlite.storage.writes import (
    complete_session,
    insert_event,
    insert_prompt,
    set_event_status,
    start_session,
)

__all__ = ["HookEventStored", "record_hook_event"]

log = logging.getLogger(__name__)


@attrs.frozen(kw_only=True)
class HookEventStored:
    """What ``record_hook_event`` did.

    Attributes:
        event_id: the event row (new, or the one already there).
        created: False when the event was already stored: nothing was written.
        session_created: the session did not exist before this event.
        prompt_id: the prompt row stored with it, if any.
    """

    event_id: int
    created: bool
    session_created: bool = False
    prompt_id: int | None = None


def _fill_session(conn: apsw.Connection, session_id: str, details: Mapping[str, Any]) -> None:
    """Fill in the session's blank details; never overwrite one, never change its status."""
    given = {key: value for key, value in details.items() if value is not None}
    if not given:
        return
    assignments = ", ".join(f"{key} = coalesce({key}, ?)" for key in given)
    conn.execute(f"UPDATE sessions SET {assignments} WHERE id = ?",
                 (*given.values(), session_id))


def _ended_after(conn: apsw.Connection, session_id: str, at_ms: int | None) -> bool:
    """Whether the session is completed at a time later than ``at_ms`` (a SessionStart).

    Events of one session can be stored out of their own order: a hung worker that
    resumes answers requests its hooks gave up on (and spooled), while the drain replays
    the spooled copies with their own, older, times. Such a SessionStart happened before
    the stored SessionEnd, so it must not reopen the session. A live SessionStart
    (``at_ms`` None: now) after the end is a real resume and does.
    """
    if at_ms is None:
        return False
    rows = conn.execute("SELECT completed_at_epoch FROM sessions WHERE id = ? AND status = "
                        "'completed'", (session_id,)).fetchall()
    return bool(rows) and rows[0][0] is not None and integer(rows[0][0]) > at_ms


def _note(conn: apsw.Connection, session_id: str, event_id: int, prompt_text: str,
          at_ms: int | None) -> None:
    """Store the prompt's note, if it asks for one, in a savepoint of its own: a note
    that cannot be stored is logged and never costs the prompt or its event."""
    try:
        with conn:
            record_note(conn, session_id=session_id, event_id=event_id,
                        prompt_text=prompt_text, at_ms=at_ms)
    except Exception:  # noqa: BLE001 - the event and prompt matter more than the note
        log.exception("session %s: the note of prompt event %d was not stored", session_id,
                      event_id)


def record_hook_event(
    conn: apsw.Connection,
    *,
    session_id: str,
    event_name: str,
    payload: Mapping[str, Any] | str,
    tool_name: str | None = None,
    tool_use_id: str | None = None,
    skipped: bool = False,
    project: str | None = None,
    project_name: str | None = None,
    cwd: str | None = None,
    branch: str | None = None,
    commit_sha: str | None = None,
    source: str | None = None,
    transcript_path: str | None = None,
    start: bool = False,
    prompt_text: str | None = None,
    complete: bool = False,
    require_session: bool = False,
    at_ms: int | None = None,
) -> HookEventStored:
    """Store a hook event (idempotently) and apply its effect on the session.

    Args:
        skipped: store the event with status ``skipped`` (a tool nobody observes).
        project ... transcript_path: session details; ``start`` applies them as a
            SessionStart does (create or resume: status back to active, details updated);
            otherwise they only fill in what the session does not know yet, when the
            event creates the session or carries a prompt.
        prompt_text: store a user prompt with the event (``''`` = private).
        complete: mark the session completed (SessionEnd).
        require_session: raise ``NotFound`` instead of creating an unknown session.

    Raises:
        NotFound: ``require_session`` and the session does not exist.
    """
    known = conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchall()
    if require_session and not known:
        raise NotFound(f"unknown session {session_id!r}: no event of it was ever stored")
    event = insert_event(conn, session_id=session_id, event_name=event_name, payload=payload,
                         tool_name=tool_name, tool_use_id=tool_use_id, at_ms=at_ms)
    if not event.created:
        return HookEventStored(event_id=event.id, created=False)
    if skipped:
        set_event_status(conn, [event.id], "skipped")
    details = {"project": project, "project_name": project_name, "cwd": cwd, "branch": branch,
               "commit_sha": commit_sha, "transcript_path": transcript_path}
    if start and not _ended_after(conn, session_id, at_ms):
        start_session(conn, session_id=session_id, source=source, at_ms=at_ms, **details)
    elif start:  # a SessionStart older than the stored end: fill in, do not reopen
        _fill_session(conn, session_id, {**details, "source": source})
    elif not known or prompt_text is not None:  # not on every tool event: once is enough
        _fill_session(conn, session_id, details)
    prompt_id = None
    if prompt_text is not None:
        prompt = insert_prompt(conn, session_id=session_id, prompt_text=prompt_text,
                               at_ms=at_ms)
        prompt_id = prompt.id
        if prompt.created and prompt_text:  # "remember: ..." (storage.notes)
            _note(conn, session_id, event.id, prompt_text, at_ms)
    if complete:
        complete_session(conn, session_id, at_ms=at_ms)
    return HookEventStored(event_id=event.id, created=True, session_created=not known,
                           prompt_id=prompt_id)
