"""One authenticated request to the local worker, for the CLI (and tests): ``call``.

The hooks and the MCP server have their own raw-socket client (``memlite.hooks.client``,
standard library and a hard deadline); commands a person runs use this plainer one.
"""

from __future__ import annotations

import http.client
import json
from typing import Any

from memlite.errors import WorkerError

__all__ = ["call"]


def call(port: int, token: str, method: str, path: str, body: Any = None, *,
         timeout: float = 10.0) -> tuple[int, Any]:
    """``(status, JSON answer)`` of one request with the bearer token.

    ``body`` is sent as JSON (a POST without one sends an empty body). An answer that is
    not JSON comes back as text; an empty one as None.

    Raises:
        WorkerError: the worker cannot be reached.
    """
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    headers = {"Authorization": f"Bearer {token}"}
    if body is not None:
        headers["Content-Type"] = "application/json"
        raw_body: bytes | None = json.dumps(body).encode()
    else:
        raw_body = b"" if method in ("POST", "PUT", "DELETE") else None
    try:
        conn.request(method, path, body=raw_body, headers=headers)
        response = conn.getresponse()
        status, raw = response.status, response.read()
    except OSError as exc:
        raise WorkerError(f"cannot reach the worker on port {port}: {exc}") from None
    finally:
        conn.close()
    if not raw:
        return status, None
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode("utf-8", "replace")
