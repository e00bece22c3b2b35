"""Capture when a session's events arrive out of their own order (user trial, hung worker).

A hung worker that resumes answers the requests still queued on its socket (the hooks
gave up on them and spooled them), while the spool drain replays the same session's
events with the times the hooks spooled them. In the trial (docs/user-trials.md) 4 of 5
such sessions ended ``active``: their SessionEnd was stored first, then the drain's older
SessionStart "resumed" them.
"""

from __future__ import annotations

from memlite.storage.capture import record_hook_event
from memlite.storage.reads import get_session


def _event(db, name: str, at_ms: int | None, **fields):  # type: ignore[no-untyped-def]
    return record_hook_event(db, session_id="sess-late", event_name=name,
                             payload={"hook_event_name": name, "at": at_ms}, at_ms=at_ms,
                             cwd="/tmp/proj", project="/tmp/proj", **fields)


def test_a_session_start_older_than_the_session_end_does_not_reopen_it(db):
    with db:
        _event(db, "SessionEnd", 2_000_000, complete=True)
        _event(db, "SessionStart", 1_000_000, start=True, source="startup")  # drained late
    session = get_session(db, "sess-late")
    assert session.status == "completed"
    assert session.completed_at_epoch == 2_000_000
    assert session.source == "startup"  # its details are still filled in


def test_a_real_resume_after_the_end_reopens_it(db):
    with db:
        _event(db, "SessionStart", 1_000_000, start=True, source="startup")
        _event(db, "SessionEnd", 2_000_000, complete=True)
        _event(db, "SessionStart", 3_000_000, start=True, source="resume")
    session = get_session(db, "sess-late")
    assert session.status == "active" and session.completed_at_epoch is None
    assert session.source == "resume"
