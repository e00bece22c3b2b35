"""Every error the HTTP front answers is JSON: ``{"error": "<what was wrong>", "status": N}``.

``register(app)`` installs the handlers, so no request ever gets an HTML page or a
traceback, whatever fails:

* ``InputError`` (and ``NotFound``) from a handler or from ingestion: its own status
  (400, 404...) and message.
* Werkzeug's HTTP errors (routing 404 and 405, 413 for a body over ``MAX_CONTENT_LENGTH``,
  408 for a body that does not arrive in time): their status, a plain message.
* ``AskTimeout`` / ``ActorDied`` (an actor is slow, restarting or stopping): 503 with
  ``Retry-After: 1``; the worker goes on.
* ``StorageError``: 503 as well (the write was not committed; retrying is safe because
  events are idempotent).
* Anything else: 500 ``internal error``; the traceback goes to the worker's log only.
"""

from __future__ import annotations

import logging

from quart import Quart, Response, jsonify
from werkzeug.exceptions import HTTPException

from memlite.errors import ActorDied, AskTimeout, InputError, StorageError

__all__ = ["MAX_MESSAGE", "cut_message", "json_error", "register"]

log = logging.getLogger(__name__)

MAX_MESSAGE = 2000  # an error may quote the caller's value; an 8 MB echo helps nobody
_MESSAGES = {
    400: "bad request",
    404: "no such route",
    405: "method not allowed on this route",
    408: "the request body did not arrive in time",
    413: "request body too large",
}


CUT_SUFFIX = "... (cut)"


def cut_message(message: str) -> str:
    """``message`` in at most ``MAX_MESSAGE`` characters, the suffix included (so the
    suffix always replaces more text than it takes)."""
    if len(message) <= MAX_MESSAGE:
        return message
    return message[:MAX_MESSAGE - len(CUT_SUFFIX)] + CUT_SUFFIX


def json_error(status: int, message: str) -> Response:
    """A JSON error response with ``status`` (the message is cut at ``MAX_MESSAGE`` chars)."""
    message = cut_message(message)
    response = jsonify({"error": message, "status": status})
    response.status_code = status
    return response


def register(app: Quart) -> None:
    """Install the JSON error handlers on ``app``."""
    max_bytes = app.config.get("MAX_CONTENT_LENGTH")

    @app.errorhandler(InputError)
    async def input_error(exc: InputError) -> Response:
        return json_error(exc.status, str(exc))

    @app.errorhandler(HTTPException)
    async def http_error(exc: HTTPException) -> Response:
        status = exc.code or 500
        message = _MESSAGES.get(status, exc.name.lower())
        if status == 413 and max_bytes:
            message = f"request body too large (limit {max_bytes} bytes)"
        response = json_error(status, message)
        for name, value in exc.get_headers():
            if name.lower() == "allow":  # 405 says which methods the route takes
                response.headers[name] = value
        return response

    @app.errorhandler(AskTimeout)
    @app.errorhandler(ActorDied)
    @app.errorhandler(StorageError)
    async def unavailable(exc: Exception) -> Response:
        log.warning("answering 503: %s: %s", type(exc).__name__, exc)
        response = json_error(503, f"the worker is busy or restarting a part ({exc}); retry")
        response.headers["Retry-After"] = "1"
        return response

    @app.errorhandler(Exception)
    async def internal_error(exc: Exception) -> Response:
        log.error("unhandled error in a request", exc_info=exc)
        return json_error(500, "internal error (details are in the worker's log)")
