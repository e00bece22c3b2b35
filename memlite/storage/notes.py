"""Notes: what the user explicitly asked memlite to remember, stored as it is said.

"remember: we never deploy on Fridays", then ``/exit``: a session with no tool call. Its
summary is chat-only and ranks after the summaries of real work (``storage.ranked``), so
with three sessions of work after it the next SessionStart never showed it (round 7,
trial 18). A user who tells a memory plugin to remember something expects it in the next
session. So an explicit request (``memlite.remember.request``) becomes an observation of
its own, in the same transaction that stores the prompt (``storage.capture``): no
observer, no model, nothing to wait for, and the text is the stored prompt's, redacted
like every prompt.

A note is an observation with:

* ``type`` ``decision`` (no new type: every filter, the dashboard, the API's type list and
  the supersession rules of ``storage.topics`` and ``storage.changes`` already know it;
  a later note on the same topic, "remember: we deploy on Fridays now", replaces the
  older one by those rules);
* ``backend`` ``rules`` (made without AI; the AI observer never observes a prompt event,
  so no AI observation ever supersedes it by ``observer.supersede``);
* ``concepts`` ``["user-note"]`` (``NOTE_CONCEPT``): what the context block looks for;
* ``title`` the kept text ("We never deploy on Fridays"), ``narrative`` the whole prompt,
  ``source_event_ids`` the prompt's event (left ``pending``: the observer skips it as
  before, and the summary reads it).

Two more ways a note changes:

* "forget (about) X": the live notes that X names (half of X's topic words or more, at
  least one) are superseded by a note "Forget: X". A forget request that names no note
  is not stored: it is a change of mind inside the conversation ("forget the previous
  approach, use a queue"), not about memory.
* A correction without a cue ("we deploy on Fridays now"): a short statement (not a
  question) with a word of change (now, no longer, anymore, instead, actually) on the
  same topic as a live note (``storage.topics.same_topic``) is stored as a note that
  supersedes it.
"""

from __future__ import annotations

import math
import re

import apsw

from memlite.remember import MAX_NOTE, request
from memlite.storage.reads import columns, to_record
from memlite.storage.records import NewObservation, Observation
from memlite.storage.topics import same_topic, topic_words
from memlite.storage.writes import insert_observation

__all__ = ["NOTE_CONCEPT", "NOTE_SCAN", "is_note", "live_notes", "record_note"]

NOTE_CONCEPT = "user-note"
NOTE_SCAN = 200
"""A project's newest live notes read when a prompt is checked against them, and at most
what the context block reads (it shows far fewer)."""
MAX_CORRECTION = 300
"""A prompt longer than this is a task, not a one-line correction of a note."""
_CHANGE = re.compile(r"\b(?:now|no longer|any ?more|instead|actually|these days|nowadays)\b",
                     re.IGNORECASE)
_GENERIC = frozenset({"note", "notes", "rule", "rules", "instruction", "said", "told",
                      "thing", "things", "remember", "remembering"})

_WHERE = f"""project = ? AND superseded_by IS NULL AND type = 'decision' AND backend = 'rules'
  AND concepts LIKE '%"{NOTE_CONCEPT}"%'"""
# Notes are found through full text (the concept's two words, in the ``concepts`` column):
# an index lookup, where filtering a project's observations by concept read every row
# (60 ms at 100,000 observations in one project; CROSS JOIN keeps SQLite from driving the
# query by the project's index instead). No new index, so no migration.
_LIVE_SQL = f"""
SELECT {columns(Observation, "o")} FROM observations_fts AS f
CROSS JOIN observations AS o ON o.id = f.rowid
WHERE observations_fts MATCH 'concepts : "user note"' AND o.{_WHERE.replace("AND ", "AND o.")}
ORDER BY o.created_at_epoch DESC, o.id DESC LIMIT ?
"""
_SCAN_SQL = f"""
SELECT {columns(Observation)} FROM observations WHERE {_WHERE}
ORDER BY created_at_epoch DESC, id DESC LIMIT ?
"""


def is_note(o: Observation) -> bool:
    return o.backend == "rules" and o.type == "decision" and NOTE_CONCEPT in o.concepts


def live_notes(conn: apsw.Connection, project: str, *, limit: int) -> tuple[Observation, ...]:
    """The project's notes not superseded, newest first, each text once (the newest)."""
    seen: set[str] = set()
    out = []
    wanted = (project, max(0, min(limit * 3, NOTE_SCAN)))
    try:
        rows = conn.execute(_LIVE_SQL, wanted).fetchall()
    except apsw.SQLError:  # no full-text table of that shape: read them the slow way
        rows = conn.execute(_SCAN_SQL, wanted).fetchall()
    for row in rows:
        note = to_record(Observation, row)
        key = " ".join(note.title.lower().split())
        if not is_note(note) or key in seen:
            continue
        seen.add(key)
        out.append(note)
        if len(out) >= limit:
            break
    return tuple(out)


def _named_by(target: str, notes: tuple[Observation, ...]) -> list[int]:
    wanted = topic_words(target) - _GENERIC
    if not wanted:
        return []
    need = max(1, math.ceil(len(wanted) / 2))
    return [n.id for n in notes
            if not n.title.startswith("Forget: ")
            and len(wanted & topic_words(n.title)) >= need]


def _corrected(prompt: str, notes: tuple[Observation, ...]) -> list[int]:
    text = prompt.strip()
    if len(text) > MAX_CORRECTION or text.endswith("?") or not _CHANGE.search(text):
        return []
    topic = topic_words(text)
    return [n.id for n in notes if same_topic(topic, topic_words(n.title))]


def record_note(conn: apsw.Connection, *, session_id: str, event_id: int, prompt_text: str,
                at_ms: int | None) -> int | None:
    """Store the note ``prompt_text`` asks for, if any (see the module docstring); the
    observation's id, or None. Run in the prompt's transaction (``storage.capture``)."""
    found = request(prompt_text)
    if found is None and not _CHANGE.search(prompt_text):
        return None  # the common case: no cue, no correction: nothing read
    rows = conn.execute("SELECT project, branch, commit_sha FROM sessions WHERE id = ?",
                        (session_id,)).fetchall()
    if not rows or not rows[0][0]:
        return None
    project, branch, commit_sha = (str(v) if v is not None else None for v in rows[0])
    assert project is not None
    notes = live_notes(conn, project, limit=NOTE_SCAN)
    supersedes: list[int] = []
    if found is None:
        supersedes = _corrected(prompt_text, notes)
        if not supersedes:
            return None
        title = " ".join(prompt_text.split())[:MAX_NOTE]
        title = title[:1].upper() + title[1:]
    elif found.kind == "forget":
        supersedes = _named_by(found.text, notes)
        if not supersedes:
            return None
        title = f"Forget: {found.text}"
    else:
        title = found.text
    note = NewObservation(
        session_id=session_id, project=project, type="decision", title=title,
        subtitle="the user asked to forget this" if found is not None
        and found.kind == "forget" else "the user asked to remember this",
        narrative=prompt_text[:1200], concepts=(NOTE_CONCEPT,),
        source_event_ids=(event_id,), supersedes=tuple(supersedes), branch=branch,
        commit_sha=commit_sha, backend="rules", at_ms=at_ms)
    return insert_observation(conn, note, mark_done=False).id
