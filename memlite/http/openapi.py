"""The OpenAPI 3.0 description of ``/api/*``, served at ``GET /api/openapi.json``.

Maintained by hand next to the handlers; ``tests/http/test_openapi.py`` checks it against
the app's url_map both ways (every ``/api/*`` rule documented with the same methods, every
documented path served) and ``tests/http/test_schemathesis.py`` fuzzes a running worker
with it. Limits are taken from the modules that enforce them, so they cannot drift.

The route needs credentials like every other (only ``/api/health`` is public); the
``servers`` entry names the port the request came in on.
"""

from __future__ import annotations

import copy
from typing import Any

from quart import Blueprint, Response, jsonify

from memlite import cleanup
from memlite.http import api as api_routes
from memlite.http import cleanup_api, dashboard_api, read_api
from memlite.http.params import MAX_ID
from memlite.http.state import server_port
from memlite.ingest import KNOWN_EVENTS, MAX_NAME, MAX_PATH
from memlite.ingest import MAX_SESSION_ID as MAX_INGEST_SESSION_ID

__all__ = ["SPEC", "blueprint", "spec"]

blueprint = Blueprint("openapi", __name__)

_E = {"$ref": "#/components/responses/Error"}
_OBJ: dict[str, Any] = {"type": "object", "additionalProperties": True}


def _json(schema: dict[str, Any], description: str = "OK") -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _sse(description: str) -> dict[str, Any]:
    return {"description": description,
            "content": {"text/event-stream": {"schema": {
                "type": "object", "description": "one server-sent event",
                "properties": {"event": {"type": "string"}, "data": {"type": "string"}}}}}}


def _errors(*codes: int) -> dict[str, Any]:
    """The error answers every protected route can give, plus ``codes``."""
    return {str(code): _E for code in sorted({400, 401, 403, *codes})}


def _query(name: str, schema: dict[str, Any], description: str,
           required: bool = False) -> dict[str, Any]:
    return {"name": name, "in": "query", "required": required, "description": description,
            "schema": schema}


def _body(schema: dict[str, Any], required: bool = True) -> dict[str, Any]:
    return {"required": required, "content": {"application/json": {"schema": schema}}}


_ID = {"type": "integer", "minimum": 1, "maximum": MAX_ID}
_IDS = lambda most: {"type": "array", "maxItems": most, "items": _ID}  # noqa: E731
_PROJECT = _query("project", {"type": "string", "maxLength": 4096},
                  "a project path, as stored (filters to that project)")
_LIMIT = lambda default, high: _query(  # noqa: E731
    "limit", {"type": "integer", "minimum": 1, "maximum": high, "default": default},
    "page size")
_BEFORE = _query("before", {"type": "string", "maxLength": 200},
                 "the opaque cursor of the previous page (its ``next``)")
_SEARCH_PARAMS = [
    _query("q", {"type": "string", "minLength": 1, "maxLength": read_api.MAX_QUERY_CHARS},
           "what to search for (searched as text, never parsed as a query language)",
           required=True),
    _query("mode", {"type": "string", "enum": list(read_api.SEARCH_MODES),
                    "default": "hybrid"}, "full text, vectors, or both fused"),
    _PROJECT,
    _query("type", {"type": "string", "maxLength": 200},
           "comma-separated observation types: "
           + ", ".join(sorted(read_api.OBSERVATION_TYPES))),
    _query("since", {"type": "string", "maxLength": 40}, "ISO 8601 date or time"),
    _query("until", {"type": "string", "maxLength": 40},
           "ISO 8601 date or time (a bare date means its whole day)"),
    _query("file", {"type": "string", "maxLength": 500}, "a file the observation names"),
    _query("session", {"type": "string", "maxLength": 200}, "a session id"),
    _LIMIT(20, 100),
]
_HOOK_PAYLOAD: dict[str, Any] = {
    "type": "object",
    "description": "a Claude Code hook payload (stdin of the hook), cleaned by the hook",
    "additionalProperties": True,
    "properties": {
        "session_id": {"type": "string", "minLength": 1, "maxLength": MAX_INGEST_SESSION_ID},
        "hook_event_name": {"type": "string", "enum": list(KNOWN_EVENTS)},
        "cwd": {"type": "string", "maxLength": MAX_PATH},
        "transcript_path": {"type": "string", "maxLength": MAX_PATH},
        "prompt": {"type": "string"},
        "source": {"type": "string", "maxLength": MAX_NAME},
        "reason": {"type": "string", "maxLength": MAX_NAME},
        "tool_name": {"type": "string", "maxLength": MAX_NAME},
        "tool_use_id": {"type": "string", "maxLength": MAX_NAME},
        "tool_input": {},
        "tool_response": {},
    },
}
_INGESTED = _json({"type": "object", "required": ["event_id", "created", "session_id",
                                                  "skipped"],
                   "properties": {"event_id": {"type": "integer", "nullable": True},
                                  "created": {"type": "boolean"},
                                  "session_id": {"type": "string", "nullable": True},
                                  "skipped": {}}},
                  "the event is committed (or was already: ingestion is idempotent)")


