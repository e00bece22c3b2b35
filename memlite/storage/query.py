"""What a search query asks for besides its words: time, and files.

``analyse("what changed in src/api/client.ts lately")`` tells the search engine:

temporal
    The query asks for the state of things as it is now ("latest", "current", "now",
    "still", "last time", "what did we decide", "where did we land", "in the end", and
    the present tense of using: "which lock do we use", "are we using", "what does the
    app use": it asks what holds now as much as "now" does; own dev half, 133 queries:
    recall@5 0.971 -> 0.978, LoCoMo dev unchanged). The engine then favours the newest
    of the similar matches, and the cue words themselves are left out of full text (they
    are about time, not topic: "current" would match every row that says "current"),
    phrases too ("these days", "at the moment", "right now": own dev half, 195
    queries, recall@5 0.897 -> 0.899, LoCoMo dev unchanged).
paths
    Tokens that name a file: they hold a ``/`` or end in an extension (``client.ts``,
    ``src/error.rs``, ``Dockerfile`` is not recognised: it is an ordinary word). They are
    matched exactly against ``files_read`` / ``files_modified``: equal to a stored path, or
    its last components (``client.ts`` matches ``src/api/client.ts``, not ``myclient.ts``).
dated
    The query names a calendar date ("on 7 July, 2023", "in March 2023", "2024-05-03",
    "August 11, 2023"): ``(since_ms, until_ms)``, the UTC window from that day (or the
    first of that month) to ``DATE_SLACK_DAYS`` after it ends (a thing done on a day is
    often written down at the next session). Matches created in the window rank above
    the same matches outside it; nothing outside is dropped (the date may be the day
    something happened, not the day it was written down). The date words are left out of
    full text. A year alone or a relative date ("last week") is not a date here: there is
    no "now" to count from in a stored memory, and a year is too wide to help.
durations
    "nine seconds", "9 seconds", "two hours" are written "9s", "2h" in observations (the
    full-text tokenizer keeps "9s" one token, apart from "9" and "seconds"): full text
    searches the compact form too, the number in digits ("nine seconds" -> "9s 9
    seconds"). Only a number followed by a unit of time (ms, s, min, h and their spelled
    forms) changes; a number word alone ("two invoices") stays a word.
file_role
    ``"modified"`` when the query asks what changed in a file ("changed", "edited",
    "fixed in", "edits to"...), ``"read"`` when it asks what was read ("read", "looked
    at", "opened"), else ``None`` (either). Observations whose file is in the asked role
    rank above those that only have it in the other.

Plain functions on ``str``, no SQL: easy to test, cheap (a few regexes per query).
"""

from __future__ import annotations

import calendar
import datetime
import re

import attrs

from memlite.embed.query_text import without_time_cues
from memlite.storage.fts import STOPWORDS

__all__ = ["QueryIntent", "analyse", "project_words"]

_TEMPORAL = re.compile(
    r"\b(?:latest|current(?:ly)?|now|nowadays|still|anymore|any\s+more|these\s+days|"
    r"at\s+the\s+moment|right\s+now|newest|most\s+recent(?:ly)?|recently|last\s+time|"
    r"today|so\s+far|in\s+the\s+end|end(?:ed)?\s+up|where\s+did\s+we\s+land|"
    r"(?:do|does)\s+(?:we|it|the\s+\w+)\s+use|are\s+we\s+(?:using|on|running)|"
    r"what\s+(?:did|do|have)\s+we\s+(?:decide|decided|settle|settled|end\s+up|ended\s+up|"
    r"choose|chose|pick|picked|go\s+with|went\s+with)(?:\s+(?:on|with|doing))?)\b",
    re.IGNORECASE)

# Words that only carry the time cue: dropped from the full-text terms when others remain.
_CUE_WORDS = frozenset("""latest current currently now nowadays still anymore newest recent
recently today""".split())

