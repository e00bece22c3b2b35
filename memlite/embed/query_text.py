"""The text embedded for a search query: its topic, without conversational framing.

A sentence model embeds the whole sentence, framing included: "can you remind me what
the story was with the pdf thing running out of memory" lands between the memory problem
and every other "remind me ..." question. Observations are written as titles and facts
("Celery worker OOM-killed during bulk PDF generation"), with no framing at all, so the
query vector is made without it: leading request framing ("can you remind me", "do you
remember", "tell me about", "any idea", "I was wondering") and story framing ("what the
story was with", "what's the deal with", "what was going on with", "what happened with",
"what was the problem with") are removed, repeatedly, from the start of the query.

Time cue words ("now", "these days", "currently", "still", "today") stay in the embedded
text. Round 6 took them out as well; round 7 measured both on the dev halves grown with
16 "latest / current / now" questions (211 own dev queries, 74 of them temporal): with
the words kept, MiniLM alone's recall@5 0.788 -> 0.794 and hybrid's 0.909 -> 0.910
(temporal 0.838 -> 0.841; hybrid MRR 0.865 -> 0.863), LoCoMo dev the same (hit@5
0.817). The model reads "is minSdk still 24" as a question about the present state,
and "now" next to the topic did not pull towards unrelated text about days. The search
engine still reads the time cue itself (``memlite.storage.query``: the newest similar
matches first), and full text drops the cue words (``without_time_cues``): there they
would match every row that says "current".

Nothing else changes (no stemming, no stop words: the model reads function words well).
When removal would leave no word, the query is embedded as typed. Full text keeps the
framing: it ranks by term statistics, where framing words weigh little. Standard library
only, a few regexes per query.
"""

from __future__ import annotations

import re

__all__ = ["embedding_query", "without_framing", "without_time_cues"]

_REQUEST = (
    r"(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?|please\s+)?"
    r"(?:remind\s+me(?:\s+(?:of|about))?|tell\s+me(?:\s+(?:of|about))?|"
    r"(?:do|did)\s+you\s+(?:remember|recall|know)|recall|"
    r"(?:i\s+was|i'm|i\s+am)\s+wondering|i\s+wonder|any\s+idea|do\s+we\s+know|"
    r"quick\s+question)\b[\s,:;-]*"
)
_STORY = (
    r"(?:(?:what|how)(?:'s|\s+is|\s+was)?\s+(?:the\s+)?"
    r"(?:story|deal|situation|thing|problem|issue|trouble|history)\s+"
    r"(?:(?:was|is)\s+)?(?:with|about|behind|around)|"
    r"what\s+(?:was\s+)?(?:going\s+on|happened|went\s+on)\s+(?:with|about|to)|"
    r"what(?:'s|\s+is)\s+up\s+with)\b[\s,:;-]*"
)
_LEADING = re.compile(rf"^\s*(?:{_REQUEST}|{_STORY})", re.IGNORECASE)
_CUES = re.compile(
    r"\b(?:right\s+now|these\s+days|at\s+the\s+moment|at\s+this\s+point|as\s+of\s+now|"
    r"nowadays|currently|anymore|any\s+more|today|still|now)\b[,]?",
    re.IGNORECASE)
_SPACES = re.compile(r"\s+")


def without_framing(text: str) -> str:
    """``text`` without its leading request and story framing (module docstring); ``text``
    itself when nothing else would be left. (Full text keeps the framing: removing it
    there changed nothing on the dev halves; any-term BM25 weighs such words little.)"""
    stripped = text
    for _ in range(4):  # "can you remind me what the story was with ..." is two layers
        shorter = _LEADING.sub("", stripped, count=1)
        if shorter == stripped:
            break
        stripped = shorter
    return stripped if stripped.strip(" ,;:-?!.") else text


def without_time_cues(text: str) -> str:
    """``text`` without its time cue words and phrases ("these days", "at the moment"),
    spaces collapsed; ``text`` itself when nothing else would be left. For full text's
    terms of a temporal query (``memlite.storage.query``); the embedded text keeps them."""
    stripped = _CUES.sub(" ", text)
    if stripped == text:
        return text
    stripped = _SPACES.sub(" ", stripped).strip(" ,;:-")
    return stripped if stripped.strip("?!. ") else text


def embedding_query(text: str) -> str:
    """``text`` without its leading framing, time cue words kept (module docstring);
    ``text`` itself when nothing else would be left."""
    return without_framing(text)
