"""Supersession by topic, recorded when an observation is stored: a newer decision or fix
on the same topic replaces the older one.

Why: a memory that hands Claude the decision it already reversed is worse than none
(issue 14). The AI observer links what it knows (``NewObservation.supersedes``); this
catches the rest, at storage time, for every backend and for imports.

The rule is deliberately conservative: it must never hide a different topic, so it
misses some real replacements rather than guess. An older observation ``old`` is
superseded by a newer ``new`` when all of these hold:

* same project and same type, and the type is one whose newer instance replaces the
  older (``SUPERSEDING_TYPES``: ``decision``, ``bugfix``); a discovery or a change adds
  to what is known, it does not replace it;
* both titles have a topic: the set of their content words (lowercase, small words and
  verbs of deciding or fixing such as "use", "switch", "fixed" dropped, numbers
  dropped: "retry budget 3" and "retry budget raised to 5" are both about
  {retry, budget}) of at least ``MIN_TOPIC_WORDS`` words;
* one topic contains the other and they overlap by at least ``MIN_JACCARD``; so
  "cache TTL for sessions" never replaces "cache TTL for tokens" (a different subject),
  and "use SQLite for storage" is not taken as replaced by "use Postgres for storage"
  (the same subject, but the rule cannot tell a change of mind from two stores);
* when both list modified files, they share at least one.

A second rule, for titles that state a change ("switched X from A to B", "replace A
with B", "B instead of A", "dropped A", "reverted X back to B"), lives in
``memlite.storage.changes`` and runs after this one.

Time decides the direction: an observation stored with an older date than a same-topic
one already there (an import, a late batch) is the superseded one. Superseded
observations are left out of searches by default and never rank above their
replacement (``memlite.storage.search``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import apsw

from memlite.storage.changes import record_change
from memlite.storage.fts import STOPWORDS
from memlite.storage.records import decode_list
from memlite.storage.sqlvalue import integer, integer_or_none, text_or_none

__all__ = ["MIN_JACCARD", "MIN_TOPIC_WORDS", "SUPERSEDING_TYPES", "record_supersession",
           "topic_words"]

SUPERSEDING_TYPES = frozenset({"decision", "bugfix"})
MIN_TOPIC_WORDS = 2
MIN_JACCARD = 0.6
SCAN = 500
"""Live observations of the same project and type compared, newest first."""

_VERBS = frozenset("""
use used uses using switch switched switching chose choose chosen decide decided decision
adopt adopted keep kept move moved go going now instead new old again fix fixed fixes
fixing bug bugfix resolve resolved repair repaired set raise raised lower lowered change
changed changes make made prefer preferred stop stopped start started drop dropped
""".split())
_WORD = re.compile(r"[a-z][a-z0-9_]*")


def topic_words(title: str) -> frozenset[str]:
    """The content words of a title: what it is about, not what was done to it."""
    return frozenset(w for w in _WORD.findall(title.lower())
                     if len(w) > 1 and w not in STOPWORDS and w not in _VERBS)


def same_topic(a: frozenset[str], b: frozenset[str]) -> bool:
    if len(a) < MIN_TOPIC_WORDS or len(b) < MIN_TOPIC_WORDS:
        return False
    if not (a <= b or b <= a):
        return False
    return len(a & b) / len(a | b) >= MIN_JACCARD


def _files_agree(a: Sequence[str], b: Sequence[str]) -> bool:
    return not a or not b or bool(set(a) & set(b))


def record_supersession(conn: apsw.Connection, new_id: int) -> list[int]:
    """Link ``new_id`` with the same-topic observations of its project (see the module
    docstring), then by the change its title states (``memlite.storage.changes``).
    Returns the ids now superseded (by ``new_id``, or ``new_id`` itself when a newer one
    was already there). Run in the insert's transaction."""
    rows = conn.execute(
        "SELECT project, type, title, files_modified, created_at_epoch, superseded_by "
        "FROM observations WHERE id = ?", (new_id,)).fetchall()
    if not rows:
        return []
    project, type_, title_value, files_json, created_value, superseded_by = rows[0]
    if superseded_by is not None:
        return []
    title = text_or_none(title_value) or ""
    created = integer_or_none(created_value) or 0
    project = text_or_none(project) or ""
    type_ = text_or_none(type_) or ""
    linked = _by_topic(conn, new_id, project, type_, title,
                       decode_list(text_or_none(files_json)), created)
    if new_id in linked:
        return linked
    return linked + record_change(conn, new_id, project, type_, title, created)


def _by_topic(conn: apsw.Connection, new_id: int, project: str, type_: str, title: str,
              files: Sequence[str], created: int) -> list[int]:
    if type_ not in SUPERSEDING_TYPES:
        return []
    topic = topic_words(title)
    if len(topic) < MIN_TOPIC_WORDS:
        return []
    older: list[int] = []
    newer: list[tuple[int, int]] = []
    for oid, other_title, other_files, other_created in conn.execute(
            "SELECT id, title, files_modified, created_at_epoch FROM observations "
            "WHERE project = ? AND superseded_by IS NULL AND type = ? AND id != ? "
            "ORDER BY created_at_epoch DESC, id DESC LIMIT ?",
            (project, type_, new_id, SCAN)).fetchall():
        if not same_topic(topic, topic_words(text_or_none(other_title) or "")):
            continue
        if not _files_agree(files, decode_list(text_or_none(other_files))):
            continue
        other = (integer_or_none(other_created) or 0, integer(oid))
        if other < (created, new_id):
            older.append(other[1])
        else:
            newer.append(other)
    if newer:  # stored late: the nearest newer one replaces this one
        replacement = min(newer)[1]
        conn.execute("UPDATE observations SET superseded_by = ? WHERE id = ?",
                     (replacement, new_id))
        return [new_id]
    if older:
        conn.execute("UPDATE observations SET superseded_by = ? WHERE id IN "
                     "(SELECT value FROM json_each(?))",
                     (new_id, "[" + ",".join(map(str, older)) + "]"))
    return older