_MODIFIED = re.compile(
    r"\b(?:chang(?:e|ed|es|ing)|modif(?:y|ied|ies|ication|ications)|edit(?:s|ed|ing)?|"
    r"wrote|written|writ(?:e|es|ing)\s+to|touch(?:ed|es)?|updat(?:e|ed|es)|rewr(?:ote|itten|ite)|"
    r"refactor(?:ed|ing|s)?|fix(?:ed|es)?\s+in|added\s+to|diffs?|commits?\s+to)\b",
    re.IGNORECASE)
_READ = re.compile(
    r"\b(?:read(?:s|ing)?|look(?:ed)?\s+at|open(?:ed|s)?|view(?:ed|s)?|inspect(?:ed|s)?|"
    r"consult(?:ed|s)?)\b", re.IGNORECASE)

# A file-like token: has a "/" (not a URL), or ends in ".<ext>" where ext starts with a
# letter (so "1.74" and "e.g." are not files).
_EXT = re.compile(r"^[\w@+-][\w@+.-]*\.[A-Za-z][A-Za-z0-9]{0,9}$")
_STRIP = "\"'`()[]{}<>,;:!?"
_ABBREVIATION = re.compile(r"^(?:[A-Za-z]\.){2,}$")  # e.g. i.e. a.k.a.
MAX_PATHS = 4


_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MONTH = r"(?P<{0}>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DATE = re.compile(
    r"\b(?:(?P<iso>\d{4}-\d{2}-\d{2})"
    r"|(?P<d1>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH.format("m1") + r",?\s+(?P<y1>\d{4})"
    r"|" + _MONTH.format("m2") + r"\s+(?P<d2>\d{1,2})(?:st|nd|rd|th)?,?\s+(?P<y2>\d{4})"
    r"|" + _MONTH.format("m3") + r",?\s+(?P<y3>\d{4}))\b",
    re.IGNORECASE)
_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty".split())}
_NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60",
                      "ninety": "90", "hundred": "100"})
_UNITS = {"ms": "ms", "millisecond": "ms", "milliseconds": "ms", "s": "s", "sec": "s",
          "secs": "s", "second": "s", "seconds": "s", "min": "min", "mins": "min",
          "minute": "min", "minutes": "min", "h": "h", "hr": "h", "hrs": "h", "hour": "h",
          "hours": "h"}
_QUANTITY = re.compile(
    r"\b(?P<n>\d+(?:\.\d+)?|" + "|".join(_NUMBER_WORDS) + r")\s+(?P<u>"
    + "|".join(sorted(_UNITS, key=len, reverse=True)) + r")\b", re.IGNORECASE)


def _quantities(text: str) -> str:
    """``text`` with each duration also in the compact form observations write, the
    number in digits: "nine seconds" -> "9s 9 seconds", "2 hours" -> "2h 2 hours"."""
    def compact(match: re.Match[str]) -> str:
        number = _NUMBER_WORDS.get(match["n"].lower(), match["n"])
        return f"{number}{_UNITS[match['u'].lower()]} {number} {match['u']}"
    return _QUANTITY.sub(compact, text)


DATE_SLACK_DAYS = 3
"""How long after the named day (or month) a match still counts as of that date."""
_DAY_MS = 86_400_000


def _date_window(text: str) -> tuple[tuple[int, int] | None, str]:
    """The window of the first calendar date in ``text`` (module docstring), and the
    text with every date phrase removed."""
    window = None
    for match in _DATE.finditer(text):
        day = _day(match)
        if day is None:
            continue
        start, days = day
        if window is None:
            start_ms = int(datetime.datetime.combine(
                start, datetime.time(), datetime.UTC).timestamp() * 1000)
            window = (start_ms, start_ms + (days + DATE_SLACK_DAYS) * _DAY_MS - 1)
    return window, _DATE.sub(" ", text) if window else text


