"""The SessionStart context block: what a new session of a project is told it remembers.

``build_context(conn, project)`` reads a project's memory on a reader connection (one
sync call, run with ``conn.async_run``) and returns a :class:`ContextBlock`; ``pack`` is
the pure part (records in, text out) that tests drive directly. The string work (item
lines, hygiene, packing) lives in ``memlite.context_text``, standard library only, so
the hook renders the worker-down block (snapshot + spool, docs/delivery.md) with the
same code; ``snapshot_parts`` is what the worker puts in a project's snapshot.

The block is Markdown wrapped in ``<memlite-context>`` … ``</memlite-context>``. It says up
front that it is reference data recalled from earlier sessions, not instructions (Claude
Code's docs warn that imperative "system" text trips prompt-injection defences). Layers,
in priority order:

0. ``notes``: what the user explicitly asked memlite to remember ("remember: we never
   deploy on Fridays"; ``memlite.storage.notes``), the newest NOTE_COUNT live ones, each
   text once, in the user's words. First because the user said so: a chat-only session
   that only said "remember ..." would otherwise rank after every session of work. A
   note is not repeated in the index or the details.
1. ``summaries``: SUMMARY_COUNT session summaries (request, completed, learned, next
   steps): the latest of sessions that did work first, then chat-only ones (see
   ``ranked_summaries``).
2. ``index``: OBSERVATION_COUNT lines, newest first: one per observation (id, time,
   type, title, files), except that a session's reads and searches (rules observations)
   are collapsed into one line and one session's own lines are capped, its older ones
   one line too (``memlite.context_index``: a long session of reads must not push every
   decision and fix out). Superseded observations are left out (DESIGN §1: a
   plain rules observation replaced by the AI's is a link, not a delete).
3. ``details``: narrative, facts and files of FULL_OBSERVATION_COUNT observations: the
   newest that carry signal, a few per session (``context_index.pick_details``).
4. ``raw``: "Recent activity (raw, not yet compressed)": the project's events that no
   observer has turned into observations yet (status ``pending``), grouped by session
   with its prompts: files read and changed, commands run, failures; and the newest
   UNANSWERED_SESSIONS sessions whose last prompt no Stop or SessionEnd followed (the
   CLI killed mid-turn: no summary is ever made of them), shown by their prompts. Until the AI
   observer (and the rules fallback) exist, this is the only thing a next session can
   be told, and it is honest about being raw. Once events are compressed they leave this
   layer and appear as observations instead. At most OBSERVATION_COUNT events.

Packing: items are added in that order, newest first within a layer, while the WHOLE
block (tags, preamble, layer headers, footer) stays within ``max_chars``; the first item
that does not fit ends the packing, so a lower-priority item is never shown while a
higher-priority one is left out. The footer says what was left out (per layer) and how to
get it: memlite's MCP tools memory_search / memory_timeline / memory_get. Space for the
longest possible footer is reserved up front, so the footer can never push the block over
the budget. Token figures are characters / 4, and the block says so. Single fields are
cut (with a marker that counts inside the field's limit, so it is never longer than what
it replaces) so one huge item cannot starve the rest.

Stored text is data from tool calls and models, so it is neutralised before it goes in:
any tag-like ``<`` (``<x``, ``</x``, ``<!``) becomes the fullwidth ``＜`` (a stored title
cannot close our ``</memlite-context>`` or open a ``<system-reminder>``, and no HTML escape
such as ``&lt;`` shows in the Markdown), and single-line fields have
their line breaks folded so they cannot forge a Markdown heading.

Scope: ``project`` is a path (any folder of the project, or its cwd); its identity is the
git top level from ``memlite.project``, never the folder's name, so two checkouts called
``api`` never share memory.
"""

from __future__ import annotations

from typing import Any

import apsw
import attrs

from memlite.context_index import (
    INDEX_SCAN,
    Collapsed,
    Head,
    collapsed_item,
    pick_details,
    plan_index,
    session_counts,
    window,
)
from memlite.context_text import (  # the stdlib half: the hook renders with it too
    CLOSE_TAG,
    LAYER_ORDER,
    LAYER_TITLES,
    MAX_FACT,
    MAX_NARRATIVE,
    MAX_TITLE,
    OPEN_TAG,
    neutralise,
    pack_items,
    raw_event_line,
    raw_session_items,
    with_warning,
)
from memlite.context_text import files as _files
from memlite.context_text import layer_text as _layer_text
from memlite.context_text import line as _line
from memlite.context_text import when as _when
from memlite.project import resolve_project
from memlite.storage.notes import NOTE_CONCEPT, live_notes
from memlite.storage.observing import health_line
from memlite.storage.ranked import ranked_summaries
from memlite.storage.reads import _all as read_all
from memlite.storage.records import Observation, Summary

