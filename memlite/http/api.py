"""The worker's write and status routes: health, readiness, ingestion, settings, deletes.

Request and response bodies are JSON objects with snake_case keys (the same words as the
hook payloads and the stored records). Errors are ``{"error", "status"}`` (errors.py).
Reads (search, timeline, batch, context) are in ``read_api.py``, SSE in ``stream.py``.

Ingestion routes hand the body to ``memlite.ingest.ingest_hook_event`` with a fixed hook
event name and answer only after the storage actor has committed the event:

================================  ===============================================
``POST /api/sessions``            ``UserPromptSubmit`` if the body has ``prompt``, else
                                  ``SessionStart`` (create or resume; stores the prompt)
``POST /api/events``              the body's own ``hook_event_name``
``POST /api/summarize``           ``Stop``
``POST /api/sessions/complete``   ``SessionEnd``
================================  ===============================================

Each answers ``{"event_id", "created", "session_id", "skipped"}``.
"""

from __future__ import annotations

import time
from typing import Any

import attrs
import trio
from quart import Blueprint, Response, jsonify, request

from memlite.actors.session import ListSessions
from memlite.actors.storage import DeleteObservation, DeleteSession, DeleteSummary, RecordAudit
from memlite.config import SPECS, save_settings
from memlite.errors import ConfigError, InputError, NotFound
from memlite.http.auth import audit_actor
from memlite.http.params import parse_id, read_json_object
from memlite.http.state import current_state
from memlite.ingest import ingest_hook_event, publish
from memlite.services import Services

__all__ = ["ASK_TIMEOUT", "RESTART_KEYS", "blueprint", "health_body"]

blueprint = Blueprint("api", __name__)

ASK_TIMEOUT = 10.0  # storage answers in milliseconds; this is "it is stuck", not "it is slow"
DEBUG_ASK_TIMEOUT = 2.0
RESTART_KEYS = frozenset({"WORKER_PORT"})  # take effect only when the worker restarts
_SECRET_KEYS = frozenset(spec.key for spec in SPECS if spec.secret)
MAX_SESSION_ID = 256


# --- liveness, readiness, debug -----------------------------------------------------------


@blueprint.get("/api/health")
async def health() -> Response:
    """Liveness (no auth): ``{"status": "ok", "pid", "version", "uptime", "observer"}``.

    ``observer`` is one line when a session's observations failed N times in a row (or
    the AI is paused), else null. ``degraded`` names the optional children (embedder,
    pruner, reaper, idle) given up for failing too often, with their last error: the
    worker stores and serves without them (search by full text when it is the embedder).
    """
    return jsonify(health_body(current_state().services))


def health_body(services: Services) -> dict[str, Any]:
    """``/api/health``'s answer (also served by ``fast.py`` in front of Quart)."""
    hub = services.observer
    return {"status": "ok", "pid": services.pid, "version": services.version,
            "uptime": round(trio.current_time() - services.started_at, 3),
            "observer": hub.health_line() if hub is not None else None,
            "degraded": services.degraded()}


@blueprint.get("/api/readiness")
async def readiness() -> Response:
    """200 ``{"status": "ready", ...}`` once the database is open and migrated, else 503."""
    services = current_state().services
    if not services.ready.is_set():
        response = jsonify({"error": "not ready: the database is being opened", "status": 503,
                            "ready": False, "pid": services.pid})
        response.status_code = 503
        response.headers["Retry-After"] = "1"
        return response
    return jsonify({"status": "ready", "ready": True, "pid": services.pid,
                    "version": services.version})


