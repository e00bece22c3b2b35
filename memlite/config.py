"""Settings: one JSON file in the data directory, each key overridable from the environment.

Where things live:

* The data directory is ``$MEMLITE_DATA_DIR`` when set, else ``~/.memlite``. It holds the
  memory itself (``memlite.db``), ``settings.json``, the token, logs and the hook spool, and
  it outlives plugin installs and uninstalls. It is created 0700.
* ``settings.json`` is created with every default on first use (0600), so a person can see
  and edit every knob. A value in ``MEMLITE_<KEY>`` wins over the file, which wins over the
  default; ``Settings.sources`` says which one each value came from.

What bad input gets:

* An invalid value (wrong type, out of range, unknown choice) raises ``ConfigError`` whose
  message names the key, the value and where it came from; never a traceback for the user.
* A ``settings.json`` that is not JSON (or not an object) raises ``ConfigError`` naming the
  file and saying how to fix it. The file is never rewritten in that case: nothing a person
  wrote is lost.
* Unknown keys in the file are kept (a newer memlite may have written them) and ignored.
* A data directory that cannot be created or written raises ``DataDirError``.

Choices made where the issue is silent: ``OLLAMA_URL`` must point at a loopback address
(memory never leaves the machine), and no setting names a program to run or an address
to bind other than 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import attrs

from memlite.errors import ConfigError, DataDirError

__all__ = [
    "SPECS",
    "Setting",
    "Settings",
    "default_data_dir",
    "ensure_data_dir",
    "load_settings",
    "save_settings",
    "settings_path",
]

ENV_PREFIX = "MEMLITE_"
SETTINGS_FILE = "settings.json"


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
    parts = urlsplit(raw.strip())
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ValueError("expected an http:// or https:// URL")
    if parts.hostname not in {"127.0.0.1", "localhost", "::1"}:
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


@attrs.frozen(kw_only=True)
class Setting:
    """One knob: its key (without the ``MEMLITE_`` prefix), default, parser and meaning."""

    key: str
    default: Any
    parse: Callable[[object], Any]
    doc: str
    secret: bool = False


SPECS: tuple[Setting, ...] = (
    Setting(key="WORKER_PORT", default=37888, parse=_int_between(1024, 65535),
            doc="TCP port of the worker on 127.0.0.1"),
    Setting(key="OBSERVATION_COUNT", default=50, parse=_int_between(0, 1000),
            doc="observations listed in the context index"),
    Setting(key="FULL_OBSERVATION_COUNT", default=5, parse=_int_between(0, 100),
            doc="observations shown in full in the context block"),
    Setting(key="SUMMARY_COUNT", default=3, parse=_int_between(0, 50),
            doc="session summaries in the context block"),
    Setting(key="CONTEXT_MAX_CHARS", default=9000, parse=_int_between(500, 10000),
            doc="budget of the SessionStart context block (Claude Code previews >10,000)"),
    Setting(key="MCP_ENABLED", default=True, parse=_bool, doc="serve the MCP memory tools"),
    Setting(key="OBSERVER", default="auto", parse=_choice("auto", "claude", "rules"),
            doc="auto: Claude when available, else rules"),
    Setting(key="OBSERVER_MODEL", default="claude-haiku-4-5", parse=_name(),
            doc="model of the observer conversation"),
    Setting(key="EMBEDDER", default="auto",
            parse=_choice("auto", "wordllama", "minilm", "ollama", "none"),
            doc="embedding backend for semantic search"),
    Setting(key="OLLAMA_URL", default="http://127.0.0.1:11434", parse=_loopback_url,
            doc="Ollama server (loopback only)"),
    Setting(key="OLLAMA_MODEL", default="bge-m3", parse=_name(), doc="Ollama embedding model"),
    Setting(key="IDLE_SHUTDOWN_MINUTES", default=30, parse=_int_between(1, 7 * 24 * 60),
            doc="worker exits after this long with no session and no request"),
    Setting(key="SESSION_IDLE_MINUTES", default=30, parse=_int_between(1, 7 * 24 * 60),
            doc="session actors idle this long are stopped"),
    Setting(key="OBSERVER_IDLE_MINUTES", default=5, parse=_int_between(1, 24 * 60),
            doc="an observer process silent this long is stopped"),
    Setting(key="OBSERVER_CONCURRENCY", default=2, parse=_int_between(1, 32),
            doc="observer conversations open at once, across all sessions"),
    Setting(key="OBSERVER_DAILY_TOKENS", default=2_000_000,
            parse=_int_between(0, 1_000_000_000),
            doc="observer tokens per UTC day; past it the rules backend takes over"),
    Setting(key="EVENT_RETENTION_DAYS", default=7, parse=_int_between(1, 3650),
            doc="raw payloads of observed events are pruned after this many days"),
    Setting(key="SKIP_TOOLS", default=("TodoWrite",), parse=_tool_list,
            doc="tools whose events are not observed (memlite's own MCP tools always are skipped)"),
)
_BY_KEY = {spec.key: spec for spec in SPECS}


def default_data_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$MEMLITE_DATA_DIR`` if set, else ``~/.memlite``."""
    env = os.environ if env is None else env
    raw = env.get(ENV_PREFIX + "DATA_DIR", "").strip()
    return Path(raw).expanduser() if raw else Path.home() / ".memlite"


