"""The observer's pure parts: prompts, reply parsing, the rules backend, supersession.

Nothing here starts a process or talks to the CLI; the session actor plugs these in.

- :mod:`~memlite.observer.prompts`: the system prompt, one ``<event>`` message per event
  (fields cut to a budget, head and tail kept), the summary request.
- :mod:`~memlite.observer.parse`: ``classify(text)`` gives every reply exactly one kind
  (observations, summary, skip, empty, prose, quota, auth, rate_limit, malformed).
- :mod:`~memlite.observer.rules`: the ``rules`` backend (no AI): ``observe`` and
  ``summarize``.
- :mod:`~memlite.observer.supersede`: which rules observations an AI one replaces.

The process side (``conversation``, ``streamjson``, ``launcher``, ``registry``: the
conversation with the CLI over its stream-json protocol and the ownership of its process)
lives beside these and is imported by its own module path. No part of memlite imports
claude-agent-sdk (``streamjson`` says why); the package only brings the CLI binary.
"""

from __future__ import annotations

from memlite.observer.parse import (
    TYPES,
    ParsedObservation,
    ParsedSummary,
    Reply,
    ReplyKind,
    classify,
)
from memlite.observer.prompts import (
    DEFAULT_BUDGET,
    SYSTEM_PROMPT,
    estimate_tokens,
    render_batch,
    render_event,
    render_summary_request,
)
from memlite.observer.rules import observe, summarize
from memlite.observer.supersede import superseded_ids, with_supersedes

__all__ = [
    "DEFAULT_BUDGET",
    "ParsedObservation",
    "ParsedSummary",
    "Reply",
    "ReplyKind",
    "SYSTEM_PROMPT",
    "TYPES",
    "classify",
    "estimate_tokens",
    "observe",
    "render_batch",
    "render_event",
    "render_summary_request",
    "summarize",
    "superseded_ids",
    "with_supersedes",
]
