"""THE settings parser, shared by the hook and the worker (STANDARD LIBRARY ONLY).

Every setting is described once here: its key, default, parser and meaning. The worker
(``memlite.config``, which adds attrs types, writing and ``ConfigError``) and the hook
(``memlite.hooks.client``) both resolve settings with :func:`resolve`, so they can never
disagree: a value one of them refuses, the other refuses too (issue 13: the hook used to
turn an invalid ``WORKER_PORT`` into 37888 and send events to another install's worker).

Where a value comes from: ``$MEMLITE_<KEY>`` wins over ``settings.json`` in the data
directory, which wins over the default. A value that does not parse raises
:class:`SettingError`, whose message names the key, the value and where it came from.

The data directory (``$MEMLITE_DATA_DIR``, else ``~/.memlite``) is private: whoever
creates it (a hook spooling before any worker ran, the worker, the CLI) creates it 0700
with :func:`make_private_dir`.

Standard library only, and cheap to import: the hook imports it on every event.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Callable, Iterable, Mapping
from urllib.parse import urlsplit

__all__ = [
    "ENV_PREFIX",
    "SETTINGS_FILE",
    "SPECS",
    "SettingError",
    "SettingsFileError",
    "Spec",
    "by_key",
    "default_data_dir",
    "make_private_dir",
    "read_file",
    "resolve",
    "validate",
]

ENV_PREFIX = "MEMLITE_"
SETTINGS_FILE = "settings.json"


class SettingError(ValueError):
    """A setting has an invalid value; the message names the key, value and origin."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(message)
        self.key = key


class SettingsFileError(ValueError):
    """``settings.json`` cannot be read, is not JSON, or is not an object."""


# --- parsers: each takes a raw value (from JSON or an env string) and returns the typed one,
# --- or raises ValueError with a reason a person can act on.


def _int_between(low: int, high: int) -> Callable[[object], int]:
    def parse(raw: object) -> int:
        if isinstance(raw, bool):
            raise ValueError("expected a whole number, got true/false")
        if isinstance(raw, str):
            try:
                raw = int(raw.strip(), 10)
            except ValueError:
                raise ValueError("expected a whole number") from None
        if not isinstance(raw, int):
            raise ValueError("expected a whole number")
        if not low <= raw <= high:
            raise ValueError(f"must be between {low} and {high}")
        return raw

    return parse


def _bool(raw: object) -> bool:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str):
        lowered = raw.strip().lower()
        if lowered in {"1", "true", "yes", "on"}:
            return True
        if lowered in {"0", "false", "no", "off"}:
            return False
    raise ValueError("expected true or false")


def _choice(*choices: str) -> Callable[[object], str]:
    def parse(raw: object) -> str:
        if not isinstance(raw, str) or raw.strip().lower() not in choices:
            raise ValueError(f"expected one of {', '.join(choices)}")
        return raw.strip().lower()

    return parse


def _name(max_len: int = 200) -> Callable[[object], str]:
    """A short plain name (a model id): no spaces, no path separators, no control characters."""

    def parse(raw: object) -> str:
        if not isinstance(raw, str):
            raise ValueError("expected a string")
        value = raw.strip()
        if not value or len(value) > max_len:
            raise ValueError(f"expected 1 to {max_len} characters")
        if any(c.isspace() or c in "/\\" or ord(c) < 32 for c in value):
            raise ValueError("must not contain spaces, slashes or control characters")
        return value

    return parse


def _loopback_url(raw: object) -> str:
    if not isinstance(raw, str):
        raise ValueError("expected a URL string")
    try:
        parts = urlsplit(raw.strip())
        hostname = parts.hostname
    except ValueError:  # e.g. an unclosed "[" or a port that is not a number
        raise ValueError("expected an http:// or https:// URL") from None
    if parts.scheme not in {"http", "https"} or not hostname:
        raise ValueError("expected an http:// or https:// URL")
    if hostname not in {"127.0.0.1", "localhost", "::1"}:
        raise ValueError("must be a loopback address (127.0.0.1, localhost or [::1])")
    return raw.strip().rstrip("/")


