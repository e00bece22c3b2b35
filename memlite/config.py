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

The keys, defaults and parsers live in ``memlite.settings_spec`` (standard library only),
which the hook uses too: hook and worker read every setting the same way (issue 13). This
module adds the typed ``Settings`` record, ``ConfigError`` and writing the file.

Choices made where the issue is silent: ``OLLAMA_URL`` must point at a loopback address
(memory never leaves the machine), and no setting names a program to run or an address
to bind other than 127.0.0.1.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from memlite import settings_spec
from memlite.errors import ConfigError, DataDirError
from memlite.settings_spec import SETTINGS_FILE, SPECS
from memlite.settings_spec import Spec as Setting

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

_BY_KEY = settings_spec.by_key


def default_data_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$MEMLITE_DATA_DIR`` if set, else ``~/.memlite`` (``settings_spec.default_data_dir``)."""
    return Path(settings_spec.default_data_dir(env))


def ensure_data_dir(path: Path) -> Path:
    """Create the data directory (0700 whatever the umask) if needed and prove it is writable.

    Raises:
        DataDirError: it cannot be created, is not a directory, or cannot be written.
    """
    path = Path(path)
    try:
        settings_spec.make_private_dir(path)
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
        return settings_spec.validate(key, raw, origin)
    except settings_spec.SettingError as exc:
        raise ConfigError(str(exc)) from None


def _read_file(path: Path) -> dict[str, Any]:
    try:
        return settings_spec.read_file(path)
    except settings_spec.SettingsFileError as exc:
        raise ConfigError(str(exc)) from None


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
    try:
        values, sources = settings_spec.resolve(stored, env, file_label=str(path))
    except settings_spec.SettingError as exc:
        raise ConfigError(str(exc)) from None
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
