"""A tiny HTTP/1.1 client over a raw socket, for the hook (STANDARD LIBRARY ONLY).

``http.client`` pulls in ssl and email (~35 ms a hook, STACK.md §6), so the hook writes
its one request by hand: ``Content-Length`` framing, ``Connection: close``, the bearer
token, and one overall deadline for connect, send and receive. The reply is read up to
its ``Content-Length`` (Hypercorn keeps the socket open after a ``Connection: close``
reply until the client closes it), or to the end of the stream, or de-chunked.

Also here: where the worker listens and with which token. Settings are read with
``memlite.settings_spec``, the parser the worker uses too (``memlite.config`` builds on
it), so hook and worker never disagree: a setting the worker would refuse makes
:func:`hook_settings` report an ``error``, and the hook then spools the event and logs the
reason instead of sending it anywhere (an invalid ``WORKER_PORT`` used to become 37888,
which may be another install's worker).
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Iterable, Mapping

from memlite import settings_spec

__all__ = ["DEFAULT_PORT", "HOST", "HookSettings", "HttpError", "data_dir", "hook_settings",
           "read_settings", "request", "skip_tools", "token", "worker_port"]

HOST = "127.0.0.1"
DEFAULT_PORT = 37888
MAX_REPLY = 8 * 1024 * 1024


class HttpError(OSError):
    """The worker's reply was not a readable HTTP response (treated like "worker down")."""


def data_dir() -> str:
    return settings_spec.default_data_dir()


def read_settings(directory: str) -> dict[str, object]:
    """``settings.json`` of the data directory as a dict ({} if missing or unreadable)."""
    try:
        return settings_spec.read_file(os.path.join(directory, settings_spec.SETTINGS_FILE))
    except settings_spec.SettingsFileError:
        return {}


def worker_port(settings: Mapping[str, object], env: Mapping[str, str] | None = None) -> int:
    """WORKER_PORT as the worker reads it.

    Raises:
        settings_spec.SettingError: the value is invalid (the worker would refuse it too).
    """
    values, _ = settings_spec.resolve(settings, os.environ if env is None else env,
                                      file_label="settings.json", keys=("WORKER_PORT",))
    return int(_int(values, "WORKER_PORT"))


def skip_tools(settings: Mapping[str, object],
               env: Mapping[str, str] | None = None) -> frozenset[str]:
    """SKIP_TOOLS as the worker reads it (``SettingError`` if invalid)."""
    values, _ = settings_spec.resolve(settings, os.environ if env is None else env,
                                      file_label="settings.json", keys=("SKIP_TOOLS",))
    return frozenset(_strs(values, "SKIP_TOOLS"))


class HookSettings:
    """What the hook needs from the settings, or why it must not send at all.

    ``error`` is set when any setting is invalid or ``settings.json`` is unreadable: the
    worker would refuse to start with them, and a port the hook guessed could be another
    install's worker. The hook then spools the event and logs ``error``.
    """

    __slots__ = ("context_max_chars", "error", "port", "skip_tools")

    def __init__(self, *, port: int | None, skip_tools: frozenset[str],
                 error: str | None = None, context_max_chars: int | None = None) -> None:
        self.port = port
        self.skip_tools = skip_tools
        self.error = error
        self.context_max_chars = context_max_chars


def hook_settings(directory: str, env: Mapping[str, str] | None = None) -> HookSettings:
    """Every setting resolved as the worker resolves it (see :class:`HookSettings`)."""
    env = os.environ if env is None else env
    path = os.path.join(directory, settings_spec.SETTINGS_FILE)
    try:
        stored = settings_spec.read_file(path)
        values, _ = settings_spec.resolve(stored, env, file_label=path)
    except (settings_spec.SettingError, settings_spec.SettingsFileError) as exc:
        return HookSettings(port=None, skip_tools=frozenset(), error=str(exc))
    return HookSettings(port=int(_int(values, "WORKER_PORT")),
                        skip_tools=frozenset(_strs(values, "SKIP_TOOLS")),
                        context_max_chars=int(_int(values, "CONTEXT_MAX_CHARS")))