def _tool_list(raw: object) -> tuple[str, ...]:
    items: Iterable[object]
    if isinstance(raw, str):
        items = (part.strip() for part in raw.split(","))
    elif isinstance(raw, list):
        items = raw
    else:
        raise ValueError("expected a list of tool names (or a comma-separated string)")
    names = []
    for item in items:
        if not isinstance(item, str):
            raise ValueError("every tool name must be a string")
        if item:
            names.append(_name(200)(item))
    return tuple(names)


class Spec:
    """One knob: its key (without the ``MEMLITE_`` prefix), default, parser and meaning.

    A plain class, not a dataclass: ``dataclasses`` and ``typing`` would add ~10 ms to
    every hook.
    """

    __slots__ = ("default", "doc", "key", "parse", "secret")

    def __init__(self, *, key: str, default: object, parse: Callable[[object], object],
                 doc: str, secret: bool = False) -> None:
        self.key = key
        self.default = default
        self.parse = parse
        self.doc = doc
        self.secret = secret

    def __repr__(self) -> str:
        return f"Spec(key={self.key!r}, default={self.default!r})"


SPECS: tuple[Spec, ...] = (
    Spec(key="WORKER_PORT", default=37888, parse=_int_between(1024, 65535),
         doc="TCP port of the worker on 127.0.0.1"),
    Spec(key="OBSERVATION_COUNT", default=50, parse=_int_between(0, 1000),
         doc="observations listed in the context index"),
    Spec(key="FULL_OBSERVATION_COUNT", default=5, parse=_int_between(0, 100),
         doc="observations shown in full in the context block"),
    Spec(key="SUMMARY_COUNT", default=3, parse=_int_between(0, 50),
         doc="session summaries in the context block"),
    Spec(key="CONTEXT_MAX_CHARS", default=9000, parse=_int_between(500, 10000),
         doc="budget of the SessionStart context block (Claude Code previews >10,000)"),
    Spec(key="MCP_ENABLED", default=True, parse=_bool, doc="serve the MCP memory tools"),
    Spec(key="OBSERVER", default="auto", parse=_choice("auto", "claude", "rules"),
         doc="auto: Claude when available, else rules"),
    Spec(key="OBSERVER_MODEL", default="claude-haiku-4-5", parse=_name(),
         doc="model of the observer conversation"),
    Spec(key="EMBEDDER", default="auto",
         parse=_choice("auto", "wordllama", "minilm", "ollama", "none"),
         doc="embedding backend for semantic search"),
    Spec(key="OLLAMA_URL", default="http://127.0.0.1:11434", parse=_loopback_url,
         doc="Ollama server (loopback only)"),
    Spec(key="OLLAMA_MODEL", default="bge-m3", parse=_name(), doc="Ollama embedding model"),
    Spec(key="IDLE_SHUTDOWN_MINUTES", default=30, parse=_int_between(1, 7 * 24 * 60),
         doc="worker exits after this long with no session and no request"),
    Spec(key="SESSION_IDLE_MINUTES", default=30, parse=_int_between(1, 7 * 24 * 60),
         doc="session actors idle this long are stopped"),
    Spec(key="OBSERVER_IDLE_MINUTES", default=5, parse=_int_between(1, 24 * 60),
         doc="an observer process silent this long is stopped"),
    Spec(key="OBSERVER_CONCURRENCY", default=2, parse=_int_between(1, 32),
         doc="observer conversations open at once, across all sessions"),
    Spec(key="OBSERVER_DAILY_TOKENS", default=2_000_000, parse=_int_between(0, 1_000_000_000),
         doc="observer tokens per UTC day; past it the rules backend takes over"),
    Spec(key="EVENT_RETENTION_DAYS", default=7, parse=_int_between(1, 3650),
         doc="raw payloads of observed events are pruned after this many days"),
    Spec(key="SKIP_TOOLS", default=("TodoWrite",), parse=_tool_list,
         doc="tools whose events are not observed (memlite's own MCP tools always are skipped)"),
)
by_key: dict[str, Spec] = {spec.key: spec for spec in SPECS}