def _memory() -> dict[str, int | None]:
    """Resident and peak memory of this process, from ``/proc/self/status`` (bytes).

    Without /proc (macOS) the peak comes from ``getrusage`` and the resident size is None.
    """
    found: dict[str, int | None] = {"rss_bytes": None, "peak_rss_bytes": None}
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as f:
            for line in f:
                name, _, value = line.partition(":")
                key = {"VmRSS": "rss_bytes", "VmHWM": "peak_rss_bytes"}.get(name)
                if key:
                    found[key] = int(value.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    if found["peak_rss_bytes"] is None:  # no /proc (macOS): the kernel's own peak figure
        import resource
        import sys

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        found["peak_rss_bytes"] = peak if sys.platform == "darwin" else peak * 1024
    return found


def _mailbox(ref: Any) -> dict[str, Any] | None:
    statistics = getattr(ref, "statistics", None)
    if statistics is None:
        return None
    try:
        return attrs.asdict(statistics())
    except Exception:  # a ref whose actor is between restarts has no mailbox to show
        return None


def _observer(hub: Any) -> dict[str, Any] | None:
    """The governor's figures: tokens today, conversations open, pause."""
    if hub is None:
        return None
    return {**attrs.asdict(hub.governor.statistics()), "health": hub.health_line()}


@blueprint.get("/api/debug/sessions")
async def debug_sessions() -> Response:
    """Session actors (idle, uptime, mailbox depth, observer pid) and the worker's memory."""
    services = current_state().services
    sessions = await services.sessions.ask(lambda reply: ListSessions(reply=reply),
                                           timeout=DEBUG_ASK_TIMEOUT)
    return jsonify({
        "pid": services.pid,
        "version": services.version,
        "uptime_seconds": round(trio.current_time() - services.started_at, 3),
        **_memory(),
        "requests": services.activity.requests,
        "observer": _observer(services.observer),
        "sessions": [attrs.asdict(s) if attrs.has(type(s)) else dict(s) for s in sessions],
        "mailboxes": {name: _mailbox(ref) for name, ref in
                      (("storage", services.storage), ("sessions", services.sessions),
                       ("bus", services.bus))},
    })


# --- ingestion ------------------------------------------------------------------------------


EVENT_AT_HEADER = "X-Memlite-Event-At"
EVENT_AT_MAX_AGE_MS = 7 * 24 * 3600 * 1000


def _event_at(now: int) -> int | None:
    """The hook's own time of the event (``X-Memlite-Event-At``, epoch ms), or None (now).

    The hook sends it so that a request answered late (a hung worker that resumed after
    the hook gave up and spooled the event) is dated when it happened, as its spooled copy
    is. A value in the future is taken as now; one older than a week, or not a number, is
    ignored (a clock that jumped).
    """
    raw = request.headers.get(EVENT_AT_HEADER, "")
    if not raw.isdigit() or len(raw) > 16:
        return None
    at = int(raw)
    return min(at, now) if at >= now - EVENT_AT_MAX_AGE_MS else None


async def _ingest(event_name: str | None, payload: dict[str, Any]) -> Response:
    at_ms = _event_at(int(time.time() * 1000))
    result = await ingest_hook_event(current_state().services, payload, event_name=event_name,
                                     at_ms=at_ms)
    return jsonify({"event_id": result.event_id, "created": result.created,
                    "session_id": result.session_id, "skipped": result.skipped})


@blueprint.post("/api/sessions")
async def start_session() -> Response:
    payload = await read_json_object()
    return await _ingest("UserPromptSubmit" if "prompt" in payload else "SessionStart", payload)


@blueprint.post("/api/events")
async def store_event() -> Response:
    return await _ingest(None, await read_json_object())


@blueprint.post("/api/summarize")
async def summarize() -> Response:
    return await _ingest("Stop", await read_json_object())


@blueprint.post("/api/sessions/complete")
async def complete_session() -> Response:
    return await _ingest("SessionEnd", await read_json_object())


# --- settings -------------------------------------------------------------------------------


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


@blueprint.get("/api/settings")
async def get_settings() -> Response:
    """``{"settings": {KEY: {"value", "source", "default", "doc"}}}``, secrets left out."""
    return jsonify({"settings": current_state().services.settings.public()})


@blueprint.put("/api/settings")
async def put_settings() -> Response:
    """Validate, persist and audit ``{KEY: value, ...}``; the new settings apply at once.

    Answer: ``{"settings", "changed", "restart_required", "overridden_by_env"}``.
    """
    updates = await read_json_object()
    if not updates:
        raise InputError("no settings given: send an object such as {\"SUMMARY_COUNT\": 5}")
    state = current_state()
    services = state.services
    async with state.settings_lock:
        old = services.settings
        try:
            new = await trio.to_thread.run_sync(save_settings, services.data_dir, updates)
        except ConfigError as exc:
            raise InputError(str(exc)) from None
        services.settings = new
        changes = {
            key: {"old": "<secret>", "new": "<secret>"} if key in _SECRET_KEYS else
            {"old": _plain(old.values[key]), "new": _plain(new.values[key])}
            for key in sorted(updates)
        }
        actor = audit_actor()
        await services.storage.ask(
            lambda reply: RecordAudit(actor=actor, action="update_settings", target="settings",
                                      detail={"changes": changes}, reply=reply),
            timeout=ASK_TIMEOUT,
        )
    changed = [key for key in sorted(updates) if old.values[key] != new.values[key]]
    return jsonify({
        "settings": new.public(),
        "changed": changed,
        "restart_required": [key for key in changed if key in RESTART_KEYS],
        "overridden_by_env": [key for key in sorted(updates) if new.sources[key] == "env"],
    })


# --- deletes --------------------------------------------------------------------------------


async def _delete(message: type, field: str, value: Any, what: str) -> Response:
    actor = audit_actor()
    deleted = await current_state().services.storage.ask(
        lambda reply: message(**{field: value}, actor=actor, reply=reply), timeout=ASK_TIMEOUT)
    if not deleted:
        raise NotFound(f"no {what} {value}")
    # Context snapshots (actors/snapshots.py) sweep on this: a deleted memory must not
    # come back through a SessionStart served while the worker is down.
    publish(current_state().services, {"type": "deleted", "what": what})
    return jsonify({"deleted": True, field: value})


@blueprint.delete("/api/observations/<observation_id>")
async def delete_observation(observation_id: str) -> Response:
    return await _delete(DeleteObservation, "observation_id",
                         parse_id(observation_id, "observation id"), "observation")


@blueprint.delete("/api/summaries/<summary_id>")
async def delete_summary(summary_id: str) -> Response:
    return await _delete(DeleteSummary, "summary_id", parse_id(summary_id, "summary id"),
                         "summary")


@blueprint.delete("/api/sessions/<session_id>")
async def delete_session(session_id: str) -> Response:
    """Delete a session and everything recorded in it (the storage actor audits it)."""
    if not session_id.strip() or len(session_id) > MAX_SESSION_ID:
        raise InputError(f"session id must be 1 to {MAX_SESSION_ID} characters")
    return await _delete(DeleteSession, "session_id", session_id, "session")