def _ingest(summary: str) -> dict[str, Any]:
    return {"post": {"summary": summary, "requestBody": _body(_HOOK_PAYLOAD),
                     "responses": {"200": _INGESTED, **_errors(404, 413, 503)}}}


def _delete(what: str, param: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"delete": {
        "summary": f"delete one {what} (audited)",
        "parameters": [{"name": param, "in": "path", "required": True, "schema": schema}],
        "responses": {"200": _json({"type": "object", "required": ["deleted", param],
                                    "properties": {"deleted": {"type": "boolean"},
                                                   param: schema}}),
                      **_errors(404, 503)}}}


_SESSION_ID_PATH = {"type": "string", "minLength": 1, "maxLength": api_routes.MAX_SESSION_ID}

SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "memlite worker API", "version": "1",
             "description": "The local memlite worker: ingestion from hooks, search, the "
                            "dashboard's reads. Loopback only; bearer token or the "
                            "dashboard cookie. Errors are {error, status}."},
    "servers": [{"url": "http://127.0.0.1:37777"}],
    "security": [{"bearer": []}, {"dashboardCookie": []}],
    "components": {
        "securitySchemes": {
            "bearer": {"type": "http", "scheme": "bearer",
                       "description": "the token file of the data directory"},
            "dashboardCookie": {"type": "apiKey", "in": "cookie", "name": "memlite-<port>",
                                "description": "set by /login; not for login links"},
        },
        "schemas": {
            "Error": {"type": "object", "required": ["error", "status"],
                      "properties": {"error": {"type": "string"},
                                     "status": {"type": "integer"}}},
        },
        "responses": {
            "Error": {"description": "an error: what was wrong, and the status",
                      "content": {"application/json": {
                          "schema": {"$ref": "#/components/schemas/Error"}}}},
        },
    },
    "paths": {
        "/api/health": {"get": {
            "summary": "liveness (no credentials needed)", "security": [],
            "responses": {"200": _json({"type": "object", "required": ["status", "pid"],
                                        "properties": {"status": {"type": "string"},
                                                       "pid": {"type": "integer"},
                                                       "version": {"type": "string"},
                                                       "uptime": {"type": "number"},
                                                       "degraded": {"type": "object"}}}),
                          "403": _E}}},
        "/api/readiness": {"get": {
            "summary": "ready once the database is open and migrated",
            "responses": {"200": _json({"type": "object", "required": ["ready"],
                                        "properties": {"ready": {"type": "boolean"}}}),
                          **_errors(503)}}},
        "/api/debug/sessions": {"get": {
            "summary": "session actors, mailboxes and memory",
            "responses": {"200": _json(_OBJ), **_errors(503)}}},
        "/api/openapi.json": {"get": {
            "summary": "this description", "responses": {"200": _json(_OBJ), **_errors()}}},
        "/api/auth/login-link": {"post": {
            "summary": "a one-time dashboard login URL (bearer token only)",
            "responses": {"200": _json({"type": "object", "required": ["url", "expires_in"],
                                        "properties": {"url": {"type": "string"},
                                                       "expires_in": {"type": "integer"}}}),
                          **_errors()}}},
        "/api/sessions": {
            **_ingest("SessionStart, or UserPromptSubmit when the body has a prompt"),
            "get": {"summary": "sessions, newest first, cursor-paged",
                    "parameters": [_PROJECT, {**_BEFORE, "schema": {"type": "string",
                                                                    "maxLength": 1000}},
                                   _LIMIT(dashboard_api.SESSIONS_PAGE,
                                          dashboard_api.MAX_PAGE)],
                    "responses": {"200": _json({"type": "object",
                                                "required": ["sessions", "next"]}),
                                  **_errors(503)}},
        },
        "/api/events": _ingest("any hook event, named by the body's hook_event_name"),
        "/api/summarize": _ingest("Stop"),
        "/api/sessions/complete": _ingest("SessionEnd"),
        "/api/sessions/{session_id}": {
            "parameters": [{"name": "session_id", "in": "path", "required": True,
                            "schema": _SESSION_ID_PATH}],
            "get": {"summary": "one session's timeline",
                    "responses": {"200": _json({"type": "object", "required": [
                        "session", "observations", "summaries", "prompts"]}),
                        **_errors(404, 503)}},
            "delete": {"summary": "delete a session and all it recorded (audited)",
                       "responses": {"200": _json({"type": "object",
                                                   "required": ["deleted", "session_id"]}),
                                     **_errors(404, 503)}},
        },
        "/api/observations/{observation_id}": _delete("observation", "observation_id", _ID),
        "/api/summaries/{summary_id}": _delete("summary", "summary_id", _ID),
        "/api/settings": {
            "get": {"summary": "the settings, secrets left out",
                    "responses": {"200": _json({"type": "object", "required": ["settings"]}),
                                  **_errors()}},
            "put": {"summary": "validate, persist and audit {KEY: value}",
                    "requestBody": _body({"type": "object", "minProperties": 1,
                                          "additionalProperties": True}),
                    "responses": {"200": _json({"type": "object", "required": [
                        "settings", "changed", "restart_required", "overridden_by_env"]}),
                        **_errors(413, 503)}},
        },
        "/api/context": {"get": {
            "summary": "the SessionStart context block of a project",
            "parameters": [_query("project", {"type": "string", "minLength": 1,
                                              "maxLength": 1000},
                                  "the cwd or any folder of the project", required=True)],
            "responses": {"200": _json({"type": "object", "required": ["context"],
                                        "properties": {"context": {"type": "string"}}}),
                          **_errors(503)}}},
        "/api/search": {"get": {
            "summary": "observations, summaries and prompts matching q",
            "parameters": _SEARCH_PARAMS,
            "responses": {"200": _json({"type": "object", "required": [
                "query", "observations", "summaries", "prompts"]}), **_errors(503)}}},
        "/api/search/index": {"get": {
            "summary": "the compact index of matching observations",
            "parameters": _SEARCH_PARAMS,
            "responses": {"200": _json({"type": "object", "required": ["results"]}),
                          **_errors(503)}}},
        "/api/timeline": {"get": {
            "summary": "observations around an anchor, oldest first",
            "parameters": [
                _query("anchor", _ID, "the observation in the middle", required=True),
                _query("before", {"type": "integer", "minimum": 0, "maximum": 100,
                                  "default": 5}, "how many before"),
                _query("after", {"type": "integer", "minimum": 0, "maximum": 100,
                                 "default": 5}, "how many after"),
                _query("scope", {"type": "string", "enum": ["project", "session"],
                                 "default": "project"}, "neighbours in the project or session"),
            ],
            "responses": {"200": _json({"type": "object", "required": ["observations"]}),
                          **_errors(404, 503)}}},
        "/api/observations/batch": {"post": {
            "summary": "observations by id, in the order asked",
            "requestBody": _body({"type": "object", "required": ["ids"],
                                  "properties": {"ids": _IDS(read_api.MAX_BATCH_IDS)}}),
            "responses": {"200": _json({"type": "object",
                                        "required": ["observations", "missing"]}),
                          **_errors(413, 503)}}},
        "/api/embedder": {"get": {
            "summary": "the embedder's state",
            "responses": {"200": _json({"type": "object", "required": ["state"]}),
                          **_errors(503)}}},
        "/api/reindex": {"post": {
            "summary": "drop every vector and embed all observations again",
            "responses": {"202": _json({"type": "object", "required": ["started"]},
                                       "started"), **_errors(409, 503)}}},
        "/api/stats": {"get": {
            "summary": "the dashboard's stats bar",
            "responses": {"200": _json({"type": "object", "required": [
                "sessions", "observations", "summaries", "spool"], "properties": {
                "spool": {"type": "object", "required": ["waiting", "quarantined"],
                          "properties": {"waiting": {"type": "boolean"},
                                         "quarantined": {"type": "integer", "minimum": 0},
                                         "files": {"type": "array",
                                                   "items": {"type": "string"}}}}}}),
                          **_errors(503)}}},
        "/api/projects": {"get": {
            "summary": "projects, newest activity first",
            "responses": {"200": _json({"type": "object", "required": ["projects"]}),
                          **_errors(503)}}},
        "/api/feed": {"get": {
            "summary": "observations and summaries, newest first, cursor-paged",
            "parameters": [_PROJECT, _BEFORE,
                           _LIMIT(dashboard_api.FEED_PAGE, dashboard_api.MAX_PAGE)],
            "responses": {"200": _json({"type": "object", "required": ["items", "next"]}),
                          **_errors(503)}}},
        "/api/stream": {"get": {
            "summary": "server-sent events of what the worker stores (until shutdown)",
            "responses": {"200": _sse("the event stream"), **_errors(503)}}},
        "/api/cleanup/review": {"post": {
            "summary": "stream verdicts on a project's newest observations",
            "requestBody": _body({"type": "object", "required": ["project"], "properties": {
                "project": {"type": "string", "minLength": 1,
                            "maxLength": cleanup_api.MAX_PROJECT_CHARS},
                "mode": {"type": "string", "enum": list(cleanup_api.MODES)},
                "limit": {"type": "integer", "minimum": 1, "maximum": cleanup.MAX_LIMIT}}}),
            "responses": {"200": _sse("start, pending, verdict, notice, done (or error)"),
                          **_errors(409, 413, 503)}}},
        "/api/cleanup/apply": {"post": {
            "summary": "delete the given observations, each audited",
            "requestBody": _body({"type": "object", "required": ["ids"],
                                  "properties": {"ids": _IDS(cleanup_api.MAX_APPLY_IDS)}}),
            "responses": {"200": _json({"type": "object", "required": ["deleted", "missing"]}),
                          **_errors(413, 503)}}},
    },
}


def spec(port: int) -> dict[str, Any]:
    """The description, its server naming ``port``."""
    found = copy.deepcopy(SPEC)
    found["servers"] = [{"url": f"http://127.0.0.1:{port}"}]
    return found


@blueprint.get("/api/openapi.json")
async def openapi_json() -> Response:
    """This API's OpenAPI 3.0 description (needs credentials like every route but health)."""
    return jsonify(spec(server_port()))
