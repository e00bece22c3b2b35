"""The rule engine of the redactor: a pattern run only where its trigger words occur.

STANDARD LIBRARY ONLY (the hook imports it).

Linear time, by construction:

* a rule's pattern is tried only at an occurrence of one of its trigger ``words`` (found
  with ``str.find``: a few µs per 100 kB, where a regex scan per rule costs milliseconds);
* when the words are dense (more than one per ``DENSE`` characters: adversarial or
  generated text), the rule runs as one ``pattern.sub`` in C instead, so a Python loop
  never runs once per trigger on a megabyte of ``eyJeyJeyJ…``;
* every pattern is bounded: explicit length caps, no nested quantifiers over overlapping
  classes, and a look-behind wherever a trigger repeated inside one run of token
  characters could otherwise restart the same long scan (``sk-sk-sk-…``).
  ``tests/privacy/test_linear_time.py`` checks time per byte stays flat, 10 kB to 1 MB.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False
if TYPE_CHECKING:  # no typing import at run time: it costs a hook ~5 ms
    from collections.abc import Iterator
    from typing import Any

__all__ = ["DENSE", "Lazy", "Rule", "budget"]

DENSE = 200  # one trigger per this many characters or more: run the pattern in C
SCHEME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+.-")



_FINDERS: dict[tuple[str, str], re.Pattern[str] | None] = {}


def _finder(word: str, follow: str) -> re.Pattern[str] | None:
    """``word`` where one of ``follow`` (or the end) comes right after it, found by ``re``:
    a text dense with occurrences that are not followed (``passwds' `` x 10,000) costs a
    scan in C, not a Python loop per occurrence. None for a word that can overlap itself
    (``abab``): ``finditer`` would miss overlapping occurrences, the ``find`` loop does not.
    """
    key = (word, follow)
    if key not in _FINDERS:
        bordered = any(word[:k] == word[-k:] for k in range(1, len(word)))
        _FINDERS[key] = None if bordered else re.compile(
            re.escape(word) + "(?=[" + "".join(re.escape(c) for c in follow) + r"]|\Z)")
    return _FINDERS[key]

class Lazy:
    """A pattern compiled on first use (a hook process runs few of them)."""

    __slots__ = ("args", "compiled")

    def __init__(self, *args: Any) -> None:
        self.args = args
        self.compiled: re.Pattern[str] | None = None

    def get(self) -> re.Pattern[str]:
        if self.compiled is None:
            self.compiled = re.compile(*self.args)
        return self.compiled


class Rule:
    """A pattern tried only where one of its ``words`` occurs.

    Every match of ``pattern`` starts at an occurrence of one of ``words`` (or, with ``back``,
    at most ``back`` characters before one: a URL's scheme before ``://``), so the pattern runs
    only there. ``fold``: the words are found in the lower-cased text (case-insensitive names).
    ``gate``: one of these strings must be in the text (the lower-cased text with ``fold``), a
    cheaper first test. Same result as ``pattern.sub`` (leftmost matches, never overlapping:
    ``tests/privacy/test_redaction_corpus.py`` checks it per rule) up to ``budget(len(text))``
    judged matches. ``follow``: the characters that can come right after a trigger word in a
    match (``token=``, ``token:``): other occurrences (``tokens``, ``token is``) are dropped
    before the pattern runs, and do not count as dense; past that (generated or pathological
    text, a megabyte of ``token=a``), ``blunt`` (a plain marker: ``re`` expands a template with
    group references in Python, per match) replaces every further match whole and unjudged, in
    C: over-redaction is the safe way to stay in time.
    """

    __slots__ = ("args", "back", "blunt", "compiled", "fold", "follow", "gate", "name",
                 "replacement", "words")

    def __init__(self, name: str, words: tuple[str, ...], pattern: str, replacement: Any, *,
                 fold: bool = False, back: int = 0, flags: int = 0,
                 gate: tuple[str, ...] = (), blunt: str | None = None,
                 follow: str = "") -> None:
        self.name = name
        self.follow = follow
        self.words = words
        self.gate = gate
        if fold and words and not back:
            # a first-character class lets ``re`` skip ahead in C (a scoped ``(?i:…)``
            # alternation alone is tried at every position: 8 ms per 100 kB, not 1)
            first = sorted({c for word in words for c in (word[0].lower(), word[0].upper())})
            pattern = "(?=[" + "".join(re.escape(c) for c in first) + "])" + pattern
        self.args = (pattern, flags)
        self.replacement = replacement
        if blunt is None:
            blunt = replacement if isinstance(replacement, str) else getattr(
                replacement, "blunt", None)
        self.blunt = blunt
        if self.blunt is None:
            raise ValueError(f"rule {name}: a callable replacement needs a blunt template")
        self.fold = fold
        self.back = back
        self.compiled: re.Pattern[str] | None = None

    def get(self) -> re.Pattern[str]:
        if self.compiled is None:
            self.compiled = re.compile(*self.args)
        return self.compiled

    def _match_back(self, pattern: re.Pattern[str], text: str, pos: int,
                    done: int) -> re.Match[str] | None:
        """The leftmost match starting in the run of scheme characters before ``pos``."""
        begin = pos
        start = max(pos - self.back, done)
        while begin > start and text[begin - 1] in SCHEME_CHARS:
            begin -= 1
        for k in range(begin, pos - 1):
            if (k == begin or text[k - 1] in "+.-") and text[k].isalpha():
                match = pattern.match(text, k)
                if match is not None:
                    return match
        return None

    def _positions(self, haystack: str, words: tuple[str, ...] | list[str],
                   limit: int) -> list[int] | None:
        """Where the words occur (sorted), or None past ``limit`` of them (dense)."""
        positions: list[int] = []
        follow = self.follow
        for word in words:
            finder = _finder(word, follow) if follow else None
            if finder is not None:  # skipping the occurrences not followed runs in C
                for found in finder.finditer(haystack):
                    positions.append(found.start())
                    if len(positions) > limit:
                        return None
                continue
            size = len(word)
            i = haystack.find(word)
            while i >= 0:
                if not follow or haystack[i + size:i + size + 1] in follow:
                    positions.append(i)
                    if len(positions) > limit:
                        return None
                i = haystack.find(word, i + 1)
        if len(words) > 1:
            positions.sort()
        return positions

    def _matches(self, text: str, positions: list[int] | None) -> Iterator[re.Match[str]]:
        pattern = self.get()
        if positions is None:  # dense: one scan in C
            yield from pattern.finditer(text)
            return
        done = 0
        for pos in positions:
            if pos < done:
                continue
            if self.back:
                match = self._match_back(pattern, text, pos, done)
            else:
                match = pattern.match(text, pos)
            if match is None:
                continue
            done = max(match.end(), pos + 1)
            yield match

    def apply(self, text: str, lower: str | None, present: set[str] | None = None) -> str:
        """``text`` with this rule's matches replaced. ``present``: the (lower-case) trigger
        words known to occur in the text (``redact`` found them): the others are not
        searched for."""
        haystack = text
        if self.fold:
            haystack = lower if lower is not None else text.lower()
        if self.gate and not any(gate in haystack for gate in self.gate):
            return text
        words = self.words
        if present is not None and words:
            words = [word for word in words if word.lower() in present]
            if not words:
                return text
        positions: list[int] | None = None
        if words and not (self.fold and len(haystack) != len(text)):
            # (a character whose lower case is longer shifts positions: scan in C)
            positions = self._positions(haystack, words, len(text) // DENSE)
            if positions is not None and not positions:
                return text
        replacement = self.replacement
        left = budget(len(text))
        out: list[str] = []
        last = 0
        for match in self._matches(text, positions):
            if left == 0:  # past the budget: the rest unjudged, in C
                out.append(text[last:match.start()])
                out.append(self.get().sub(self.blunt, text[match.start():]))
                return "".join(out)
            old = match.group(0)
            new = replacement if isinstance(replacement, str) else replacement(match)
            if not isinstance(replacement, str):
                left -= 1
            if new != old:
                out.append(text[last:match.start()])
                out.append(new)
                last = match.end()
        if not out:
            return text
        out.append(text[last:])
        return "".join(out)


def budget(size: int) -> int:
    """Judged matches per rule for a text of ``size`` characters (100 per 100 kB + 100)."""
    return 100 + size // 1000
