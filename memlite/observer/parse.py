"""Strict parsing of the observer's replies: every reply gets exactly one kind.

``classify(text, project=...)`` never raises. Its :class:`Reply` has one ``kind``:

==============  ==========================================================================
observations    one or more valid ``<observation>`` blocks (``<skip/>`` may sit beside them)
summary         exactly one valid ``<summary>``
skip            ``<skip/>`` only: the event is not worth keeping
empty           nothing but whitespace
prose           text with no XML at all (the model chatted instead of answering)
quota           a usage or credit limit ("You've hit your limit", "Credit balance is too low")
auth            not logged in or bad credentials ("Invalid API key · Please run /login")
rate_limit      rate limited, overloaded or a transient API error: retry with backoff
malformed       XML-looking but invalid: unknown or missing type, no title, unclosed tags,
                nested garbage, a DTD, two summaries, a summary beside observations
==============  ==========================================================================

Only ``observations`` and ``summary`` carry anything to store; ``quota``, ``auth`` and
``rate_limit`` (``Reply.pauses``) mean the AI is paused and the events stay pending. Limit
phrasings are recognised only in replies that hold none of our elements, so an observation
*about* a rate limiter is still an observation.

How the XML is read safely: the text is first cut into tokens. Only OUR tag names become
tags (rebuilt without attributes); every other ``<``, ``>`` and stray ``&`` is escaped, so
``Vec<String>`` in a fact stays text and a ``<!DOCTYPE``/``<!ENTITY`` can never reach the
parser (we also refuse them outright). Characters XML forbids are dropped. The rebuilt text
is wrapped in one root and parsed by ``xml.etree``: without a DTD, expat expands nothing.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from typing import Literal
from xml.sax.saxutils import escape

import attrs

from memlite.observer.quota import match_limit
from memlite.observer.shape import normalise_path
from memlite.storage.records import NewObservation, NewSummary

__all__ = ["TYPES", "ParsedObservation", "ParsedSummary", "Reply", "ReplyKind", "classify"]

ReplyKind = Literal["observations", "summary", "skip", "empty", "prose", "quota", "auth",
                    "rate_limit", "malformed"]
TYPES = frozenset({"bugfix", "feature", "refactor", "discovery", "decision", "change"})
MAX_REPLY = 1024 * 1024
CAPS = {"title": 200, "subtitle": 400, "narrative": 4000, "type": 40}
LISTS = {"facts": ("fact", 20, 500), "concepts": ("concept", 20, 100),
         "files_read": ("file", 100, 1000), "files_modified": ("file", 100, 1000)}
SUMMARY_FIELDS = ("request", "investigated", "learned", "completed", "next_steps")
SUMMARY_CAP = 4000
_TAGS = ("observation", "summary", "skip", *CAPS, *LISTS, "fact", "concept", "file",
         *SUMMARY_FIELDS)
_TOKEN = re.compile(r"<(/?)(" + "|".join(sorted(_TAGS, key=len, reverse=True))
                    + r")(\s[^<>]*|/)?>", re.IGNORECASE)
_ENTITY = re.compile(r"&(?!(?:amp|lt|gt|quot|apos|#[0-9]{1,7}|#x[0-9a-fA-F]{1,6});)")
_NUMREF = re.compile(r"&#(x[0-9a-fA-F]{1,6}|[0-9]{1,7});")
_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_DTD = re.compile(r"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)
_TAG_LIKE = re.compile(r"<[/!?]?[A-Za-z]")
_SPACES = re.compile(r"\s+")


@attrs.frozen(kw_only=True)
class ParsedObservation:
    """A valid observation from a reply (every field stripped and capped)."""

    type: str
    title: str
    subtitle: str = ""
    narrative: str = ""
    facts: tuple[str, ...] = ()
    concepts: tuple[str, ...] = ()
    files_read: tuple[str, ...] = ()
    files_modified: tuple[str, ...] = ()

    def to_new(self, *, session_id: str, project: str, source_event_ids: Iterable[int],
               supersedes: Iterable[int] = (), branch: str | None = None,
               commit_sha: str | None = None, backend: str = "ai") -> NewObservation:
        """The observation to store, linked to the events it came from."""
        return NewObservation(session_id=session_id, project=project,
                              source_event_ids=tuple(source_event_ids),
                              supersedes=tuple(supersedes), branch=branch,
                              commit_sha=commit_sha, backend=backend, **attrs.asdict(self))

    def to_xml(self) -> str:
        """The observation as the observer writes it (fakes and tests use this)."""
        def items(tag: str, child: str, values: tuple[str, ...]) -> str:
            inner = "".join(f"<{child}>{escape(v)}</{child}>" for v in values)
            return f"<{tag}>{inner}</{tag}>"
        return (f"<observation><type>{self.type}</type><title>{escape(self.title)}</title>"
                f"<subtitle>{escape(self.subtitle)}</subtitle>"
                f"<narrative>{escape(self.narrative)}</narrative>"
                + items("facts", "fact", self.facts) + items("concepts", "concept", self.concepts)
                + items("files_read", "file", self.files_read)
                + items("files_modified", "file", self.files_modified) + "</observation>")


@attrs.frozen(kw_only=True)
class ParsedSummary:
    """A valid session summary (each field stripped and capped; any may be empty)."""

    request: str = ""
    investigated: str = ""
    learned: str = ""
    completed: str = ""
    next_steps: str = ""

    def to_new(self, *, session_id: str, project: str) -> NewSummary:
        """The summary to store."""
        return NewSummary(session_id=session_id, project=project, **attrs.asdict(self))

    def to_xml(self) -> str:
        """The summary as the observer writes it."""
        body = "".join(f"<{name}>{escape(getattr(self, name))}</{name}>"
                       for name in SUMMARY_FIELDS)
        return f"<summary>{body}</summary>"


@attrs.frozen(kw_only=True)
class Reply:
    """One classified reply. ``reason`` says why for malformed and limit replies."""

    kind: ReplyKind
    observations: tuple[ParsedObservation, ...] = ()
    summary: ParsedSummary | None = None
    reason: str = ""

    @property
    def pauses(self) -> bool:
        """True for quota, auth and rate-limit replies: pause the AI, keep events pending."""
        return self.kind in ("quota", "auth", "rate_limit")


class _Invalid(Exception):
    """A reply that looks like ours but breaks the format (becomes ``malformed``)."""


def _valid_ref(match: re.Match[str]) -> str:
    ref = match.group(1)
    code = int(ref[1:], 16) if ref[0] in "xX" else int(ref)
    ok = code in (9, 10, 13) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD \
        or 0x10000 <= code <= 0x10FFFF
    return match.group(0) if ok else "&amp;" + match.group(0)[1:]


def _text(segment: str) -> str:
    segment = _ENTITY.sub("&amp;", segment)
    segment = _NUMREF.sub(_valid_ref, segment)
    return segment.replace("<", "&lt;").replace(">", "&gt;")


def _rebuild(text: str) -> tuple[str, bool]:
    """Our tags as clean tags, everything else escaped; and whether any tag was found."""
    out, pos, found = [], 0, False
    for match in _TOKEN.finditer(text):
        out.append(_text(text[pos:match.start()]))
        close, name, rest = match.groups()
        name, empty = name.lower(), (rest or "").rstrip().endswith("/")
        if close and empty:
            raise _Invalid(f"bad tag {match.group(0)[:40]!r}")
        out.append(f"</{name}>" if close else f"<{name}/>" if empty else f"<{name}>")
        pos, found = match.end(), True
    out.append(_text(text[pos:]))
    return "".join(out), found


def _leaf(element: ET.Element, cap: int, *, one_line: bool = False) -> str:
    if len(element):
        raise _Invalid(f"<{element.tag}> holds <{element[0].tag}>")
    text = (element.text or "").strip()
    if one_line:
        text = _SPACES.sub(" ", text)
    return text[:cap].rstrip()


def _items(element: ET.Element, child: str, count: int, cap: int) -> list[str]:
    if (element.text or "").strip():
        raise _Invalid(f"<{element.tag}> holds text outside <{child}>")
    values = []
    for item in element:
        if item.tag != child:
            raise _Invalid(f"<{element.tag}> holds <{item.tag}>")
        if (item.tail or "").strip():
            raise _Invalid(f"<{element.tag}> holds text outside <{child}>")
        value = _leaf(item, cap)
        if value and value not in values:
            values.append(value)
    return values[:count]


def _children(element: ET.Element, allowed: set[str]) -> dict[str, ET.Element]:
    if (element.text or "").strip():
        raise _Invalid(f"text directly inside <{element.tag}>")
    seen: dict[str, ET.Element] = {}
    for child in element:
        if child.tag not in allowed:
            raise _Invalid(f"<{child.tag}> inside <{element.tag}>")
        if child.tag in seen:
            raise _Invalid(f"two <{child.tag}> in one <{element.tag}>")
        if (child.tail or "").strip():
            raise _Invalid(f"text directly inside <{element.tag}>")
        seen[child.tag] = child
    return seen


def _observation(element: ET.Element, project: str | None) -> ParsedObservation:
    fields = _children(element, {*CAPS, *LISTS})
    single = {name: _leaf(fields[name], cap, one_line=name in ("type", "title", "subtitle"))
              if name in fields else "" for name, cap in CAPS.items()}
    kind = single.pop("type").lower()
    if kind not in TYPES:
        raise _Invalid(f"unknown type {kind!r}" if kind else "no <type>")
    if not single["title"]:
        raise _Invalid("no <title>")
    lists = {name: _items(fields[name], child, count, cap) if name in fields else []
             for name, (child, count, cap) in LISTS.items()}
    concepts = list(dict.fromkeys(c.lower() for c in lists["concepts"]))
    files = {name: tuple(dict.fromkeys(p for p in (normalise_path(f, project)
                                                    for f in lists[name]) if p))
             for name in ("files_read", "files_modified")}
    return ParsedObservation(type=kind, **single, facts=tuple(lists["facts"]),
                             concepts=tuple(concepts), **files)


def _summary(element: ET.Element) -> ParsedSummary:
    fields = _children(element, set(SUMMARY_FIELDS))
    values = {name: _leaf(fields[name], SUMMARY_CAP) for name in SUMMARY_FIELDS
              if name in fields}
    if not any(values.values()):
        raise _Invalid("empty <summary>")
    return ParsedSummary(**values)


def _classify_xml(root: ET.Element, project: str | None) -> Reply:
    observations, summaries, skips = [], [], 0
    for element in root:
        if element.tag == "observation":
            observations.append(_observation(element, project))
        elif element.tag == "summary":
            summaries.append(_summary(element))
        elif element.tag == "skip":
            if len(element) or (element.text or "").strip():
                raise _Invalid("<skip> is not empty")
            skips += 1
        else:
            raise _Invalid(f"<{element.tag}> outside <observation>/<summary>")
    if summaries and (observations or len(summaries) > 1):
        raise _Invalid("a summary must be the only element of its reply")
    if observations:
        return Reply(kind="observations", observations=tuple(observations))
    if summaries:
        return Reply(kind="summary", summary=summaries[0])
    return Reply(kind="skip")


def classify(text: str, *, project: str | None = None) -> Reply:
    """Classify one reply of the observer; never raises.

    Args:
        text: the reply's text (all text blocks of the turn, joined).
        project: the project root; file paths inside it are made relative.
    """
    if not isinstance(text, str) or not text.strip():
        return Reply(kind="empty")
    if len(text) > MAX_REPLY:
        return Reply(kind="malformed", reason=f"reply of {len(text)} characters")
    text = _INVALID.sub("", text)
    try:
        if _DTD.search(text):
            raise _Invalid("DOCTYPE/ENTITY declarations are not allowed")
        clean, found = _rebuild(text)
        if not found:
            limit = match_limit(text)
            if limit is not None:
                return Reply(kind=limit[0], reason=limit[1])
            if _TAG_LIKE.search(text):
                return Reply(kind="malformed", reason="no <observation>, <summary> or <skip/>")
            return Reply(kind="prose")
        try:
            root = ET.fromstring(f"<reply>{clean}</reply>")
        except ET.ParseError as exc:
            raise _Invalid(f"not well-formed: {exc}") from None
        return _classify_xml(root, project)
    except _Invalid as exc:
        return Reply(kind="malformed", reason=str(exc))
