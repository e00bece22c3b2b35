"""The cleanup routes: review a project's observations, then delete the ones a person ticks.

``POST /api/cleanup/review`` ``{"project", "mode": "auto"|"ai"|"rules", "limit": 1..500}``
answers ``text/event-stream`` (the page reads it with ``fetch()`` and a stream reader,
since ``EventSource`` cannot POST)::

    event: start    {"project", "by": "ai"|"rules", "candidates": n}
    event: pending  {"id", "type", "title"}                    one per candidate
    event: verdict  {"id", "verdict": "KEEP"|"DELETE", "reason", "by"}
    event: notice   {"message", "fallback": "rules"}           the AI failed: rules go on
    event: done     {"reviewed", "delete", "keep", "by"}       by: "ai", "rules", "ai+rules"

An error once the stream has started ends it with ``event: error {"message"}``, never a
500. Review deletes nothing (``memlite.cleanup`` has the rules and the AI prompt).

Which reviewer: ``rules`` always; ``auto`` the AI when the worker observes with Claude
(``services.observer.make_ai``) and the governor allows (budget left, not paused), else
the rules; ``ai`` the AI or a 409 saying why not. The AI conversation takes its settings
from the observer's (OBSERVER_MODEL, the data dir); tests point it at a fake CLI with
``app.config["MEMLITE_CLEANUP_AI"]``, a dict of ``ConversationConfig`` overrides.

``POST /api/cleanup/apply`` ``{"ids": [...]}`` (at most 1000) deletes each through the
storage actor (audited, actor ``http:cookie`` or ``http:token``) and answers
``{"deleted": [...], "missing": [...]}``.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from quart import Blueprint, Response, current_app, jsonify

from memlite import cleanup
from memlite.actors.storage import DeleteObservation
from memlite.errors import InputError, ObserverUnavailable
from memlite.http.api import ASK_TIMEOUT
from memlite.http.auth import audit_actor
from memlite.http.params import parse_id, read_json_object
from memlite.http.state import current_state
from memlite.http.stream import format_event

__all__ = ["MAX_APPLY_IDS", "MODES", "blueprint"]

blueprint = Blueprint("cleanup_api", __name__)
log = logging.getLogger(__name__)

MODES = ("auto", "ai", "rules")
MAX_APPLY_IDS = 1000
MAX_PROJECT_CHARS = 1000
CONFIG_KEY = "MEMLITE_CLEANUP_AI"
REVIEW_TURN_SECONDS = 120.0  # one batch of 20 judged in one turn


def _review_params(body: dict[str, Any]) -> tuple[str, str, int]:
    project = body.get("project")
    if not isinstance(project, str) or not project.strip():
        raise InputError("field project is required: the project's path, as stored")
    if len(project) > MAX_PROJECT_CHARS:
        raise InputError(f"field project is longer than {MAX_PROJECT_CHARS} characters")
    mode = body.get("mode", "auto")
    if mode not in MODES:
        raise InputError(f"field mode must be one of {', '.join(MODES)}")
    limit = body.get("limit", cleanup.DEFAULT_LIMIT)
    if isinstance(limit, bool) or not isinstance(limit, int) or \
            not 1 <= limit <= cleanup.MAX_LIMIT:
        raise InputError(f"field limit must be a whole number from 1 to {cleanup.MAX_LIMIT}")
    return project.strip(), mode, limit


def _reviewer(mode: str) -> cleanup.AIReviewer | None:
    """The AI reviewer for ``mode``, None for the rules (409 when ``ai`` cannot be had)."""
    if mode == "rules":
        return None
    services = current_state().services
    hub = services.observer
    if hub is None:
        if mode == "ai":
            raise InputError("AI review is not available: this server runs no observer",
                             status=409)
        return None
    overrides = dict(current_app.config.get(CONFIG_KEY) or {})
    if mode == "auto" and hub.make_ai is None:
        return None  # the worker observes by rules (OBSERVER=rules, or no CLI)
    from memlite.observer.conversation import (
        ConversationConfig,
        open_conversation,
        resolve_cli,
    )

    try:
        resolve_cli(overrides.get("cli_path"))
    except ObserverUnavailable as exc:
        if mode == "ai":
            raise InputError(f"AI review is not available: {exc}", status=409) from None
        return None
    overrides.setdefault("turn_timeout", REVIEW_TURN_SECONDS)
    config = ConversationConfig.from_settings(services.settings, "cleanup",
                                              cleanup.SYSTEM_PROMPT, **overrides)
    reviewer = cleanup.AIReviewer(lambda: open_conversation(config), hub.governor,
                                  turn_timeout=config.turn_timeout)
    reason = reviewer.unavailable()
    if reason is not None:
        if mode == "ai":
            raise InputError(f"AI review is not available: {reason}", status=409)
        return None
    return reviewer


async def _events(material: cleanup.Review,
                  reviewer: cleanup.AIReviewer | None) -> AsyncIterator[bytes]:
    # aclosing: when the client goes away Quart closes this generator, and the review's
    # own generator (its CLI, its governor token) is closed then and there, not whenever
    # the garbage collector gets to it. The review runs in the request's task, inside the
    # ``http`` child's nursery, so a stopping worker cancels it within that child's grace.
    try:
        async with contextlib.aclosing(cleanup.review(material, reviewer)) as events:
            async for name, data in events:
                yield format_event(name, data)
    except Exception as exc:  # the stream has started: report it in the stream
        log.warning("cleanup review of %s failed: %r", material.project, exc)
        yield format_event("error", {"message": f"review failed: {type(exc).__name__}: "
                                                f"{str(exc)[:300]}"})


@blueprint.post("/api/cleanup/review")
async def review() -> Response:
    """Stream verdicts on a project's newest observations (see the module docstring)."""
    project, mode, limit = _review_params(await read_json_object())
    reviewer = _reviewer(mode)
    async with current_state().readers.borrow() as conn:
        material = await conn.async_run(cleanup.load_review, conn, project, limit)
    response = Response(_events(material, reviewer), content_type="text/event-stream")
    response.headers["Cache-Control"] = "no-store"
    response.headers["X-Accel-Buffering"] = "no"
    response.timeout = None  # an AI review of 500 observations takes minutes
    return response


@blueprint.post("/api/cleanup/apply")
async def apply() -> Response:
    """Delete the given observations, each audited: ``{"deleted": [...], "missing": [...]}``."""
    body = await read_json_object()
    ids = body.get("ids")
    if not isinstance(ids, list):
        raise InputError("field ids is required and must be an array of observation ids")
    if len(ids) > MAX_APPLY_IDS:
        raise InputError(f"field ids has {len(ids)} ids; at most {MAX_APPLY_IDS} per request")
    wanted = list(dict.fromkeys(parse_id(raw, f"ids[{i}]", text=False)
                                for i, raw in enumerate(ids)))
    actor = audit_actor()
    storage = current_state().services.storage
    deleted: list[int] = []
    missing: list[int] = []
    for obs_id in wanted:
        done = await storage.ask(
            lambda reply, obs_id=obs_id: DeleteObservation(observation_id=obs_id, actor=actor,
                                                           reply=reply),
            timeout=ASK_TIMEOUT)
        (deleted if done else missing).append(obs_id)
    if deleted:  # context snapshots sweep on this (actors/snapshots.py)
        from memlite.ingest import publish

        publish(current_state().services, {"type": "deleted", "what": "observation"})
    return jsonify({"deleted": deleted, "missing": missing})
