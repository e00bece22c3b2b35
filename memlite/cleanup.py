"""Review a project's observations for deletion: verdicts only, nothing is deleted here.

A review looks at one project's newest ``limit`` observations (the candidates) and gives
each a ``Verdict``: ``KEEP`` or ``DELETE`` with a one-line reason and who decided
(``by``: ``"ai"`` or ``"rules"``). Deleting what a person then ticks is the HTTP layer's
job (``POST /api/cleanup/apply``, through the storage actor, audited).

Rules (always available; the first that matches decides):

1. **superseded**: ``superseded_by`` is set (a better observation replaced it).
2. **duplicate**: the same title and narrative, after folding case and whitespace, as a
   newer observation of the same project (the newest of each group is kept; it is looked
   for among ALL the project's observations, not only the candidates).
3. **low signal**: a build or test status and nothing else (``Ran tests``, ``Tests
   passed: pytest``, ``Build succeeded``) without facts. A failure is kept: which test
   failed is worth remembering.
4. **empty**: no narrative and no facts, and a title that is only a tool or file name
   (``Read src/app.py``, ``Edit``, ``config.toml``) or shorter than ``MIN_TITLE`` chars.

Anything else is kept (``"no rule matched"``).

AI review (``AIReviewer``): the observer's model judges the candidates in batches of
``BATCH_SIZE`` through one locked-down conversation (the observer's own machinery:
no tools, no settings, our system prompt), holding one of the governor's concurrency
tokens while it is open and counting its tokens against the daily budget. The reply is
parsed strictly (``parse_verdicts``): one ``#<id> KEEP|DELETE - reason`` line per
observation; an id of the batch the model did not judge is KEPT with reason
``"no verdict"``; lines about other ids are ignored. When the AI fails (crash, timeout,
quota, budget spent), ``review`` reviews the rest by rules and says so in a ``notice``.

``review`` yields ``(event, data)`` pairs, the SSE events of ``POST /api/cleanup/review``:
``start``, then per batch a ``pending`` for each candidate and a ``verdict`` for each,
maybe a ``notice``, and ``done`` with the counts.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any

import apsw
import attrs
import trio

from memlite.errors import ObserverError
from memlite.observer.governor import Governor
from memlite.observer.quota import match_limit
from memlite.storage.reads import columns, to_record
from memlite.storage.records import Observation

__all__ = [
    "BATCH_SIZE",
    "DEFAULT_LIMIT",
    "MAX_LIMIT",
    "SYSTEM_PROMPT",
    "AIReviewer",
    "Review",
    "Verdict",
    "load_review",
    "parse_verdicts",
    "render_batch",
    "review",
    "rule_verdict",
]

DEFAULT_LIMIT = 200
MAX_LIMIT = 500
BATCH_SIZE = 20
MIN_TITLE = 12
MAX_REASON = 200
ACQUIRE_SECONDS = 10.0  # waiting for a governor token longer than this: use the rules

KEEP, DELETE = "KEEP", "DELETE"

_TOOLS = ("read", "edit", "multiedit", "write", "bash", "grep", "glob", "ls", "todowrite",
          "webfetch", "websearch", "task", "notebookedit", "wrote", "edited", "used", "ran")
_TOOL_TITLE = re.compile(
    r"^(?:(?:" + "|".join(_TOOLS) + r")\b[:\s]*)?[`'\"]?[\w.~/\\-]*[`'\"]?$", re.IGNORECASE)
_PATHLIKE = re.compile(r"[./\\]")
_LOW_SIGNAL = re.compile(
    r"^(?:"
    r"(?:ran|run|running|re-?ran|executed)\s+(?:the\s+)?(?:full\s+|unit\s+|all\s+)?"
    r"(?:tests?|test\s+suite|build|lint(?:er)?|type\s*check(?:er)?|pytest|tox|make|"
    r"npm\s+(?:test|run\s+\w+)|cargo\s+(?:test|build|check)|go\s+(?:test|build))\b.*"
    r"|(?:all\s+)?(?:tests?|build|lint|checks?|ci)\s+(?:passed|pass|passing|succeeded|ok|"
    r"green|is\s+green)\b.*"
    r"|test\s+run\s+(?:passed|ok|succeeded)\b.*"
    r")$", re.IGNORECASE)
_FAILED = re.compile(r"\b(?:fail(?:ed|ing|ure|s)?|error|broken)\b", re.IGNORECASE)
_SPACE = re.compile(r"\s+")


@attrs.frozen(kw_only=True)
class Verdict:
    """One observation's verdict: ``KEEP`` or ``DELETE``, why (one line), decided by whom."""

    id: int
    verdict: str
    reason: str
    by: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "verdict": self.verdict, "reason": self.reason, "by": self.by}


@attrs.frozen(kw_only=True)
class Review:
    """What a review reads first: the candidates (newest first) and, for each normalised
    (title, narrative), the id of the project's newest observation with it."""

    project: str
    candidates: tuple[Observation, ...]
    newest: dict[tuple[str, str], int]