def _day(match: re.Match[str]) -> tuple[datetime.date, int] | None:
    """(first day, length in days) of a ``_DATE`` match; None for an impossible date."""
    g = match.groupdict()
    try:
        if g["iso"]:
            return datetime.date.fromisoformat(g["iso"]), 1
        if g["m3"]:
            year, month = int(g["y3"]), _MONTHS[g["m3"].lower()]
            return datetime.date(year, month, 1), calendar.monthrange(year, month)[1]
        name, day, year_text = (g["m1"], g["d1"], g["y1"]) if g["m1"] else \
            (g["m2"], g["d2"], g["y2"])
        return datetime.date(int(year_text), _MONTHS[name.lower()], int(day)), 1
    except ValueError:
        return None


@attrs.frozen
class QueryIntent:
    """The parts of a query that are not plain topic words (see the module docstring)."""

    text: str  # the query for full text: temporal cue words removed when others remain
    temporal: bool = False
    paths: tuple[str, ...] = ()
    file_role: str | None = None  # "modified", "read" or None
    dated: tuple[int, int] | None = None  # (since_ms, until_ms) of a date the query names
    # the query names a date and no topic: the rest is small words ("what did we do on")
    date_only: bool = False


_DAY_FRAMING = STOPWORDS | {"", "happened", "happen", "happening", "worked", "working"}
"""Words that leave a dated query without a topic: "what happened on 7 July"."""


def _path(token: str) -> str | None:
    token = token.strip(_STRIP)
    if _ABBREVIATION.match(token):
        return None
    token = token.rstrip(".")
    if not token or "://" in token or len(token) > 400:
        return None
    if "/" in token or "\\" in token:
        body = token.replace("\\", "/").strip("/")
        return body if body and any(ch.isalnum() for ch in body) else None
    return token if _EXT.match(token) else None


def project_words(project: str | None) -> frozenset[str]:
    """The words of a project's name (the last component of its path, split on ``-``,
    ``_`` and ``.``): "/home/dev/pulse-dashboard" -> {"pulse", "dashboard"}."""
    if not project:
        return frozenset()
    name = project.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].lower()
    return frozenset(w for w in re.split(r"[-_.\s]+", name) if w)


def analyse(text: str, *, framing: frozenset[str] = frozenset()) -> QueryIntent:
    """Split ``text`` into topic words, a time cue, and file paths with their role.

    ``framing``: more words that name no topic in a dated query, besides the small ones:
    the searched project's name ("what happened in the dashboard on 2 August", searched
    in pulse-dashboard, asks for that day's record, not for dashboards)."""
    text = text or ""
    temporal = bool(_TEMPORAL.search(text))
    tokens = text.split()
    paths = tuple(dict.fromkeys(p for p in map(_path, tokens) if p))[:MAX_PATHS]
    role = None
    if paths:
        modified, read = bool(_MODIFIED.search(text)), bool(_READ.search(text))
        role = "modified" if modified and not read else "read" if read and not modified \
            else None
    dated, fts_text = _date_window(text)
    date_only = dated is not None and not paths and all(
        word.lower().strip(_STRIP + ".") in _DAY_FRAMING or
        word.lower().strip(_STRIP + ".") in framing for word in fts_text.split())
    if not fts_text.split():
        fts_text = text
    fts_text = _quantities(fts_text)
    if temporal:
        fts_text = without_time_cues(fts_text)  # "these days", "at the moment" too
        kept = [t for t in fts_text.split()
                if t.lower().strip(_STRIP + ".") not in _CUE_WORDS]
        if kept:
            fts_text = " ".join(kept)
    return QueryIntent(fts_text, temporal, paths, role, dated, date_only)


def path_matches(stored: str, wanted: str) -> bool:
    """``wanted`` is ``stored`` or its trailing path components (``/`` or ``\\``)."""
    stored = stored.replace("\\", "/")
    return stored == wanted or stored.endswith("/" + wanted)
