"""Recognising a quota, auth or rate-limit message where an answer should be.

When Claude Code cannot reach the model, the "answer" is a line of prose: "You've hit
your limit · resets 3pm", "Credit balance is too low", "Invalid API key · Please run
/login", or an ``API Error: 429 {...rate_limit_error...}``. Taken for an answer, it becomes
a junk observation and the event is lost; recognised, it pauses the AI and the events
stay pending. The phrasings below are collected from Claude Code releases, the
Anthropic API's error types, and the peer project's bug reports; matching is
case-insensitive and tolerates the curly apostrophe and the ``·``/``∙`` separators.

Two strengths: STRONG patterns (an API error type, a distinctive sentence) count anywhere
in a reply of at most ``MAX_LIMIT_TEXT`` characters; SHORT patterns (a bare word such as
"overloaded" or "unauthorized") count only in a reply of at most ``MAX_SHORT`` characters,
because a model chatting about an overloaded function is prose, not an outage. The order
is quota, auth, rate limit: "429 ... usage limit reached" is a quota.
"""

from __future__ import annotations

import re

__all__ = ["MAX_LIMIT_TEXT", "MAX_SHORT", "match_limit"]

MAX_LIMIT_TEXT = 3000
MAX_SHORT = 300
_APOS = "['\u2019]"

_STRONG: tuple[tuple[str, str], ...] = (
    ("quota", rf"you{_APOS}ve (hit|reached) your (usage )?limit"),
    ("quota", r"you have (hit|reached) your (usage |specified api usage )?limits?"),
    ("quota", r"claude ai usage limit reached"),
    ("quota", r"\b(5-hour|five-hour|session|weekly|opus weekly|daily|monthly) limit reached"),
    ("quota", r"\busage limit (reached|exceeded)"),
    ("quota", r"credit balance is too low"),
    ("quota", r"(insufficient|out of) (credits?|extra usage)"),
    ("quota", r"exceeded your (current )?quota"),
    ("quota", r"you will regain access on"),
    ("quota", r"limit (will )?resets? (at|on|in)\b"),
    ("quota", r"\bbilling_error\b|purchase (more )?credits"),
    ("auth", r"invalid api key"),
    ("auth", r"please run /login|run /login to"),
    ("auth", r"not logged in|not authenticated|login required|please log ?in"),
    ("auth", r"\bauthentication_error\b|\bpermission_error\b"),
    ("auth", r"oauth token (has )?(expired|revoked|is invalid)"),
    ("auth", r"invalid (x-api-key|bearer token|authentication credentials)"),
    ("auth", r"failed to authenticate|authentication failed"),
    ("auth", r"organization (has been|is) disabled|account (has been|is) (disabled|suspended)"),
    ("auth", r"api error:? 40[13]\b"),
    ("rate_limit", r"\brate_limit_error\b|\boverloaded_error\b"),
    ("rate_limit", r"\brate[- ]limit(ed)?\b.{0,40}(exceeded|reached|hit)|you (are|have been)"
                   r" rate[- ]limited"),
    ("rate_limit", r"\btoo many requests\b"),
    ("rate_limit", r"api error:? (429|5\d\d)\b"),
    ("rate_limit", r"api error:? (request timed out|connection error)"),
    ("rate_limit", r"\b(502 bad gateway|503 service unavailable|504 gateway time-?out)\b"),
    ("rate_limit", r"\"type\"\s*:\s*\"api_error\""),
)
_SHORT: tuple[tuple[str, str], ...] = (
    ("auth", r"\bunauthori[sz]ed\b|\bforbidden\b"),
    ("rate_limit", r"\boverloaded\b|\brate[- ]limit(ed)?\b|\b(429|529)\b"),
    ("rate_limit", r"\b(service|temporarily) unavailable\b|\binternal server error\b"),
)
_COMPILED = tuple((kind, re.compile(pattern, re.IGNORECASE | re.DOTALL))
                  for kind, pattern in _STRONG)
_COMPILED_SHORT = tuple((kind, re.compile(pattern, re.IGNORECASE))
                        for kind, pattern in _SHORT)


def match_limit(text: str) -> tuple[str, str] | None:
    """``(kind, matched words)`` when ``text`` is a quota/auth/rate-limit message, else None.

    ``kind`` is ``"quota"``, ``"auth"`` or ``"rate_limit"``. Call it only on a reply that
    holds none of the observer's XML elements.
    """
    text = text.strip()
    if not text or len(text) > MAX_LIMIT_TEXT:
        return None
    candidates = [*_COMPILED, *(_COMPILED_SHORT if len(text) <= MAX_SHORT else ())]
    for kind in ("quota", "auth", "rate_limit"):
        for pattern_kind, pattern in candidates:
            if pattern_kind == kind and (match := pattern.search(text)):
                return kind, match.group(0)[:80]
    return None
