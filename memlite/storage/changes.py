"""Supersession by a stated change: "switched X from A to B" replaces what chose A.

``memlite.storage.topics`` links two titles about the same topic ("retry budget 3",
"retry budget raised to 5"). Most changes of mind are not written that way: the newer
title names what it replaced ("Switched billing lock from Redis to Postgres advisory
locks", "Replace metrics polling with a WebSocket stream", "fct_events switched from
merge to insert_overwrite", "Dropped YAML config support; TOML only"). On the own eval's
corpus (336 observations, 6 projects) the topic rule linked none of its seven changes of
mind; this rule links six (the seventh names nothing the older title says), and since
round 7 an eighth through a removed file (HPA on CPU -> KEDA, below). Left unlinked
there, on purpose: value chains ("MSRV raised from 1.70 to 1.74" -> "MSRV raised to
1.80", "minSdk 21 -> 24" -> "24 -> 26", "Cap the pool at 10 per pod instead of adding
PgBouncer" -> "Raised MaxConns from 10 to 25"). Their facts ("minSdk = 24" / "= 26")
would link them, but the older note often holds more than the value (why PgBouncer was
rejected), and the own eval's dev questions "is minSdk still 24" want both.

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
  or, when they share none, ``new``'s facts or narrative say it removed or deleted a file
  ``old`` modified ("Autoscale on Kafka consumer lag with KEDA instead of CPU", facts
  "hpa.yaml removed", replaces "HorizontalPodAutoscaler on CPU 70%", which wrote
  ``templates/hpa.yaml``: the title names what was replaced, the removed file says the
  older setup is gone; round 7, ``removed_files``);
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
from collections.abc import Iterable, Sequence

import apsw
import attrs

from memlite.storage.fts import STOPWORDS
from memlite.storage.records import decode_list
from memlite.storage.sqlvalue import integer, integer_or_none, text_or_none

__all__ = ["CHANGING_TYPES", "PARSED_CHARS", "PARSED_TEXT", "SCAN", "Change", "parse",
           "pick", "record_change", "removed_files", "replaces", "words"]

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


def replaces(change: Change, title: str, *, removed: frozenset[str] = frozenset(),
             files: Iterable[str] = ()) -> bool:
    """Whether an older title is what ``change`` replaced (see the module docstring;
    a revert is matched by ``reverted`` instead). ``removed``: the file names the newer
    observation says it removed (``removed_files``); ``files``: the files the older one
    modified. A removed file of the older one stands for a shared subject word."""
    if change.revert:
        return False
    held = words(title)
    if not change.old <= held:
        return False
    if change.new and _has_word(change.new) and change.new <= held:
        return False
    if removed and any(_base(f) in removed for f in files):
        return True
    subject = change.subject - change.new
    if not subject:  # "Replace metrics polling with ...": A itself names the subject
        return len(change.old) >= 2
    return bool(subject & held)


_REMOVED = re.compile(
    r"(?:\b(?:removed|deleted|dropped)\s+(?P<after>\S+))|"
    r"(?:(?P<before>\S+)\s+(?:(?:was|were|is|are|got)\s+)?(?:removed|deleted)\b)",
    re.IGNORECASE)
_FILE = re.compile(r"^[\w@+.-]*[\w@+-]\.[A-Za-z][A-Za-z0-9]{0,9}$")


def _base(path: str) -> str:
    return path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].lower()


def removed_files(text: str) -> frozenset[str]:
    """The file names (last path component, lower case) ``text`` says were removed or
    deleted: "hpa.yaml removed", "Deleted src/lib/reconnect.ts". Only tokens that look
    like a file (a name with an extension) count: "Removed redis" names no file."""
    out = set()
    for match in _REMOVED.finditer(text[:PARSED_TEXT]):
        token = (match["after"] or match["before"] or "").strip("\"'`()[]{}<>,;:!?.")
        name = _base(token)
        if _FILE.match(name):
            out.add(name)
    return frozenset(out)


PARSED_TEXT = 4000
"""A narrative and its facts are read up to here for removed files (bounded work)."""


def reverted(change: Change, title: str) -> bool:
    """Whether an older title is the change a revert undoes: same subject, changed *from*
    what the revert goes back to."""
    if not change.revert:
        return False
    older = parse(title)
    if older is None or older.revert or not older.old or not change.new:
        return False
    return bool(older.old & change.new) and bool(change.subject & words(title))


def pick(change: Change, candidates: Iterable[tuple[int, str]], *,
         removed: frozenset[str] = frozenset(),
         files: dict[int, Sequence[str]] | None = None) -> list[int]:
    """The ids of ``candidates`` (id, title; newest first) that ``change`` supersedes: every
    one it replaces, or for a revert the newest one it undoes. ``removed`` and ``files``
    (id -> files modified): see ``replaces``."""
    if change.revert:
        for oid, title in candidates:
            if reverted(change, title):
                return [oid]
        return []
    held = files or {}
    return [oid for oid, title in candidates
            if replaces(change, title, removed=removed, files=held.get(oid, ()))]


def record_change(conn: apsw.Connection, new_id: int, project: str, type_: str, title: str,
                  created: int) -> list[int]:
    """Link ``new_id`` (already stored, live) by the change its title states, and link it
    under a newer stored change that replaces it (an observation stored late: an import,
    a slow batch). Returns the ids now superseded. Run in the insert's transaction."""
    if type_ not in CHANGING_TYPES:
        return []
    marks = ",".join("?" * len(CHANGING_TYPES))
    rows = conn.execute(
        "SELECT id, title, created_at_epoch, files_modified FROM observations "
        f"WHERE project = ? AND superseded_by IS NULL AND id != ? AND type IN ({marks}) "
        "ORDER BY created_at_epoch DESC, id DESC LIMIT ?",
        (project, new_id, *sorted(CHANGING_TYPES), SCAN)).fetchall()
    older: list[tuple[int, str]] = []
    newer: list[tuple[int, int, str]] = []
    files: dict[int, Sequence[str]] = {}
    for oid, other_title, other_created, other_files in rows:
        key = (integer_or_none(other_created) or 0, integer(oid))
        files[key[1]] = decode_list(text_or_none(other_files))
        if key < (created, new_id):
            older.append((key[1], text_or_none(other_title) or ""))
        else:
            newer.append((*key, text_or_none(other_title) or ""))
    own_files = _modified(conn, new_id) if newer else ()
    for _, oid, other_title in sorted(newer):  # nearest newer first
        change = parse(other_title)
        if change is not None and pick(change, [(new_id, title)],
                                       removed=_removed_by(conn, oid),
                                       files={new_id: own_files}):
            conn.execute("UPDATE observations SET superseded_by = ? WHERE id = ?",
                         (oid, new_id))
            return [new_id]
    change = parse(title)
    ids = pick(change, older, removed=_removed_by(conn, new_id), files=files) \
        if change is not None else []
    if ids:
        conn.execute("UPDATE observations SET superseded_by = ? WHERE id IN "
                     "(SELECT value FROM json_each(?))",
                     (new_id, "[" + ",".join(map(str, ids)) + "]"))
    return ids


def _removed_by(conn: apsw.Connection, oid: int) -> frozenset[str]:
    """The file names observation ``oid``'s facts and narrative say were removed."""
    row = conn.execute("SELECT narrative, facts FROM observations WHERE id = ?",
                       (oid,)).fetchone()
    if row is None:
        return frozenset()
    facts = decode_list(text_or_none(row[1]))
    return removed_files("\n".join([*facts, text_or_none(row[0]) or ""]))


def _modified(conn: apsw.Connection, oid: int) -> Sequence[str]:
    row = conn.execute("SELECT files_modified FROM observations WHERE id = ?",
                       (oid,)).fetchone()
    return decode_list(text_or_none(row[0])) if row is not None else ()
