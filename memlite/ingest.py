"""Ingestion: THE one write path for hook events (HTTP routes and the spool drain).

``ingest_hook_event(services, payload)`` validates a hook payload, stores it through the
storage actor, and only once that is committed tells the rest of the worker:

1. Validate: a JSON object with a non-empty string ``session_id`` (at most 200
   characters) and a known ``hook_event_name`` (or the ``event_name`` the route names);
   fields the event needs must have the right JSON type. Anything else is an
   ``InputError`` (HTTP 400) that names the field; nothing is stored. Then the payload
   is redacted with ``privacy.clean`` (the hook did it already; a direct API client may
   not have), so nothing is stored unredacted whatever sent it.
2. Store (one ``StoreHookEvent``: one savepoint in the actor's group commit): the event
   row first, idempotent by ``tool_use_id`` or content hash (the durable queue), and in
   the same transaction its effect on the session:

   =====================  ==========================================================
   SessionStart           start or resume the session, with its project identity
                          (git top level of ``cwd``, branch, commit; ``project.py``)
   UserPromptSubmit       create the session if needed, store the prompt (``''`` when
                          the redacted prompt is empty: a private turn)
   PostToolUse(Failure)   the event only; a tool in SKIP_TOOLS (or one of memlite's own
                          MCP tools) is stored with status ``skipped`` and not observed
   Stop, SubagentStop     the event only (it carries ``last_assistant_message``)
   PreCompact             the event only
   SessionEnd             complete the session
   =====================  ==========================================================

3. After the commit: ``Deliver`` the event to its session actor (``EndSession`` too on
   SessionEnd) and ``Publish`` a small dict on the bus for live views. A replay of a
   stored event (``created=False``) does neither: it already happened.

A ``cwd`` that cannot be examined (a component over 255 bytes, a NUL, permission denied,
a filesystem that does not answer within ``PROJECT_TIMEOUT``) never fails ingestion: the
event is stored and its project is the path string itself (``unresolved_project``).

A session the database does not know is created from whichever event comes first, with a
warning: an event is never refused because its SessionStart was missed (the hook failed,
the worker was down and the spool lost). The exception is the two routes that only make
sense for an existing session, ``/api/summarize`` (Stop) and ``/api/sessions/complete``
(SessionEnd): when the route names the event (``event_name=``), an unknown session is
``NotFound`` (404). The spool drain passes ``require_session=False``.
"""

from __future__ import annotations

import collections
import json
import logging
import math
import os
import time
from collections.abc import Mapping
from typing import Any

import attrs
import trio

from memlite.actors.bus import Publish
from memlite.actors.session import Deliver, EndSession
from memlite.actors.storage import StoreHookEvent
from memlite.errors import ActorError, InputError
from memlite.privacy import clean
from memlite.project import ProjectInfo, resolve_project
from memlite.services import Services
from memlite.storage.capture import HookEventStored

__all__ = [
    "IngestResult",
    "KNOWN_EVENTS",
    "MAX_SESSION_ID",
    "ingest_hook_event",
    "publish",
    "unresolved_project",
]

log = logging.getLogger(__name__)

KNOWN_EVENTS = (
    "SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure", "Stop",
    "SubagentStop", "PreCompact", "SessionEnd",
)
TOOL_EVENTS = frozenset({"PostToolUse", "PostToolUseFailure"})
REQUIRE_SESSION_WHEN_NAMED = frozenset({"Stop", "SessionEnd"})
OWN_TOOL_PREFIXES = ("mcp__plugin_memlite_", "mcp__memlite__")
MAX_SESSION_ID = 200
MAX_NAME = 500
MAX_PATH = 4096  # PATH_MAX: also bounds the project cache below
STORE_TIMEOUT = 10.0  # a commit takes milliseconds: this means "stuck", not "slow"
NOTIFY_TIMEOUT = 2.0
CLEAN_ON_THREAD_BYTES = 64 * 1024
"""A payload larger than this is redacted on a thread, not on the Trio thread."""

_JSON_TYPES = {dict: "an object", list: "an array", str: "a string", bool: "true/false",
               int: "a number", float: "a number", type(None): "null"}


@attrs.frozen(kw_only=True)
class IngestResult:
    """What ingestion did: ``created`` is False for a replay (nothing was written)."""

    event_id: int | None
    created: bool
    session_id: str
    skipped: bool


def _json_type(value: Any) -> str:
    return _JSON_TYPES.get(type(value), type(value).__name__)


def _text(payload: Mapping[str, Any], key: str, *, max_len: int | None = None) -> str | None:
    """An optional string field; ``InputError`` naming it if it has another type."""
    value = payload.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(f"field {key!r} must be a string, not {_json_type(value)}")
    if max_len is not None and len(value) > max_len:
        raise InputError(f"field {key!r} is too long ({len(value)} > {max_len} characters)")
    return value


