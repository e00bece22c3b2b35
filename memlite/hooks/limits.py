"""Size limits of a hook event: long strings cut (head and tail kept, with a marker).

STANDARD LIBRARY ONLY (the hook imports it).

A tool can return megabytes (a 50 MB ``cat``); storing or observing all of it costs disk,
tokens and time, and the worker refuses bodies over 8 MiB. So:

1. :func:`precut`, BEFORE the privacy filters: a string over ``PRECUT_OVER`` characters
   keeps its first and last ``PRECUT_KEEP`` characters around a marker. This bounds the
   regex work on a huge field; the kept window is much wider than the final cut, so a
   secret or tag straddling the pre-cut lies outside what :func:`cut` keeps. The tail
   is stripped with ``orphan_close_hides_before`` (its opening tag may be cut away).
2. :func:`fit`, AFTER them: every string over ``FIELD_BUDGET`` characters is cut to that
   budget; if the whole body is still over ``MAX_BODY``, the budget shrinks, then the
   largest top-level fields are replaced by a cut of their JSON text.

The marker reads ``…[memlite: cut 12345 chars]…`` so a reader (and the observer) knows; it
counts inside the budget, so it is never longer than the text it replaces.
"""

from __future__ import annotations

import json

from memlite.privacy import redact, strip_tags

TYPE_CHECKING = False  # no ``typing`` at run time: the hook's start stays lean
if TYPE_CHECKING:
    from typing import overload

__all__ = ["FIELD_BUDGET", "MAX_BODY", "PRECUT_KEEP", "PRECUT_OVER", "cut", "dumps", "fit",
           "precut"]

FIELD_BUDGET = 16 * 1024
MAX_BODY = 1024 * 1024
PRECUT_OVER = 256 * 1024
PRECUT_KEEP = 64 * 1024
_BUDGETS = (FIELD_BUDGET, 4096, 1024, 256)


def marker(count: int) -> str:
    return f"\u2026[memlite: cut {count} chars]\u2026"


def cut(text: str, budget: int) -> str:
    """``text`` if it fits ``budget`` characters, else its head and tail around a marker.

    The whole result, marker included, is at most ``budget`` characters, so the marker
    always stands for more text than it takes: a cut never makes a text longer (a
    121-character title cut to 120 used to grow by a 24-character marker). A budget too
    small to hold the marker keeps the head and one ``…``.
    """
    if len(text) <= budget:
        return text
    if budget <= 0:
        return ""
    keep = budget - len(marker(len(text)))  # the count never has more digits than that
    if keep < 2:
        return text[:budget - 1] + "\u2026"
    head = (keep + 1) // 2
    tail = keep - head
    return text[:head] + marker(len(text) - keep) + text[len(text) - tail:]


def _precut_str(text: str) -> str:
    if len(text) <= PRECUT_OVER:
        return text
    head = text[:PRECUT_KEEP]
    tail = strip_tags(text[-PRECUT_KEEP:], orphan_close_hides_before=True)
    # Filter each side alone here, so a tag opened in the head cannot hide the marker.
    return (redact(strip_tags(head)) + marker(len(text) - 2 * PRECUT_KEEP) + redact(tail))


if TYPE_CHECKING:  # a dict stays a dict (what ``_prepare`` relies on)
    @overload
    def precut(value: dict[str, object]) -> dict[str, object]: ...
    @overload
    def precut(value: object) -> object: ...


def precut(value: object) -> object:
    """Pre-cut every huge string of a JSON value (before the privacy filters)."""
    if isinstance(value, str):
        return _precut_str(value)
    if isinstance(value, dict):
        return {key: precut(item) for key, item in value.items()}
    if isinstance(value, list):
        return [precut(item) for item in value]
    return value


def _cut_all(value: object, budget: int) -> object:
    if isinstance(value, str):
        return cut(value, budget)
    if isinstance(value, dict):
        return {key: _cut_all(item, budget) for key, item in value.items()}
    if isinstance(value, list):
        return [_cut_all(item, budget) for item in value]
    return value


def dumps(value: object) -> bytes:
    """Compact UTF-8 JSON; lone surrogates (from ``\\ud800`` escapes) become ``?``."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace")


def fit(payload: dict[str, object]) -> tuple[dict[str, object], bytes]:
    """Cut ``payload`` to the field budget and the body cap; returns it and its JSON."""
    shaped: dict[str, object]
    for budget in _BUDGETS:
        cut_payload = _cut_all(payload, budget)
        assert isinstance(cut_payload, dict)
        shaped = cut_payload
        body = dumps(shaped)
        if len(body) <= MAX_BODY:
            return shaped, body
    # Many small strings (a huge list): cut the biggest top-level fields as text.
    sizes = sorted(((len(dumps(v)), k) for k, v in shaped.items()), reverse=True)
    for _, key in sizes:
        shaped[key] = cut(dumps(shaped[key]).decode("utf-8"), 4096)
        body = dumps(shaped)
        if len(body) <= MAX_BODY:
            break
    return shaped, body
