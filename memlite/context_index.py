"""Which observations the context block's activity index and details show (signal first).

Round 7, trial 16-17: after a session of 2,000 tool events under the rules observer, the
50-line index was all "Read part_N" / "Searched for `reconcile_N`", and the 5 full
observations were that burst's last ones: one session of reads pushed every decision,
fix and change of the project out of what the next session is told. Two rules:

* **Reads collapse.** A rules observation of a read, a search, a listing or a command
  that changed nothing (``is_low_signal``: what the rules backend titles "Read ",
  "Searched for ", "Listed ", "Ran `" as a discovery) is not an index line of its own:
  each session's reads become ONE line, where its newest read was, with the session's
  counts ("read 1,200 files under src/recon/, tests/; searched 600 times
  (`reconcile_1`, ...)"), counted over the whole session (``session_counts``, one
  aggregate per collapsed session). The observations stay stored and searchable.
* **One session's share is capped.** At most ``SESSION_SHARE`` of the index's lines come
  from one session's other observations; the rest of that session becomes one line
  ("and 475 older observations of this session: 450 change, 25 discovery; files
  modified: ..."), so a long session of edits leaves room for the sessions before it.

The details layer (observations in full) takes the newest rich observations (an AI
observation, a decision, fix or feature, a failure), at most ``DETAIL_SHARE`` of one
session, then fills up with what is left (other signal first). AI observations are never
collapsed: the AI already decides what is worth a line.

Work is bounded: the index reads the project's newest ``INDEX_SCAN`` live observations
(one indexed range read, light columns only), and when one session floods them the
``INDEX_SCAN`` before that session started (a second range read), plus one aggregate per
collapsed session (the session's index); full records only for what is shown.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import NamedTuple, Protocol

import apsw
import attrs

from memlite.context_text import files as _files
from memlite.context_text import line as _line
from memlite.context_text import relative, when
from memlite.storage.records import decode_list

__all__ = ["DETAIL_SHARE", "INDEX_SCAN", "SESSION_SHARE", "Collapsed", "Head",
           "collapsed_item", "is_low_signal", "pick_details", "plan_index", "session_counts",
           "window"]

INDEX_SCAN = 500
"""Newest live observations of the project read to plan the index and the details."""
SESSION_SHARE = 0.5
"""At most this share of the index's lines (and at least 10) are one session's own."""
DETAIL_SHARE = 3
"""At most this many of one session's observations are shown in full before others."""
MORE_FILES = 50
"""A ``more`` line names files modified by the newest this many of its observations."""
LOW_SIGNAL_TITLES = ("Read ", "Searched for ", "Listed ", "Ran `")


class Head(NamedTuple):
    """The few columns of an observation that planning reads (a full record costs ~20 µs
    of Python each: 500 of them were 10 ms of a 15 ms block; these cost ~1 µs)."""

    id: int
    session_id: str
    project: str
    type: str
    backend: str
    title: str
    created_at: str
    files_modified_json: str
    concepts_json: str
    created_at_epoch: int = 0