__all__ = [
    "CLOSE_TAG",
    "LAYER_ORDER",
    "LAYER_TITLES",
    "OPEN_TAG",
    "ContextBlock",
    "ContextData",
    "LayerInfo",
    "Omission",
    "RawEvent",
    "RawSession",
    "SnapshotParts",
    "build_context",
    "load_context_data",
    "neutralise",
    "pack",
    "snapshot_parts",
]


@attrs.frozen(kw_only=True)
class RawEvent:
    """One captured tool event, reduced to what a person would say about it."""

    id: int
    created_at: str
    event_name: str
    tool_name: str
    target: str  # file path, command or pattern ("" when the tool names none)


@attrs.frozen(kw_only=True)
class RawSession:
    """A session with pending (uncompressed) activity, newest events first."""

    session_id: str
    started_at: str
    prompts: tuple[str, ...]
    events: tuple[RawEvent, ...]
    last_answer: str = ""  # Claude's last message of the session (from its Stop event)


@attrs.frozen(kw_only=True)
class ContextData:
    """What the block is built from, newest first in each list."""

    project: str
    notes: tuple[Observation, ...] = ()  # what the user asked to remember
    summaries: tuple[Summary, ...] = ()
    observations: tuple[Observation | Collapsed, ...] = ()  # the index
    full: tuple[Observation, ...] = ()  # shown in full
    raw: tuple[RawSession, ...] = ()


@attrs.frozen(kw_only=True)
class LayerInfo:
    """One layer as packed: ``chars``/``tokens`` cover its whole text, heading included
    (the heading's own "~N tokens" counts the items only)."""

    name: str
    items: int
    chars: int
    tokens: int


@attrs.frozen(kw_only=True)
class Omission:
    layer: str
    count: int


@attrs.frozen(kw_only=True)
class ContextBlock:
    """The block and what went into it. ``text`` is ``""`` (with ``reason``) when empty."""

    project: str
    text: str
    budget: int
    layers: tuple[LayerInfo, ...] = ()
    omitted: tuple[Omission, ...] = ()
    reason: str | None = None

    @property
    def chars(self) -> int:
        return len(self.text)

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "project": self.project, "context": self.text, "chars": self.chars,
            "budget": self.budget,
            "layers": [attrs.asdict(layer) for layer in self.layers],
            "omitted": [attrs.asdict(item) for item in self.omitted],
        }
        if self.reason is not None:
            body["reason"] = self.reason
        return body


# --- items of each layer --------------------------------------------------------------------


MAX_NOTE_LINE = 300


def _note_item(o: Observation) -> str:
    return f"- {_when(o.created_at)} (#{o.id}) {_line(o.title, MAX_NOTE_LINE)}"


def _summary_item(s: Summary) -> str:
    lines = [f"- {_when(s.created_at)} (summary #{s.id}): {_line(s.request) or '(no request)'}"]
    for label, value in (("investigated", s.investigated), ("learned", s.learned),
                         ("completed", s.completed), ("next steps", s.next_steps)):
        if value.strip():
            lines.append(f"  - {label}: {_line(value)}")
    return "\n".join(lines)


def _index_item(o: Observation | Collapsed) -> str:
    if isinstance(o, Collapsed):
        return collapsed_item(o)
    files = tuple(dict.fromkeys((*o.files_modified, *o.files_read)))
    tail = f" — {_files(files, o.project)}" if files else ""
    kind, title = _line(o.type, 40), _line(o.title, MAX_TITLE)
    return f"- #{o.id} {_when(o.created_at)} [{kind}] {title}{tail}"


def _detail_item(o: Observation) -> str:
    lines = [f"### #{o.id} [{_line(o.type, 40)}] {_line(o.title, MAX_TITLE)}"]
    if o.subtitle.strip():
        lines.append(_line(o.subtitle))
    if o.narrative.strip():
        lines.append(_line(o.narrative, MAX_NARRATIVE))
    lines.extend(f"- {_line(fact, MAX_FACT)}" for fact in o.facts[:8])
    if o.files_read:
        lines.append(f"- read: {_files(o.files_read, o.project)}")
    if o.files_modified:
        lines.append(f"- modified: {_files(o.files_modified, o.project)}")
    return "\n".join(lines)


def _raw_items(session: RawSession, project: str) -> list[str]:
    """A session's header (with its prompts) then one line per event; each one item."""
    lines = [raw_event_line(e.created_at, e.event_name, e.tool_name, e.target, project)
             for e in session.events]
    return raw_session_items(session.session_id, session.started_at, session.prompts, lines,
                             session.last_answer)


# --- packing --------------------------------------------------------------------------------


