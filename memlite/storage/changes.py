"""Supersession by a stated change: "switched X from A to B" replaces what chose A.

``memlite.storage.topics`` links two titles about the same topic ("retry budget 3",
"retry budget raised to 5"). Most changes of mind are not written that way: the newer
title names what it replaced ("Switched billing lock from Redis to Postgres advisory
locks", "Replace metrics polling with a WebSocket stream", "fct_events switched from
merge to insert_overwrite", "Dropped YAML config support; TOML only"). On the own eval's
corpus (336 observations, 6 projects) the topic rule linked none of its seven changes of
mind; this rule links six (the seventh names nothing the older title says).

A newer observation ``new`` supersedes an older ``old`` of its project when:

* ``new``'s title states a change (``parse``): *from A to B*, *A -> B*, *replace(d) A
  with B*, *B instead of A*, *dropped A*, or *reverted S back to B*;
* ``new`` is a decision, feature, change or refactor (``CHANGING_TYPES``), and so is
  ``old``: a bugfix or discovery records what happened, which a
  later change does not undo, so it is never hidden by this rule;
* ``old``'s title holds every word of A (A must have a word, not just a number: "from 10
  to 25" alone names nothing) and none of B's words are all there (an older note already
  about B is not replaced by B);
* and they share a subject word: a word of ``new``'s title outside A and B that ``old``'s
  title also holds ("billing", "metrics", "fct_events", "sync"), so that "switched the
  HTTP client from requests to httpx" does not hide "requests per second are capped";
* for *reverted S back to B*: ``old`` is the newest live observation about S that
  changed *from B to* something else.

Words are compared lower-cased, without small words or verbs of changing, with a plural
``s`` dropped ("CRDTs", "15 minutes" / "15-minute"; not after i, s or u: "Redis",
"status"). Misses are preferred to guesses: a
wrong link hides a live memory by default (it stays stored, searchable with superseded
ones included, and never deleted by this).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import apsw
import attrs

from memlite.storage.fts import STOPWORDS
from memlite.storage.sqlvalue import integer, integer_or_none, text_or_none

__all__ = ["CHANGING_TYPES", "PARSED_CHARS", "SCAN", "Change", "parse",
           "pick", "record_change", "replaces", "words"]

CHANGING_TYPES = frozenset({"decision", "feature", "change", "refactor"})
SCAN = 500
"""Live observations of the project compared, newest first."""

_CHANGE_VERBS = frozenset("""
switch switched switching move moved moving migrate migrated migrating change changed
changing went go going convert converted replace replaced replaces replacing drop dropped
dropping revert reverted reverting use used using adopt adopted now instead back support
supported only kept keep chose choose rather
""".split())
_TOKEN = re.compile(r"[a-z0-9_]+(?:[.'][a-z0-9_]+)*")
_NUMBERISH = re.compile(r"\d[\d.]*[a-z]{0,2}")

_FROM_TO = re.compile(r"^(?P<subject>.*?)\bfrom\s+(?P<a>.+?)\s+to\s+(?P<b>.+)$", re.I)
_ARROW = re.compile(r"^(?P<subject>.*?)(?P<a>\S+)\s*(?:->|→)\s*(?P<b>\S+)(?P<rest>.*)$", re.I)
_REPLACE = re.compile(r"^(?P<subject>.*?)\breplac(?:e|ed|es|ing)\s+(?P<a>.+?)\s+"
                      r"(?:with|by)\s+(?P<b>.+)$", re.I)
_INSTEAD = re.compile(r"^(?P<b>.+?)\s+instead\s+of\s+(?:switching\s+to\s+|moving\s+to\s+|"
                      r"using\s+|adding\s+|keeping\s+)?(?P<a>.+)$", re.I)
_DROPPED = re.compile(r"^(?:dropped|removed|drop|remove)\s+(?P<a>[^;:,.]+?)"
                      r"(?:\s+support)?(?P<rest>[;:,.].*)?$", re.I)
_REVERT = re.compile(r"^(?:reverted|revert|reverting)\s+(?P<subject>.+?)\s+back\s+to\s+"
                     r"(?P<b>.+)$", re.I)


@attrs.frozen
class Change:
    """What a title says changed: ``old`` (the words of what was replaced; empty for a
    revert), ``new`` (what replaced it) and ``subject`` (the other words of the title)."""

    old: frozenset[str]
    new: frozenset[str]
    subject: frozenset[str]
    revert: bool = False


def words(text: str) -> frozenset[str]:
    """Content words: lower case, no small words or verbs of changing, plural s off.
    Numbers stay (they are kept apart from words by ``_has_word``)."""
    out = set()
    for token in _TOKEN.findall(text.lower().replace("-", " ")):
        if len(token) < 2 or token in STOPWORDS or token in _CHANGE_VERBS:
            continue
        if len(token) > 4 and token.endswith("ies"):
            token = token[:-3] + "y"
        elif len(token) > 3 and token.endswith("s") and token[-2] not in "isu":
            token = token[:-1]
        out.add(token)
    return frozenset(out)


def _has_word(found: frozenset[str]) -> bool:
    return any(not _NUMBERISH.fullmatch(w) for w in found)


PARSED_CHARS = 200
"""A title is read up to here: titles are headlines (the observer writes at most 80
characters), and the patterns backtrack quadratically on a long adversarial one (a
20,000-character title of "from a from a ..." took 0.7 s; 200 characters take ~0.05 ms)."""


def parse(title: str) -> Change | None:
    """The change a title states (in its first ``PARSED_CHARS`` characters), or None."""
    title = title.strip()[:PARSED_CHARS]
    if found := _REVERT.match(title):
        subject = words(found["subject"])
        return Change(frozenset(), words(found["b"]), subject, revert=True) if subject else None
    for pattern in (_REPLACE, _FROM_TO, _INSTEAD, _ARROW, _DROPPED):
        found = pattern.match(title)
        if not found:
            continue
        old = words(found["a"])
        new = words(found["b"]) if "b" in found.groupdict() else frozenset()
        rest = " ".join(found[k] or "" for k in ("subject", "rest") if k in found.groupdict())
        if pattern is _INSTEAD:  # "B instead of A": B's words are the new choice and subject
            rest = found["b"]
        subject = words(rest) - old
        if not _has_word(old) or old <= new:
            return None
        return Change(old, new, subject)
    return None


def replaces(change: Change, title: str) -> bool:
    """Whether an older title is what ``change`` replaced (see the module docstring;
    a revert is matched by ``reverted`` instead)."""
    if change.revert:
        return False
    held = words(title)
    if not change.old <= held:
        return False
    if change.new and _has_word(change.new) and change.new <= held:
        return False
    subject = change.subject - change.new
    if not subject:  # "Replace metrics polling with ...": A itself names the subject
        return len(change.old) >= 2
    return bool(subject & held)


def reverted(change: Change, title: str) -> bool:
    """Whether an older title is the change a revert undoes: same subject, changed *from*
    what the revert goes back to."""
    if not change.revert:
        return False
    older = parse(title)
    if older is None or older.revert or not older.old or not change.new:
        return False
    return bool(older.old & change.new) and bool(change.subject & words(title))


def pick(change: Change, candidates: Iterable[tuple[int, str]]) -> list[int]:
    """The ids of ``candidates`` (id, title; newest first) that ``change`` supersedes: every
    one it replaces, or for a revert the newest one it undoes."""
    if change.revert:
        for oid, title in candidates:
            if reverted(change, title):
                return [oid]
        return []
    return [oid for oid, title in candidates if replaces(change, title)]


def record_change(conn: apsw.Connection, new_id: int, project: str, type_: str, title: str,
                  created: int) -> list[int]:
    """Link ``new_id`` (already stored, live) by the change its title states, and link it
    under a newer stored change that replaces it (an observation stored late: an import,
    a slow batch). Returns the ids now superseded. Run in the insert's transaction."""
    if type_ not in CHANGING_TYPES:
        return []
    marks = ",".join("?" * len(CHANGING_TYPES))
    rows = conn.execute(
        "SELECT id, title, created_at_epoch FROM observations "
        f"WHERE project = ? AND superseded_by IS NULL AND id != ? AND type IN ({marks}) "
        "ORDER BY created_at_epoch DESC, id DESC LIMIT ?",
        (project, new_id, *sorted(CHANGING_TYPES), SCAN)).fetchall()
    older: list[tuple[int, str]] = []
    newer: list[tuple[int, int, str]] = []
    for oid, other_title, other_created in rows:
        key = (integer_or_none(other_created) or 0, integer(oid))
        if key < (created, new_id):
            older.append((key[1], text_or_none(other_title) or ""))
        else:
            newer.append((*key, text_or_none(other_title) or ""))
    for _, oid, other_title in sorted(newer):  # nearest newer first
        change = parse(other_title)
        if change is not None and pick(change, [(new_id, title)]):
            conn.execute("UPDATE observations SET superseded_by = ? WHERE id = ?",
                         (oid, new_id))
            return [new_id]
    change = parse(title)
    ids = pick(change, older) if change is not None else []
    if ids:
        conn.execute("UPDATE observations SET superseded_by = ? WHERE id IN "
                     "(SELECT value FROM json_each(?))",
                     (new_id, "[" + ",".join(map(str, ids)) + "]"))
    return ids