def ensure_data_dir(path: Path) -> Path:
    """Create the data directory (0700) if needed and prove it is writable.

    Raises:
        DataDirError: it cannot be created, is not a directory, or cannot be written.
    """
    path = Path(path)
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise DataDirError(
            f"data directory {path} cannot be created: a file is in the way. "
            "Move it, or set MEMLITE_DATA_DIR to another directory."
        ) from None
    except OSError as exc:
        raise DataDirError(
            f"data directory {path} cannot be created ({exc.strerror}). "
            "Set MEMLITE_DATA_DIR to a directory you can write."
        ) from None
    if not path.is_dir():
        raise DataDirError(
            f"data directory {path} is not a directory. Set MEMLITE_DATA_DIR elsewhere."
        )
    try:
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise DataDirError(
            f"data directory {path} is not writable ({exc.strerror}). "
            "Fix its permissions or set MEMLITE_DATA_DIR to a directory you can write."
        ) from None
    return path


def settings_path(data_dir: Path) -> Path:
    return Path(data_dir) / SETTINGS_FILE


def _validate(key: str, raw: object, origin: str) -> Any:
    try:
        return _BY_KEY[key].parse(raw)
    except ValueError as exc:
        raise ConfigError(
            f"setting {key} has an invalid value {raw!r} (from {origin}): {exc}"
        ) from None


def _read_file(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read settings file {path}: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"settings file {path} is not valid JSON ({exc.msg} at line {exc.lineno}). "
            "Fix it, or delete it to get the defaults back; it was left as it is."
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(
            f"settings file {path} must hold a JSON object of settings, not {type(data).__name__}. "
            "Fix it, or delete it to get the defaults back; it was left as it is."
        )
    return data


def _write_file(path: Path, data: Mapping[str, Any]) -> None:
    """Write atomically (temp file + rename) with mode 0600, so a crash never leaves half a file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2, sort_keys=True)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _jsonable(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


@attrs.frozen
class Settings:
    """Validated settings: read a value as ``settings.worker_port`` or ``settings["WORKER_PORT"]``.
    """

    data_dir: Path
    values: Mapping[str, Any]
    sources: Mapping[str, str]  # key -> "default" | "file" | "env"

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def __getattr__(self, name: str) -> Any:
        try:
            return self.values[name.upper()]
        except KeyError:
            raise AttributeError(name) from None

    def public(self) -> dict[str, Any]:
        """Every setting with its source, secrets left out: what the API and CLI may show."""
        return {
            spec.key: {"value": _jsonable(self.values[spec.key]), "source": self.sources[spec.key],
                       "default": _jsonable(spec.default), "doc": spec.doc}
            for spec in SPECS
            if not spec.secret
        }


def load_settings(data_dir: Path | None = None, env: Mapping[str, str] | None = None,
                  *, create: bool = True) -> Settings:
    """Read settings.json (creating it with the defaults when missing) and apply ``MEMLITE_*``.

    Args:
        data_dir: the data directory; ``default_data_dir(env)`` when None.
        env: the environment to read overrides from; ``os.environ`` when None.
        create: create the data directory and a default settings.json when missing.

    Raises:
        ConfigError: an invalid value or an unreadable settings file.
        DataDirError: the data directory cannot be created or written (only with create).
    """
    env = os.environ if env is None else env
    data_dir = default_data_dir(env) if data_dir is None else Path(data_dir)
    path = settings_path(data_dir)
    if create:
        ensure_data_dir(data_dir)
    stored = _read_file(path)
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for spec in SPECS:
        env_raw = env.get(ENV_PREFIX + spec.key)
        if env_raw is not None:
            values[spec.key] = _validate(spec.key, env_raw, f"${ENV_PREFIX}{spec.key}")
            sources[spec.key] = "env"
        elif spec.key in stored:
            values[spec.key] = _validate(spec.key, stored[spec.key], str(path))
            sources[spec.key] = "file"
        else:
            values[spec.key] = spec.default
            sources[spec.key] = "default"
    missing = [spec.key for spec in SPECS if spec.key not in stored]
    if create and missing:
        # First use, or a newer memlite added keys: write them so a person sees every knob.
        merged = dict(stored)
        merged.update({key: _jsonable(_BY_KEY[key].default) for key in missing})
        _write_file(path, merged)
    return Settings(data_dir=data_dir, values=values, sources=sources)


def save_settings(data_dir: Path, updates: Mapping[str, object],
                  env: Mapping[str, str] | None = None) -> Settings:
    """Validate ``updates`` as a whole, then persist them; nothing is written if any is invalid.

    Raises:
        ConfigError: an unknown key or an invalid value (names both).
    """
    for key, raw in updates.items():
        if key not in _BY_KEY:
            known = ", ".join(sorted(_BY_KEY))
            raise ConfigError(f"unknown setting {key!r}; known settings: {known}")
        _validate(key, raw, "the update")
    path = settings_path(data_dir)
    stored = _read_file(path)
    stored.update({key: _jsonable(_BY_KEY[key].parse(raw)) for key, raw in updates.items()})
    ensure_data_dir(Path(data_dir))
    _write_file(path, stored)
    return load_settings(data_dir, env)