class _Kind(Protocol):
    @property
    def backend(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def title(self) -> str: ...


_HEAD = """id, session_id, project, type, backend, title, created_at, files_modified, concepts,
created_at_epoch"""
_WINDOW_SQL = f"""
SELECT {_HEAD} FROM observations WHERE project = ? AND superseded_by IS NULL
ORDER BY created_at_epoch DESC, id DESC LIMIT ?
"""
_LOW_SQL = """(backend = 'rules' AND type = 'discovery' AND (title LIKE 'Read %'
    OR title LIKE 'Searched for %' OR title LIKE 'Listed %' OR title LIKE 'Ran `%'))"""
_BEFORE_SQL = f"""
SELECT {_HEAD} FROM observations
WHERE project = ? AND superseded_by IS NULL AND created_at_epoch < ?
ORDER BY created_at_epoch DESC, id DESC LIMIT ?
"""


def _flooder(heads: Sequence[Head], per_session: int) -> str | None:
    """The session that floods the window, if one does: the one holding most of it, when
    half the window is reads or it holds more signal than its share; else None."""
    low = 0
    own: Counter[str] = Counter()
    signal: Counter[str] = Counter()
    for h in heads:
        own[h.session_id] += 1
        if is_low_signal(h):
            low += 1
        else:
            signal[h.session_id] += 1
    if not own:
        return None
    top = own.most_common(1)[0][0]
    return top if low * 2 >= len(heads) or signal[top] > per_session else None


def window(conn: apsw.Connection, project: str, limit: int,
           per_session: int = 50) -> list[Head]:
    """The project's newest ``limit`` live observations, as heads, newest first; when one
    session floods them (``_flooder``), also the newest ``limit`` from before that session
    started, so a burst longer than the window does not hide the work before it (one
    session-row lookup and one range read of the project's index: bounded whatever the
    burst's length)."""
    heads = {row[0]: Head(*row) for row in conn.execute(_WINDOW_SQL, (project, limit))}
    flooder = _flooder(list(heads.values()), per_session) if len(heads) >= limit else None
    if flooder is not None:
        started = conn.execute("SELECT started_at_epoch FROM sessions WHERE id = ?",
                               (flooder,)).fetchall()
        if started and started[0][0] is not None:
            for row in conn.execute(_BEFORE_SQL, (project, int(started[0][0]), limit)):
                heads.setdefault(row[0], Head(*row))
    return sorted(heads.values(), key=lambda h: (h.created_at_epoch, h.id), reverse=True)


def is_low_signal(o: _Kind) -> bool:
    """A rules observation of a read, search, listing or a command that changed nothing."""
    return o.backend == "rules" and o.type == "discovery" and o.title.startswith(
        LOW_SIGNAL_TITLES)


@attrs.define(kw_only=True)
class Collapsed:
    """One index line standing for several observations of one session.

    ``kind`` is ``reads`` (its low-signal observations) or ``more`` (its observations past
    its share of the index). ``ids`` are those seen in the scanned window (newest first);
    the counts of a ``reads`` line are the whole session's once ``session_counts`` ran.
    """

    kind: str
    session_id: str
    project: str
    items: list[Head] = attrs.field(factory=list)
    counts: dict[str, int] | None = None  # reads: reads, searches...; more: by type
    first_at: str = ""
    last_at: str = ""


Entry = Head | Collapsed


def plan_index(observations: Sequence[Head], count: int) -> list[Entry]:
    """The index lines, newest first, from the newest live observations (newest first).

    The share cap only bites when other sessions fill the index: with room left, it is
    raised until the index is full or nothing is collapsed for it any more."""
    if count <= 0:
        return []
    cap = max(10, int(count * SESSION_SHARE))
    for _ in range(8):  # converges in one or two rounds; bounded all the same
        entries = _plan(observations, count, cap)
        held = sum(len(e.items) for e in entries if isinstance(e, Collapsed)
                   and e.kind == "more")
        if len(entries) >= count or not held:
            break
        cap += count - len(entries)
    return entries


def _collapse(o: Head, kind: str, groups: dict[str, Collapsed], entries: list[Entry],
              full: bool) -> None:
    """Add ``o`` to its session's ``kind`` line, opening that line while there is room."""
    group = groups.get(o.session_id)
    if group is None and not full:
        group = groups[o.session_id] = Collapsed(kind=kind, session_id=o.session_id,
                                                 project=o.project)
        entries.append(group)
    if group is not None:
        group.items.append(o)


def _plan(observations: Sequence[Head], count: int, cap: int) -> list[Entry]:
    entries: list[Entry] = []
    reads: dict[str, Collapsed] = {}
    more: dict[str, Collapsed] = {}
    own: Counter[str] = Counter()
    for o in observations:
        full = len(entries) >= count
        if is_low_signal(o):
            _collapse(o, "reads", reads, entries, full)
        elif own[o.session_id] < cap:
            if not full:
                own[o.session_id] += 1
                entries.append(o)
        else:
            _collapse(o, "more", more, entries, full)
    # A "reads" line of a single read says more as the read itself.
    return [e.items[0] if isinstance(e, Collapsed) and e.kind == "reads"
            and len(e.items) == 1 else e for e in entries]


_RICH_TYPES = frozenset({"decision", "bugfix", "feature"})
_FAILURES = ("Tests failed", "Test run failed", "Command failed")


def _rich(o: _Kind) -> bool:
    """Worth reading in full: what the AI wrote, a decision, fix or feature, a failure."""
    return o.backend != "rules" or o.type in _RICH_TYPES or o.title.startswith(_FAILURES)


def pick_details(observations: Sequence[Head], count: int) -> list[Head]:
    """The observations shown in full, newest first: the newest rich ones (``_rich``), at
    most ``DETAIL_SHARE`` of one session; then the other signal (a rules edit says in
    full little more than its index line), then the rest."""
    if count <= 0:
        return []
    chosen: list[Head] = []
    per: Counter[str] = Counter()
    for o in observations:
        if len(chosen) < count and _rich(o) and per[o.session_id] < DETAIL_SHARE:
            per[o.session_id] += 1
            chosen.append(o)
    taken = {o.id for o in chosen}
    signal = [o for o in observations if not is_low_signal(o)]
    for o in (*(o for o in signal if _rich(o)), *signal, *observations):
        if len(chosen) >= count:
            break
        if o.id not in taken:
            taken.add(o.id)
            chosen.append(o)
    order = {o.id: k for k, o in enumerate(observations)}
    return sorted(chosen, key=lambda o: order[o.id])


# ``+project``: the session's index, not the project's (28 ms -> 0.3 ms at 100k in one
# project: SQLite otherwise walks the whole project).
_MORE_SQL = f"""
SELECT type, count(*), min(created_at) FROM observations
WHERE session_id = ? AND +project = ? AND superseded_by IS NULL AND NOT {_LOW_SQL}
GROUP BY type
"""
_COUNTS_SQL = """
SELECT sum(title LIKE 'Read %'), sum(title LIKE 'Searched for %'), sum(title LIKE 'Listed %'),
       sum(title LIKE 'Ran `%'), min(created_at), max(created_at)
FROM observations
WHERE session_id = ? AND +project = ? AND superseded_by IS NULL AND backend = 'rules'
  AND type = 'discovery'
"""


def session_counts(conn: apsw.Connection, entries: Iterable[Entry]) -> None:
    """Fill in each collapsed line's counts over its whole session (one aggregate each):
    a ``reads`` line's reads, searches...; a ``more`` line's observations by type, less
    those of the session shown as lines of their own."""
    entries = list(entries)
    shown: Counter[tuple[str, str]] = Counter(
        (e.session_id, e.type) for e in entries if isinstance(e, Head))
    for entry in entries:
        if not isinstance(entry, Collapsed):
            continue
        if entry.kind == "more":
            kinds: dict[str, int] = {}
            first = ""
            for kind, n, oldest in conn.execute(_MORE_SQL, (entry.session_id, entry.project)):
                left = int(n) - shown[(entry.session_id, str(kind))]
                if left > 0:
                    kinds[str(kind)] = left
                first = min(first, str(oldest)) if first else str(oldest)
            if kinds:
                entry.counts, entry.first_at = kinds, first
            continue
        row = conn.execute(_COUNTS_SQL, (entry.session_id, entry.project)).fetchall()
        if not row or row[0][0] is None:
            continue
        reads, searches, listings, commands, oldest_at, newest_at = row[0]
        entry.counts = {"reads": int(reads or 0), "searches": int(searches or 0),
                        "listings": int(listings or 0), "commands": int(commands or 0)}
        entry.first_at, entry.last_at = str(oldest_at or ""), str(newest_at or "")


def _dirs(paths: Iterable[str], project: str, top: int = 3) -> str:
    """The folders most read (of the reads seen in the window), most first."""
    counts: Counter[str] = Counter()
    for path in paths:
        shown = relative(path, project)
        counts[shown.rsplit("/", 1)[0] + "/" if "/" in shown else "./"] += 1
    parts = [_line(d, 80) for d, _ in counts.most_common(top)]
    rest = len(counts) - top
    return ", ".join(parts) + (f" (+{rest} more folders)" if rest > 0 else "")


def _span(entry: Collapsed) -> str:
    first = entry.first_at or min(o.created_at for o in entry.items)
    last = entry.last_at or max(o.created_at for o in entry.items)
    start, end = when(first), when(last)
    return start if start == end else f"{start}–{end[11:] if end[:10] == start[:10] else end}"


def _quoted(title: str, prefix: str) -> str:
    return title[len(prefix):].split(" in ", 1)[0].strip()


def collapsed_item(entry: Collapsed) -> str:
    """The one index line of a ``Collapsed`` entry."""
    head = f"- {_span(entry)} session {_line(entry.session_id[:8], 8)}"
    items = entry.items
    if entry.kind == "more":
        kinds = Counter(entry.counts or Counter(o.type for o in items))
        listed = ", ".join(f"{n:,} {_line(k, 40)}" for k, n in kinds.most_common())
        modified = list(dict.fromkeys(f for o in items[:MORE_FILES]
                                      for f in decode_list(o.files_modified_json)))
        tail = f"; files modified: {_files(modified, entry.project)}" if modified else ""
        total = sum(kinds.values())
        return f"{head} [more]: {total:,} older observation{'s' * (total != 1)} of this " \
               f"session ({listed}; newest #{items[0].id}){tail}"
    seen = {"reads": 0, "searches": 0, "listings": 0, "commands": 0}
    for o in items:
        key = ("reads" if o.title.startswith("Read ") else "searches"
               if o.title.startswith("Searched for ") else "listings"
               if o.title.startswith("Listed ") else "commands")
        seen[key] += 1
    counts = entry.counts or seen
    parts = []
    if counts["reads"]:
        files = [o.title[5:] for o in items if o.title.startswith("Read ")]
        parts.append(f"read {counts['reads']:,} file{'s' * (counts['reads'] != 1)} "
                     f"under {_dirs(files, entry.project)}")
    if counts["searches"]:
        patterns = list(dict.fromkeys(_quoted(o.title, "Searched for ") for o in items
                                      if o.title.startswith("Searched for ")))
        shown = ", ".join(_line(p, 40) for p in patterns[:3])
        parts.append(f"searched {counts['searches']:,} time{'s' * (counts['searches'] != 1)}"
                     f" ({shown}{', …' if len(patterns) > 3 else ''})")
    if counts["listings"]:
        parts.append(f"listed {counts['listings']:,} pattern"
                     f"{'s' * (counts['listings'] != 1)}")
    if counts["commands"]:
        commands = list(dict.fromkeys(o.title[4:] for o in items
                                      if o.title.startswith("Ran `")))
        shown = ", ".join(_line(c, 40) for c in commands[:2])
        parts.append(f"ran {counts['commands']:,} command{'s' * (counts['commands'] != 1)}"
                     f" that changed nothing ({shown}{', …' if len(commands) > 2 else ''})")
    return f"{head} [reads, collapsed]: {'; '.join(parts)} — newest #{items[0].id}"