def _check_storable(payload: Mapping[str, Any]) -> int:
    """Refuse what the database would refuse later (NaN, lone surrogates, deep nesting):
    as a 400 naming the problem, not a storage failure that a spool drain would retry
    forever. Costs ~10 us for a typical payload. Returns its size in bytes."""
    try:
        return len(json.dumps(payload, allow_nan=False, ensure_ascii=False).encode("utf-8"))
    except (ValueError, TypeError, UnicodeEncodeError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise InputError(f"the payload is not storable as JSON: {reason}") from None


def _event_name(payload: Mapping[str, Any], named: str | None) -> str:
    given = _text(payload, "hook_event_name", max_len=MAX_NAME)
    if named is not None and given is not None and given != named:
        raise InputError(f"field 'hook_event_name' is {given!r} but this endpoint takes "
                         f"{named!r} events")
    name = named if named is not None else given
    if not name:
        raise InputError("missing field 'hook_event_name' (a string such as 'PostToolUse')")
    if name not in KNOWN_EVENTS:
        raise InputError(f"unknown hook event {name[:100]!r}; known events: "
                         f"{', '.join(KNOWN_EVENTS)}")
    return name


def _session_id(payload: Mapping[str, Any]) -> str:
    session_id = _text(payload, "session_id")
    if session_id is None or not session_id.strip():
        raise InputError("missing field 'session_id' (a non-empty string)")
    if len(session_id) > MAX_SESSION_ID:
        raise InputError(f"field 'session_id' is too long ({len(session_id)} > "
                         f"{MAX_SESSION_ID} characters)")
    return session_id


def _skipped(services: Services, tool_name: str | None) -> bool:
    if tool_name is None:
        return False
    return tool_name in services.settings.skip_tools or tool_name.startswith(OWN_TOOL_PREFIXES)


# Project identity per cwd, so tool events (many per turn) do not walk the filesystem each
# time. SessionStart always resolves afresh (a new branch shows up there) and refreshes it.
_projects: collections.OrderedDict[str, ProjectInfo | None] = collections.OrderedDict()
_PROJECT_CACHE_SIZE = 128
PROJECT_TIMEOUT = 2.0  # a dead network mount can block a stat for minutes
STUCK_RETRY = 600.0  # a cwd that timed out is not examined again for this long
_stuck: dict[str, float] = {}  # cwd -> trio time until which it is not examined


def unresolved_project(cwd: str) -> ProjectInfo | None:
    """The project of a ``cwd`` that cannot be examined: the path string itself.

    Used when the path is too long, holds a NUL, is not readable, or its filesystem does
    not answer (issue 13: such an event used to answer 500 and jam the spool). Relative
    paths have no project, as in ``resolve_project``.
    """
    if not os.path.isabs(cwd):
        return None
    root = os.path.normpath(cwd).replace("\x00", "\ufffd")
    return ProjectInfo(root=root, name=os.path.basename(root) or root)


def _resolve(cwd: str) -> ProjectInfo | None:
    try:
        return resolve_project(cwd)
    except (OSError, ValueError) as exc:  # ENAMETOOLONG, EACCES, EIO, ESTALE, NUL byte
        log.warning("project of %r cannot be examined (%s): the path names it",
                    cwd[:300], exc)
        return unresolved_project(cwd)


async def _project(cwd: str | None, *, fresh: bool) -> ProjectInfo | None:
    """The project of ``cwd``; never raises, and never waits over ``PROJECT_TIMEOUT``."""
    if not cwd:
        return None
    if not fresh and cwd in _projects:
        _projects.move_to_end(cwd)
        return _projects[cwd]
    if _stuck.get(cwd, -math.inf) > trio.current_time():
        return unresolved_project(cwd)
    info: ProjectInfo | None = None
    with trio.move_on_after(PROJECT_TIMEOUT) as scope:
        # Abandoned on timeout: the thread may stay blocked in the kernel, not us.
        info = await trio.to_thread.run_sync(_resolve, cwd, abandon_on_cancel=True)
    if scope.cancelled_caught:
        log.warning("project of %r: no answer from its filesystem within %g s; the path "
                    "names it (not examined again for %g s)", cwd[:300], PROJECT_TIMEOUT,
                    STUCK_RETRY)
        if len(_stuck) > _PROJECT_CACHE_SIZE:
            _stuck.clear()
        _stuck[cwd] = trio.current_time() + STUCK_RETRY
        return unresolved_project(cwd)
    _projects[cwd] = info
    while len(_projects) > _PROJECT_CACHE_SIZE:
        _projects.popitem(last=False)
    return info


async def _store(services: Services, message_fields: dict[str, Any]) -> HookEventStored:
    return await services.storage.ask(
        lambda reply: StoreHookEvent(**message_fields, reply=reply), timeout=STORE_TIMEOUT)


async def ingest_hook_event(
    services: Services,
    payload: Mapping[str, Any],
    *,
    event_name: str | None = None,
    require_session: bool | None = None,
    at_ms: int | None = None,
) -> IngestResult:
    """Validate, store (committed before it returns), then deliver and publish one event.

    Args:
        services: the worker's refs (storage, sessions, bus) and settings.
        payload: the hook's stdin object (redacted here again: see ``privacy.clean``).
        event_name: the event the route stands for; None takes ``hook_event_name``.
        require_session: refuse an unknown session with ``NotFound``. Default: only when
            ``event_name`` names Stop or SessionEnd (``/api/summarize``,
            ``/api/sessions/complete``).
        at_ms: when it happened (epoch ms); default now. The spool drain passes the
            time the hook spooled it.

    Raises:
        InputError: the payload is malformed (400); ``NotFound`` (404) for an unknown
            session when it is required.
        AskTimeout, ActorDied, StorageError: the event could not be committed; the
            caller answers 5xx and the hook spools it.
    """
    if not isinstance(payload, Mapping):
        raise InputError(f"the body must be a JSON object, not {_json_type(payload)}")
    size = _check_storable(payload)
    # The hook already cleaned it; a client that posts to the API directly did not. Cleaning
    # twice changes nothing, so every event is stored redacted whatever sent it. A large
    # body is cleaned on a thread: ~40 ms per MB would otherwise stall every request,
    # stream and actor of the worker (issue 17).
    if size > CLEAN_ON_THREAD_BYTES:
        payload = await trio.to_thread.run_sync(clean, dict(payload))
    else:
        payload = clean(dict(payload))
    name = _event_name(payload, event_name)
    session_id = _session_id(payload)
    if require_session is None:
        require_session = event_name is not None and event_name in REQUIRE_SESSION_WHEN_NAMED
    cwd = _text(payload, "cwd", max_len=MAX_PATH)
    fields: dict[str, Any] = {
        "session_id": session_id, "event_name": name, "payload": dict(payload),
        "cwd": cwd, "transcript_path": _text(payload, "transcript_path", max_len=MAX_PATH),
        "require_session": require_session, "at_ms": at_ms,
    }
    tool_name = None
    if name in TOOL_EVENTS:
        tool_name = _text(payload, "tool_name", max_len=MAX_NAME)
        if not tool_name:
            raise InputError(f"missing field 'tool_name' (a {name} event names its tool)")
        fields.update(tool_name=tool_name, skipped=_skipped(services, tool_name),
                      tool_use_id=_text(payload, "tool_use_id", max_len=MAX_NAME))
    elif name == "SessionStart":
        fields.update(start=True, source=_text(payload, "source", max_len=MAX_NAME))
    elif name == "UserPromptSubmit":
        fields["prompt_text"] = _text(payload, "prompt")
        if fields["prompt_text"] is None:
            log.warning("session %s: UserPromptSubmit without a prompt; no prompt row stored",
                        session_id)
    elif name == "SessionEnd":
        _text(payload, "reason", max_len=MAX_NAME)
        fields["complete"] = True
    elif name in ("Stop", "SubagentStop"):
        _text(payload, "last_assistant_message")
    project = await _project(cwd, fresh=name == "SessionStart")
    if project is not None:
        fields.update(project=project.root, project_name=project.name, branch=project.branch,
                      commit_sha=project.commit)

    stored = await _store(services, fields)

    result = IngestResult(event_id=stored.event_id, created=stored.created,
                          session_id=session_id, skipped=bool(fields.get("skipped")))
    if not stored.created:
        return result
    if stored.session_created and name != "SessionStart":
        log.warning("session %s was unknown: created from its %s event (SessionStart missed)",
                    session_id, name)
    if not result.skipped:
        await _notify(services, Deliver(session_id=session_id, event_id=stored.event_id,
                                        event_name=name, tool_name=tool_name))
        publish(services, {"type": "event", "sessionId": session_id,
                            "eventId": stored.event_id, "eventName": name,
                            "toolName": tool_name,
                            "at": at_ms if at_ms is not None else int(time.time() * 1000)})
    if name == "SessionEnd":
        await _notify(services, EndSession(session_id=session_id,
                                           reason=_text(payload, "reason")))
    return result


async def _notify(services: Services, message: Deliver | EndSession) -> None:
    """Tell the session supervisor; the event is committed, so failing here loses nothing."""
    with trio.move_on_after(NOTIFY_TIMEOUT) as scope:
        try:
            await services.sessions.send(message)
        except ActorError as exc:
            log.warning("session %s: %s not sent: %s", message.session_id,
                        type(message).__name__, exc)
    if scope.cancelled_caught:
        log.warning("session %s: %s not sent within %.0f s (supervisor busy)",
                    message.session_id, type(message).__name__, NOTIFY_TIMEOUT)


def publish(services: Services, event: dict[str, Any]) -> None:
    """Tell live subscribers (SSE) about ``event``; best effort, never raises."""
    try:
        services.bus.send_nowait(Publish(event=event))
    except ActorError as exc:  # full or restarting: live views are best-effort
        log.debug("bus: event not published: %s", exc)