def default_data_dir(env: Mapping[str, str] | None = None) -> str:
    """``$MEMLITE_DATA_DIR`` (``~`` expanded) if set and not blank, else ``~/.memlite``."""
    env = os.environ if env is None else env
    raw = env.get(ENV_PREFIX + "DATA_DIR", "").strip()
    return os.path.expanduser(raw) if raw else os.path.join(os.path.expanduser("~"), ".memlite")


def make_private_dir(path: str | os.PathLike[str]) -> bool:
    """Create ``path`` (and missing parents) so that ``path`` itself is 0700 whatever the umask.

    An existing directory is left as it is (it may be one a person chose and shares on
    purpose); ``memlite doctor`` warns when the data directory is open to others.
    Returns True if it created the directory.

    Raises:
        OSError: it cannot be created (a file in the way, permissions, read-only disk).
    """
    path = os.fspath(path)
    created = False
    try:
        os.mkdir(path, 0o700)
        created = True
    except FileExistsError:
        pass
    except FileNotFoundError:
        parent = os.path.dirname(os.path.abspath(path))
        os.makedirs(parent, exist_ok=True)  # parents: the user's own umask applies
        try:
            os.mkdir(path, 0o700)
            created = True
        except FileExistsError:
            pass
    info = os.stat(path)
    if not stat.S_ISDIR(info.st_mode):
        raise NotADirectoryError(f"{path} is not a directory")
    if created and stat.S_IMODE(info.st_mode) != 0o700:  # a umask that removed owner bits
        with contextlib.suppress(OSError):
            os.chmod(path, 0o700)
    return created


def read_file(path: str | os.PathLike[str]) -> dict[str, object]:
    """``settings.json`` as a dict: {} when missing.

    Raises:
        SettingsFileError: unreadable, not JSON, or not a JSON object (the message says
            how to fix it; the file is never rewritten then).
    """
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise SettingsFileError(f"cannot read settings file {path}: {exc}") from None
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise SettingsFileError(f"cannot read settings file {path}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise SettingsFileError(
            f"settings file {path} is not valid JSON ({exc.msg} at line {exc.lineno}). "
            "Fix it, or delete it to get the defaults back; it was left as it is."
        ) from None
    except RecursionError:
        raise SettingsFileError(f"settings file {path} is nested too deeply") from None
    if not isinstance(value, dict):
        raise SettingsFileError(
            f"settings file {path} must hold a JSON object of settings, not "
            f"{type(value).__name__}. Fix it, or delete it to get the defaults back; "
            "it was left as it is."
        )
    return value


def validate(key: str, raw: object, origin: str) -> object:
    """Parse one value; ``SettingError`` naming key, value and origin if it is invalid."""
    try:
        return by_key[key].parse(raw)
    except ValueError as exc:
        raise SettingError(
            key, f"setting {key} has an invalid value {raw!r} (from {origin}): {exc}"
        ) from None


def resolve(stored: Mapping[str, object], env: Mapping[str, str], *, file_label: str,
            keys: Iterable[str] | None = None) -> tuple[dict[str, object], dict[str, str]]:
    """Every setting's value and source (``env`` | ``file`` | ``default``).

    Args:
        stored: the parsed ``settings.json`` (unknown keys are ignored: a newer memlite
            may have written them).
        env: the environment (``MEMLITE_<KEY>`` overrides).
        file_label: how to name the file in an error message.
        keys: only these settings (default: all).

    Raises:
        SettingError: the first invalid value, in ``SPECS`` order.
    """
    wanted = None if keys is None else set(keys)
    values: dict[str, object] = {}
    sources: dict[str, str] = {}
    for spec in SPECS:
        if wanted is not None and spec.key not in wanted:
            continue
        env_raw = env.get(ENV_PREFIX + spec.key)
        if env_raw is not None:
            values[spec.key] = validate(spec.key, env_raw, f"${ENV_PREFIX}{spec.key}")
            sources[spec.key] = "env"
        elif spec.key in stored:
            values[spec.key] = validate(spec.key, stored[spec.key], file_label)
            sources[spec.key] = "file"
        else:
            values[spec.key] = spec.default
            sources[spec.key] = "default"
    return values, sources
