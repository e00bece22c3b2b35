"""Which prompts ask memlite to remember (or forget) something (STANDARD LIBRARY ONLY).

A user who types "remember: we never deploy on Fridays" into a session with a memory
plugin expects the next session to know it. Such a session often has no tool call at
all, so nothing else of it would ever rank high enough to be shown (round 7, trial 18).
``request(prompt)`` reads a prompt (already redacted, as stored) and says whether it is
an explicit request, and what is to be kept; ``memlite.storage.notes`` stores it as an
observation of its own the moment the prompt is stored (no observer, no model), and the
context block shows the project's notes first.

The set of cues was decided on a list of realistic prompts (``tests/test_remember.py``:
positives and negatives such as "do you remember how the auth middleware works?").
A cue counts only at the start of a sentence (after fillers such as "ok," "also,"
"please"), and a sentence that ends with "?" is a question, not a request (except the
polite "can you remember that ...?"):

=====================================================  ================================
cue                                                    kept text
=====================================================  ================================
remember: X / remember that X / remember this: X       X
remember to X / don't forget to X                      X (an instruction)
don't forget: X / don't forget that X                  X
note that X / note: X / make a note (that) X           X
note to self: X / keep (bear) in mind (that) X         X
for future reference, X / for the record, X            X
can (could, would, will) you remember (note) that X?   X
from now on X / going forward X / in future X          the whole sentence
always X / never X (imperative; not "never mind")      the whole sentence
we (I) always / never X (not a past event: "we never   the whole sentence
got the webhook" is a report, not a rule)
forget (about) X / forget what I said about X /        X, as a ``forget`` request: it
stop remembering X / disregard the note about X        drops the notes it matches
=====================================================  ================================

Left out on purpose: "remember when/how/what ..." (recall, not a request), "note the
output below" (a task), "forget it" / "forget that" alone (a change of mind in the
conversation), a cue inside a sentence ("fix it and remember to update the changelog":
an instruction for this turn). Misses are preferred to guesses: every note is shown to
every later session of the project, so a wrong one costs more than a missed one (which
search still finds through its prompt).
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["MAX_NOTE", "Request", "request"]

MAX_NOTE = 300
"""A note's text is cut here (head kept): notes are one-liners, shown in every block."""

_FILLERS = re.compile(
    r"^(?:(?:ok(?:ay)?|also|and|btw|by the way|hey|so|oh|fyi|please|pls|just|one more "
    r"thing|one last thing|important|claude)\b[\s,:;!.-]*)+", re.IGNORECASE)
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")

_POLITE = re.compile(r"^(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:remember|note|"
                     r"keep\s+in\s+mind)\s*(?:that\b|this\b)?\s*[:,-]?\s*(?P<x>.+)$", re.I)
_KEEP = [
    re.compile(p, re.IGNORECASE) for p in (
        r"^remember(?:\s+(?:this|that))?\s*[:,-]\s*(?P<x>.+)$",
        r"^remember\s+that\s+(?P<x>.+)$",
        r"^remember\s+to\s+(?P<x>.+)$",
        r"^(?:don'?t|do\s+not|never)\s+forget(?:\s+(?:this|that))?\s*[:,-]\s*(?P<x>.+)$",
        r"^(?:don'?t|do\s+not|never)\s+forget\s+(?:that\s+|to\s+)(?P<x>.+)$",
        r"^note\s*(?:that\s+|:\s*)(?P<x>.+)$",
        r"^(?:make|take)\s+a\s+note(?:\s+of\s+(?:this|that))?(?:\s+that)?\s*[:,-]?\s*"
        r"(?P<x>.+)$",
        r"^note\s+to\s+self\s*[:,-]\s*(?P<x>.+)$",
        r"^(?:keep|bear)\s+in\s+mind(?:\s+that)?\s*[:,-]?\s*(?P<x>.+)$",
        r"^for\s+(?:future\s+reference|the\s+record)\s*[:,-]?\s*(?P<x>.+)$",
    )
]
_WHOLE = [
    re.compile(p, re.IGNORECASE) for p in (
        r"^(?:from\s+now\s+on|going\s+forward|in\s+(?:the\s+)?future|henceforth)\b\s*[:,-]?"
        r"\s*\S.*$",
        r"^(?:always|never)\s+(?!mind\b)[a-z]+\b.*$",
    )
]
_HABIT = re.compile(r"^(?:we|i)\s+(?:should\s+|must\s+|will\s+)?(?:always|never)\s+"
                    r"(?P<verb>[a-z']+)\b.*$", re.IGNORECASE)
_NOT_A_RULE = frozenset("""
got get gets had did was were saw see sees heard hear hears found find knew know knows
thought think seem seems seemed receive received understood understand mind
""".split())
_FORGET = re.compile(
    r"^(?:(?:you\s+can|please)\s+)?(?:forget|disregard|stop\s+remembering|no\s+need\s+to\s+"
    r"remember)\s+(?:about\s+)?(?:what\s+i\s+(?:said|told\s+you)\s+about\s+|the\s+(?:note|"
    r"rule|instruction)\s+(?:about|that)\s+|my\s+note\s+about\s+|that\s+(?=\w+\s+\w+))?"
    r"(?P<x>.+)$", re.IGNORECASE)
_VAGUE = frozenset({"it", "that", "this", "everything", "all", "all that", "all of that",
                    "it all", "about it", "them", "those", "these", "me"})


class Request(NamedTuple):
    """An explicit request: ``kind`` is ``remember`` or ``forget``; ``text`` what to keep
    (or drop), in the user's words, at most ``MAX_NOTE`` characters."""

    kind: str
    text: str


def _clean(text: str) -> str:
    text = " ".join(text.split()).strip(" \t-–—:;,")
    if len(text) > MAX_NOTE:
        text = text[:MAX_NOTE - 1].rstrip() + "…"
    return text[:1].upper() + text[1:]


def _sentence(text: str) -> Request | None:
    s = _FILLERS.sub("", text.strip()).strip()
    if len(s) < 4:
        return None
    question = s.rstrip().endswith("?")
    if found := _POLITE.match(s):
        return Request("remember", _clean(found["x"].rstrip("?")))
    if question:
        return None
    if found := _FORGET.match(s):
        target = re.split(r"[,;]", found["x"], maxsplit=1)[0].strip(" .!")
        if target.lower() in _VAGUE or len(target) < 3:
            return None
        return Request("forget", _clean(target))
    for pattern in _KEEP:
        if found := pattern.match(s):
            kept = found["x"].strip()
            return Request("remember", _clean(kept)) if len(kept) >= 3 else None
    for pattern in _WHOLE:
        if pattern.match(s):
            return Request("remember", _clean(s))
    if (found := _HABIT.match(s)) and found["verb"].lower() not in _NOT_A_RULE \
            and not found["verb"].lower().endswith("ed"):
        return Request("remember", _clean(s))
    return None


def request(prompt: str) -> Request | None:
    """The first explicit request to remember or forget in ``prompt``, or None.

    Only the cue's sentence is kept (the rest of the prompt is usually the task of the
    turn: "remember: we never deploy on Fridays. Now fix the flaky test"); the whole
    prompt is the note's narrative.
    """
    if not prompt or not prompt.strip():
        return None
    for sentence in _SENTENCES.split(prompt.strip()[:4000]):
        if sentence.strip() and (found := _sentence(sentence)) is not None:
            return found
    return None
