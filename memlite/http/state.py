"""What the HTTP front keeps between requests, and how a handler reaches it.

``create_app`` stores one ``HttpState`` in ``app.extensions["memlite"]``; handlers call
``current_state()``. It holds the worker's ``Services`` (actor refs, settings, token,
events), the reader pool, the one-time login codes and a lock that serialises settings
updates (read-modify-write of ``settings.json``). Everything here is touched only from
the Trio thread.
"""

from __future__ import annotations

import attrs
import trio
from quart import current_app, request

from memlite.http.credentials import LoginCodes
from memlite.services import Services
from memlite.storage.pool import ReaderPool

__all__ = ["EXTENSION", "HttpState", "current_state", "server_port"]

EXTENSION = "memlite"


@attrs.define(kw_only=True)
class HttpState:
    """The app's own state.

    Attributes:
        services: the worker's shared refs and facts.
        readers: reader connections for search, timeline and batch reads.
        owns_readers: the app made ``readers`` and closes them after serving.
        port: the port the worker was configured with; used for ``Host``/``Origin``
            checks and login URLs when the ASGI scope does not say which port the
            connection came in on (the in-process test client).
        logins: one-time login codes for the dashboard.
        settings_lock: serialises ``PUT /api/settings``.
    """

    services: Services
    readers: ReaderPool
    owns_readers: bool
    port: int
    logins: LoginCodes = attrs.field(factory=LoginCodes)
    settings_lock: trio.Lock = attrs.field(factory=trio.Lock)


def current_state() -> HttpState:
    """The ``HttpState`` of the app serving the current request."""
    return current_app.extensions[EXTENSION]


def server_port() -> int:
    """The port this request actually arrived on (the socket's, not the client's say).

    Hypercorn puts the listening socket's address in the ASGI scope, so binding port 0
    still yields the right value; without it (test client) the configured port is used.
    """
    server = request.scope.get("server")
    if server and len(server) >= 2 and isinstance(server[1], int):
        return server[1]
    return current_state().port
