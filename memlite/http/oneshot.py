"""One socket write per response head and first body chunk, under Hypercorn's HTTP/1.1.

Why: Hypercorn 0.18 (h11) writes a response in separate socket writes: the status line
and headers, then the body, then the end of the message, each its own ``send_all`` and
Trio checkpoint. Measured on the worker at 10,000 observations (kept connection, a
loaded 2-CPU machine): the head's write took ~0.7 ms and the body's 1-2 ms (p50) from
the call to its return: the head wakes the client, which then competes with the server
for a CPU while the body is still to be written. The peer (Bun) writes a response in
one go.

What: ``install()`` makes Hypercorn's h11 protocol hold the bytes of a final response
head (``h11.Response``, status >= 200) and write them together with the next event's
bytes (the first body chunk, or the end of the message of an empty body). Hypercorn sends
the head only when the app sends the first body message (``HTTPStream.app_send``), and
the body follows in the same call with no checkpoint in between, so nothing is delayed:
the head and the first chunk simply leave in one write. SSE streams and chunked bodies
still send every later chunk as it comes. Informational responses (1xx, e.g. 101) are
not held. The end of a message whose length was given (``Content-Length``: h11 has no
bytes to send for it) costs no socket write: Hypercorn wrote ``b""``, a call that wrote
nothing but took two scheduler passes (its lock and its checkpoint) after every response.

Compatibility: it wraps ``hypercorn.protocol.h11.H11Protocol._send_h11_event`` (a
private method of the pinned Hypercorn, see ``constraints.txt``); if that method is
missing, nothing is installed and responses go out as before. Idempotent.
"""

from __future__ import annotations

from typing import Any

import h11

__all__ = ["install", "installed"]

_HELD = "_memlite_held_head"


def installed() -> bool:
    """Whether Hypercorn's h11 protocol writes a head with its first body chunk."""
    from hypercorn.protocol.h11 import H11Protocol

    return getattr(H11Protocol._send_h11_event, "_memlite_oneshot", False)


def install() -> bool:
    """Wrap Hypercorn's h11 event writer (see the module docstring); True when it is."""
    from hypercorn.events import RawData
    from hypercorn.protocol.h11 import H11Protocol

    original = getattr(H11Protocol, "_send_h11_event", None)
    if original is None:
        return False
    if getattr(original, "_memlite_oneshot", False):
        return True

    async def send_h11_event(self: Any, event: Any) -> None:
        held: bytes = getattr(self, _HELD, b"")
        if type(event) is h11.Response and not held:
            try:
                data = self.connection.send(event)
            except h11.LocalProtocolError:
                if self.connection.their_state != h11.ERROR:
                    raise
                return
            setattr(self, _HELD, data)  # written with the next event's bytes
            return
        if held:
            setattr(self, _HELD, b"")
            try:
                data = self.connection.send(event)
            except h11.LocalProtocolError:
                await self.send(RawData(data=held))  # the head as before, then the error
                if self.connection.their_state != h11.ERROR:
                    raise
                return
            await self.send(RawData(data=held + (data or b"")))
            return
        if type(event) is h11.EndOfMessage:
            try:
                data = self.connection.send(event)
            except h11.LocalProtocolError:
                if self.connection.their_state != h11.ERROR:
                    raise
                return
            if data:  # a chunked body's last chunk; nothing for a Content-Length body
                await self.send(RawData(data=data))
            return
        await original(self, event)

    send_h11_event._memlite_oneshot = True  # type: ignore[attr-defined]
    H11Protocol._send_h11_event = send_h11_event  # type: ignore[method-assign]
    return True