def _layer_items(data: ContextData) -> dict[str, list[str]]:
    raw: list[str] = []
    for session in data.raw:
        raw.extend(_raw_items(session, data.project))
    return {
        "notes": [_note_item(o) for o in data.notes],
        "summaries": [_summary_item(s) for s in data.summaries],
        "index": [_index_item(o) for o in data.observations],
        "details": [_detail_item(o) for o in data.full],
        "raw": raw,
    }


def pack(data: ContextData, max_chars: int) -> ContextBlock:
    """Pack ``data`` by priority into at most ``max_chars`` characters (tags included)."""
    candidates = _layer_items(data)
    if not any(candidates.values()):
        return ContextBlock(project=data.project, text="", budget=max_chars,
                            reason=f"no memory stored yet for project {data.project}")
    text, chosen, omitted = pack_items(data.project, candidates, max_chars)
    layers = tuple(
        LayerInfo(name=name, items=len(items), chars=len(_layer_text(name, items)),
                  tokens=(len(_layer_text(name, items)) + 3) // 4)
        for name, items in chosen.items() if items)
    return ContextBlock(project=data.project, text=text, budget=max_chars, layers=layers,
                        omitted=tuple(Omission(layer=n, count=c) for n, c in omitted))


# --- reading --------------------------------------------------------------------------------

_RAW_SQL = """
SELECT e.id, e.session_id, e.event_name, e.tool_name, e.created_at,
       coalesce(json_extract(e.payload, '$.tool_input.file_path'),
                json_extract(e.payload, '$.tool_input.notebook_path'),
                json_extract(e.payload, '$.tool_input.command'),
                json_extract(e.payload, '$.tool_input.pattern'),
                json_extract(e.payload, '$.tool_input.url'),
                json_extract(e.payload, '$.tool_input.query'),
                json_extract(e.payload, '$.tool_input.path'), '')
FROM events AS e JOIN sessions AS s ON s.id = e.session_id
WHERE s.project = ? AND e.status = 'pending'
  AND e.event_name IN ('PostToolUse', 'PostToolUseFailure')
ORDER BY e.id DESC LIMIT ?
"""


_UNANSWERED_SQL = """
SELECT s.id FROM sessions AS s
WHERE s.project = ? AND EXISTS (
    SELECT 1 FROM events AS p WHERE p.session_id = s.id AND p.event_name = 'UserPromptSubmit'
      AND NOT EXISTS (SELECT 1 FROM events AS e WHERE e.session_id = s.id
                      AND e.event_name IN ('Stop', 'SessionEnd') AND e.id > p.id))
ORDER BY s.started_at DESC LIMIT ?
"""

NOTE_COUNT = 10
"""At most this many notes (``memlite.storage.notes``), the newest live ones, are shown."""

UNANSWERED_SESSIONS = 3
"""At most this many sessions whose last prompt nothing answered or ended (the CLI killed
mid-turn: no Stop, no SessionEnd, so no summary will ever be made) are shown in the raw
layer by their prompts; the newest ones."""


def _raw_sessions(conn: apsw.Connection, project: str, limit: int) -> tuple[RawSession, ...]:
    """Sessions with pending tool events, then sessions whose last prompt no Stop or
    SessionEnd followed (their prompt is all that can reach the next session)."""
    if limit <= 0:
        return ()
    by_session: dict[str, list[RawEvent]] = {}
    for row in conn.execute(_RAW_SQL, (project, limit)):
        event_id, session_id, event_name, tool_name, created_at, target = row
        by_session.setdefault(session_id, []).append(RawEvent(
            id=event_id, created_at=created_at, event_name=event_name,
            tool_name=tool_name or "?", target=str(target)))
    for (session_id,) in conn.execute(_UNANSWERED_SQL, (project, UNANSWERED_SESSIONS)):
        by_session.setdefault(session_id, [])
    sessions = []
    for session_id, events in by_session.items():
        started = conn.execute("SELECT started_at FROM sessions WHERE id = ?",
                               (session_id,)).fetchall()[0][0]
        prompts = tuple(text for (text,) in conn.execute(
            "SELECT prompt_text FROM user_prompts WHERE session_id = ? "
            "ORDER BY prompt_number LIMIT 5", (session_id,)))
        if not events and not prompts:
            continue
        answer = conn.execute(
            "SELECT json_extract(payload, '$.last_assistant_message') FROM events "
            "WHERE session_id = ? AND event_name = 'Stop' ORDER BY id DESC LIMIT 1",
            (session_id,)).fetchall()
        sessions.append(RawSession(session_id=session_id, started_at=started, prompts=prompts,
                                   events=tuple(events),
                                   last_answer=str(answer[0][0] or "") if answer else ""))
    return tuple(sessions)


def _is_note(h: Head) -> bool:
    return h.backend == "rules" and h.type == "decision" and \
        f'"{NOTE_CONCEPT}"' in h.concepts_json


def _records(conn: apsw.Connection, ids: list[int]) -> dict[int, Observation]:
    """The full records of ``ids`` (one read)."""
    if not ids:
        return {}
    found = read_all(conn, Observation, "WHERE id IN (SELECT value FROM json_each(?))",
                     ("[" + ",".join(str(i) for i in dict.fromkeys(ids)) + "]",))
    return {o.id: o for o in found}


def load_context_data(
    conn: apsw.Connection, project: str, *, summary_count: int, observation_count: int,
    full_count: int, raw_count: int | None = None,
) -> ContextData:
    """Read what the block of ``project`` (a project root, already resolved) draws from."""
    notes = live_notes(conn, project, limit=NOTE_COUNT)
    wanted = max(observation_count, full_count)
    heads = [h for h in window(conn, project, max(INDEX_SCAN, wanted + len(notes)))
             if not _is_note(h)] if wanted > 0 else []
    index = plan_index(heads, observation_count)
    session_counts(conn, index)
    details = pick_details(heads, full_count)
    full = _records(conn, [h.id for h in (*index, *details) if isinstance(h, Head)])
    return ContextData(
        project=project,
        notes=notes,
        summaries=ranked_summaries(conn, project, limit=summary_count)
        if summary_count > 0 else (),
        # (a record deleted between the two reads is left out, not an error)
        observations=tuple(full[e.id] if isinstance(e, Head) else e for e in index
                           if not isinstance(e, Head) or e.id in full),
        full=tuple(full[h.id] for h in details if h.id in full),
        raw=_raw_sessions(conn, project,
                          observation_count if raw_count is None else raw_count),
    )


def project_root(path: str) -> str:
    """The project identity of ``path`` (git top level); ``ValueError`` if not absolute."""
    info = resolve_project(path)
    if info is None:
        raise ValueError(f"project must be an absolute path, not {path!r}")
    return info.root


def build_context(
    conn: apsw.Connection, project: str, *, summary_count: int = 3,
    observation_count: int = 50, full_count: int = 5, max_chars: int = 9000,
    raw_count: int | None = None,
) -> ContextBlock:
    """The SessionStart block for the project that ``project`` (a path) belongs to.

    Sync and read-only: run it on a reader connection (``conn.async_run``). The counts
    are the settings SUMMARY_COUNT, OBSERVATION_COUNT, FULL_OBSERVATION_COUNT and
    CONTEXT_MAX_CHARS; ``raw_count`` (default OBSERVATION_COUNT) caps the raw layer.
    """
    root = project_root(project)
    data = load_context_data(conn, root, summary_count=summary_count,
                             observation_count=observation_count, full_count=full_count,
                             raw_count=raw_count)
    warning = health_line(conn, root)
    if warning:
        warning = _line(warning, 400)
        block = pack(data, max_chars - len(warning) - 1)
        text = with_warning(block.text, warning)
        return attrs.evolve(block, text=text, budget=max_chars, reason=None)
    block = pack(data, max_chars)
    if not block.text and (summary_count, observation_count, full_count) == (0, 0, 0):
        block = attrs.evolve(block, reason="SUMMARY_COUNT, OBSERVATION_COUNT and "
                                           "FULL_OBSERVATION_COUNT are all 0: nothing to show")
    return block


def build_context_for(conn: apsw.Connection, project: str, settings: Any) -> ContextBlock:
    """``build_context`` with the counts and budget from a ``Settings``."""
    return build_context(conn, project, summary_count=settings.summary_count,
                         observation_count=settings.observation_count,
                         full_count=settings.full_observation_count,
                         max_chars=settings.context_max_chars)


@attrs.frozen(kw_only=True)
class SnapshotParts:
    """What a context snapshot holds (``memlite.hooks.snapshot``): the block as the worker
    would serve it, its rendered items per layer (all candidates, before packing), so the
    hook can re-pack them with spooled activity, and the health line."""

    block: ContextBlock
    items: dict[str, list[str]]
    warning: str
    raw_cap: int


def snapshot_parts(conn: apsw.Connection, root: str, settings: Any) -> SnapshotParts:
    """The snapshot of project ``root`` (already resolved): the same reads and the same
    packing as ``build_context_for``, plus the rendered items. Sync, read-only."""
    data = load_context_data(conn, root, summary_count=settings.summary_count,
                             observation_count=settings.observation_count,
                             full_count=settings.full_observation_count)
    warning = health_line(conn, root)
    warning = _line(warning, 400) if warning else ""
    budget = settings.context_max_chars
    block = pack(data, budget - (len(warning) + 1 if warning else 0))
    if warning:
        block = attrs.evolve(block, text=with_warning(block.text, warning), budget=budget,
                             reason=None)
    return SnapshotParts(block=block, items=_layer_items(data), warning=warning,
                         raw_cap=settings.observation_count)