def _int(values: Mapping[str, object], key: str) -> int:
    """An integer setting of ``settings_spec.resolve``'s result (its ``Spec`` parser,
    ``_int_between``, returns an ``int``; so is its default)."""
    value = values[key]
    if not isinstance(value, int):
        raise settings_spec.SettingError(key, f"{key}: expected a whole number, got {value!r}")
    return value


def _strs(values: Mapping[str, object], key: str) -> Iterable[str]:
    """A list-of-names setting of ``settings_spec.resolve``'s result (``_tool_list``
    returns a tuple of ``str``)."""
    value = values[key]
    if not isinstance(value, (tuple, list, frozenset, set)):
        raise settings_spec.SettingError(key, f"{key}: expected a list of names, got {value!r}")
    return value


def token(directory: str) -> str | None:
    """The install's API token, or None if the worker never created one."""
    try:
        with open(os.path.join(directory, "token"), "rb") as f:
            value = f.read(256).decode("ascii", "replace").strip()
    except OSError:
        return None
    return value or None


def _remaining(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("hook deadline passed")
    return left


def _read_chunked(data: bytes) -> bytes | None:
    """De-chunk ``data``; None if it is not complete yet."""
    out = bytearray()
    pos = 0
    while True:
        end = data.find(b"\r\n", pos)
        if end < 0:
            return None
        size = int(data[pos:end].split(b";")[0] or b"0", 16)
        if size == 0:
            return bytes(out)
        if len(data) < end + 2 + size + 2:
            return None
        out += data[end + 2:end + 2 + size]
        pos = end + 2 + size + 2


def request(port: int, method: str, path: str, *, bearer: str | None, body: bytes | None,
            deadline: float, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    """Send one request to 127.0.0.1:``port`` and return ``(status, body)``.

    Raises ``OSError`` (refused, reset), ``TimeoutError`` (deadline) or ``HttpError``.
    """
    head = [f"{method} {path} HTTP/1.1", f"Host: {HOST}:{port}", "Connection: close",
            "Accept: application/json", "User-Agent: memlite-hook"]
    if bearer:
        head.append(f"Authorization: Bearer {bearer}")
    head += [f"{name}: {value}" for name, value in (headers or {}).items()]
    if body is not None:
        head += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
    message = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + (body or b"")
    with socket.create_connection((HOST, port), timeout=_remaining(deadline)) as sock:
        sock.settimeout(_remaining(deadline))
        sock.sendall(message)
        data = b""
        status = 0
        length: int | None = None
        chunked = False
        header_end = -1
        while True:
            if header_end < 0:
                header_end = data.find(b"\r\n\r\n")
                if header_end >= 0:
                    status, length, chunked = _parse_head(data[:header_end])
            if header_end >= 0:
                payload = data[header_end + 4:]
                if length is not None and len(payload) >= length:
                    return status, payload[:length]
                if chunked:
                    done = _read_chunked(payload)
                    if done is not None:
                        return status, done
            if len(data) > MAX_REPLY:
                raise HttpError("reply too large")
            sock.settimeout(_remaining(deadline))
            chunk = sock.recv(65536)
            if not chunk:
                if header_end >= 0 and length is None and not chunked:
                    return status, data[header_end + 4:]
                raise HttpError("connection closed before the reply was complete")
            data += chunk


def _parse_head(head: bytes) -> tuple[int, int | None, bool]:
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
        raise HttpError(f"not an HTTP reply: {lines[0][:80]!r}")
    try:
        status = int(parts[1])
    except ValueError:
        raise HttpError(f"bad status line: {lines[0][:80]!r}") from None
    length = None
    chunked = False
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value.strip())
        elif name == b"transfer-encoding" and b"chunked" in value.lower():
            chunked = True
    return status, (None if chunked else length), chunked