def _fold(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def dedup_key(title: str, narrative: str) -> tuple[str, str]:
    """What makes two observations duplicates: title and narrative, case and spaces folded."""
    return _fold(title), _fold(narrative)


def load_review(conn: apsw.Connection, project: str, limit: int = DEFAULT_LIMIT) -> Review:
    """Read the review material of ``project`` (one read transaction)."""
    with conn:
        newest: dict[tuple[str, str], int] = {}
        # Oldest first, so the last one written for a key is the newest.
        for obs_id, title, narrative in conn.execute(
                "SELECT id, title, narrative FROM observations WHERE project = ? "
                "ORDER BY created_at_epoch, id", (project,)):
            newest[dedup_key(title, narrative)] = obs_id
        rows = conn.execute(
            f"SELECT {columns(Observation)} FROM observations WHERE project = ? "
            "ORDER BY created_at_epoch DESC, id DESC LIMIT ?", (project, limit)).fetchall()
    return Review(project=project, candidates=tuple(to_record(Observation, r) for r in rows),
                  newest=newest)


def _is_empty(obs: Observation) -> bool:
    if obs.narrative.strip() or any(f.strip() for f in obs.facts):
        return False
    title = obs.title.strip()
    if len(title) < MIN_TITLE:
        return True
    return bool(_TOOL_TITLE.match(title)) and (
        bool(_PATHLIKE.search(title)) or title.split()[0].casefold() in _TOOLS)


def _is_low_signal(obs: Observation) -> bool:
    if any(f.strip() for f in obs.facts):
        return False
    title = _fold(obs.title)
    return bool(_LOW_SIGNAL.match(title)) and not _FAILED.search(title)


def rule_verdict(obs: Observation, newest: dict[tuple[str, str], int]) -> Verdict:
    """The rules' verdict on ``obs`` (see the module docstring for the rules, in order)."""
    def verdict(kind: str, reason: str) -> Verdict:
        return Verdict(id=obs.id, verdict=kind, reason=reason, by="rules")

    if obs.superseded_by is not None:
        return verdict(DELETE, f"superseded: replaced by #{obs.superseded_by}")
    twin = newest.get(dedup_key(obs.title, obs.narrative), obs.id)
    if twin != obs.id:
        return verdict(DELETE, f"duplicate: same title and narrative as newer #{twin}")
    if _is_low_signal(obs):
        return verdict(DELETE, "low signal: a build or test status with no facts")
    if _is_empty(obs):
        return verdict(DELETE, "empty: no narrative or facts, and the title is only a tool "
                               "or file name")
    return verdict(KEEP, "no rule matched")


# --- the AI -------------------------------------------------------------------------------

SYSTEM_PROMPT = """\
You review a developer's memory of past coding sessions and decide which stored \
observations are worth keeping. For each observation you are shown, answer KEEP or DELETE.

DELETE low-signal observations: routine edits that record nothing learned, build or test \
status with no finding, self-referential noise (about the memory tool or the observer \
itself), near-duplicates of another observation, empty or meaningless ones.
KEEP decisions, bug causes and fixes, discoveries about how the code works, features, \
anything a developer would want to remember in a later session.

Answer with exactly one line per observation and nothing else, in this form:
#<id> KEEP - <reason in at most 12 words>
#<id> DELETE - <reason in at most 12 words>
"""

_VERDICT_LINE = re.compile(
    r"^\s*[-*]?\s*\**#?(\d{1,19})\**\s*[:.)\]-]?\s*\**(KEEP|DELETE)\**\b\s*[-:–—]?\s*(.*)$",
    re.IGNORECASE)


def render_batch(observations: Sequence[Observation]) -> str:
    """The user message of one batch: each observation as one JSON object per line."""
    lines = [f"Review these {len(observations)} observations. One line per id."]
    for obs in observations:
        lines.append(json.dumps({
            "id": obs.id, "type": obs.type, "title": obs.title[:300],
            "narrative": obs.narrative[:600], "facts": [f[:200] for f in obs.facts[:8]],
            "files": list(dict.fromkeys(obs.files_modified + obs.files_read))[:8],
        }, ensure_ascii=False))
    return "\n".join(lines)


def parse_verdicts(text: str, ids: Iterable[int]) -> dict[int, tuple[str, str]]:
    """``{id: (verdict, reason)}`` for each id of ``ids`` the reply judged (first line wins).

    Lines that are not verdicts, and verdicts on ids not asked about, are ignored.
    """
    wanted = set(ids)
    found: dict[int, tuple[str, str]] = {}
    for line in text.splitlines():
        match = _VERDICT_LINE.match(line)
        if match is None:
            continue
        obs_id = int(match[1])
        if obs_id in wanted and obs_id not in found:
            reason = _SPACE.sub(" ", match[3]).strip().strip("*").strip()
            found[obs_id] = (match[2].upper(), reason[:MAX_REASON] or "no reason given")
    return found


Connect = Callable[[], AbstractAsyncContextManager[Any]]


class AIReviewer:
    """Judges batches through one observer conversation (see the module docstring).

    Use ``async with reviewer.open():`` around the ``judge`` calls of one review.

    Args:
        connect: opens a conversation (``lambda: open_conversation(config)``).
        governor: the worker's observer governor (concurrency token, daily budget, pause).
        turn_timeout: our deadline per batch.
    """

    def __init__(self, connect: Connect, governor: Governor, *,
                 turn_timeout: float = 120.0, acquire_timeout: float = ACQUIRE_SECONDS) -> None:
        self.connect = connect
        self.governor = governor
        self.turn_timeout = turn_timeout
        self.acquire_timeout = acquire_timeout
        self.tokens_used = 0
        self._conv: Any = None

    def unavailable(self) -> str | None:
        """Why the AI may not be asked now, or None."""
        if not self.governor.budget_left():
            return "today's observer token budget is spent"
        if self.governor.paused_for():
            return f"the observer is paused ({self.governor.pause_reason})"
        return None

    @contextlib.asynccontextmanager
    async def open(self) -> AsyncIterator[AIReviewer]:
        """Hold a governor token and a conversation for the duration of one review."""
        reason = self.unavailable()
        if reason:
            raise ObserverError(reason)
        with trio.move_on_after(self.acquire_timeout) as waited:
            await self.governor.limiter.acquire_on_behalf_of(self)
        if waited.cancelled_caught:
            raise ObserverError("every observer conversation is busy; try again later")
        try:
            async with self.connect() as conv:
                self._conv = conv
                try:
                    yield self
                finally:
                    self._conv = None
        finally:
            self.governor.limiter.release_on_behalf_of(self)

    async def judge(self, batch: Sequence[Observation]) -> list[Verdict]:
        """One verdict per observation of ``batch`` (raises ObserverError on failure)."""
        reason = self.unavailable()
        if reason:
            raise ObserverError(reason)
        if self._conv is None:
            raise ObserverError("the AI reviewer is not open")
        reply = await self._conv.ask(render_batch(batch), timeout=self.turn_timeout)
        tokens = int(reply.input_tokens) + int(reply.output_tokens)
        self.tokens_used += tokens
        self.governor.spend(tokens)
        found = parse_verdicts(reply.text, (o.id for o in batch))
        limit = None if found else match_limit(reply.text)
        if limit is not None and limit[0] in ("quota", "auth", "rate_limit"):
            self.governor.pause(f"{limit[0]}: {limit[1]}")
            raise ObserverError(f"the model answered with a limit: {limit[1]}")
        return [Verdict(id=o.id, verdict=found[o.id][0], reason=found[o.id][1], by="ai")
                if o.id in found else Verdict(id=o.id, verdict=KEEP, reason="no verdict",
                                              by="ai")
                for o in batch]


def _pending(obs: Observation) -> dict[str, Any]:
    return {"id": obs.id, "type": obs.type, "title": obs.title}


async def review(material: Review, ai: AIReviewer | None = None, *,
                 batch_size: int = BATCH_SIZE) -> AsyncIterator[tuple[str, dict[str, Any]]]:
    """The review's events (see the module docstring); ``ai`` None means rules only."""
    candidates = list(material.candidates)
    batches = [candidates[i:i + batch_size] for i in range(0, len(candidates), batch_size)]
    by_used: set[str] = set()
    counts = {DELETE: 0, KEEP: 0}
    yield "start", {"project": material.project, "by": "ai" if ai else "rules",
                    "candidates": len(candidates)}

    def rules(batch: Sequence[Observation]) -> list[Verdict]:
        return [rule_verdict(o, material.newest) for o in batch]

    async def judged(batch: Sequence[Observation]) -> list[Verdict]:
        nonlocal ai
        if ai is not None:
            try:
                return await ai.judge(batch)
            except ObserverError as exc:
                ai = None
                fallback.append(str(exc))
        return rules(batch)

    fallback: list[str] = []
    async with contextlib.AsyncExitStack() as stack:
        if ai is not None and batches:
            try:
                await stack.enter_async_context(ai.open())
            except ObserverError as exc:
                ai = None
                fallback.append(str(exc))
        for index, batch in enumerate(batches):
            for obs in batch:
                yield "pending", _pending(obs)
            verdicts = await judged(batch)
            if fallback:
                left = sum(len(b) for b in batches[index:])
                yield "notice", {"message": f"AI review failed ({fallback.pop()}); the "
                                            f"remaining {left} observations are reviewed "
                                            f"by rules", "fallback": "rules"}
            for verdict in verdicts:
                by_used.add(verdict.by)
                counts[verdict.verdict] += 1
                yield "verdict", verdict.to_json()
    if fallback:  # the AI failed to open with nothing to review
        yield "notice", {"message": f"AI review failed ({fallback.pop()})", "fallback": "rules"}
    by = "+".join(sorted(by_used, key=("ai", "rules").index)) or ("ai" if ai else "rules")
    yield "done", {"reviewed": counts[DELETE] + counts[KEEP], "delete": counts[DELETE],
                   "keep": counts[KEEP], "by": by}
