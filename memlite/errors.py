"""Every exception memlite raises on purpose, in one tree.

::

    MemliteError                      base of everything below
    ├── ConfigError                   a setting is invalid, or settings.json cannot be read
    ├── InputError                    a request or payload is malformed (HTTP 4xx, .status)
    │   └── NotFound                  it names a session, observation or summary that does not exist
    ├── DataDirError                  the data directory cannot be created, written or locked
    ├── ActorError                    the actor runtime
    │   ├── MailboxFull               send_nowait() on a full mailbox
    │   ├── AskTimeout                ask() got no reply before its timeout
    │   ├── ActorDied                 the actor stopped before it replied (or before send)
    │   └── RestartIntensityExceeded  a supervisor saw more than N restarts in P seconds
    ├── StorageError                  the database
    │   ├── NotADatabaseError         the file exists but is not SQLite (or is encrypted)
    │   ├── SchemaTooNewError         written by a newer memlite: we refuse to touch it
    │   └── MigrationError            a migration failed; it was rolled back
    ├── ObserverError                 the AI observer (see actors/observer.py)
    │   ├── ObserverUnavailable       no Claude Code CLI to run (not installed, not executable)
    │   ├── ObserverCrashed           the CLI process exited or died mid-conversation (.exit_code)
    │   ├── ObserverProtocolError     the CLI printed undecodable JSON or a line over the limit
    │   ├── ObserverErrorResult       the CLI answered a turn with an error result (.text)
    │   ├── ObserverTimeout           a turn (or the start) missed our deadline; also TimeoutError
    │   └── ObserverClosed            ask() on a conversation that is closed or broken
    └── WorkerError                   the worker process would not start, stop or answer
        └── PortInUse                 the worker's port on 127.0.0.1 is taken by another program

``AskTimeout`` is also a ``TimeoutError`` so callers that only know the
standard library can still catch it. Errors that reach a person carry a
message that names the file or key at fault and says what to do; the CLI
prints that message, never a traceback.
"""

from __future__ import annotations

__all__ = [
    "ActorDied",
    "ActorError",
    "AskTimeout",
    "ConfigError",
    "DataDirError",
    "InputError",
    "MailboxFull",
    "MemliteError",
    "MigrationError",
    "NotADatabaseError",
    "NotFound",
    "ObserverClosed",
    "ObserverCrashed",
    "ObserverError",
    "ObserverErrorResult",
    "ObserverProtocolError",
    "ObserverTimeout",
    "ObserverUnavailable",
    "PortInUse",
    "RestartIntensityExceeded",
    "SchemaTooNewError",
    "StorageError",
    "WorkerError",
]


class MemliteError(Exception):
    """Base class of every error memlite raises on purpose."""


class ConfigError(MemliteError):
    """A setting is invalid or the settings file cannot be used."""


class InputError(MemliteError):
    """A request or payload is malformed; ``status`` is the HTTP status to answer with."""

    status: int = 400

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        if status is not None:
            self.status = status


class NotFound(InputError):
    """The request names something that does not exist (a session, an observation...)."""

    status = 404


class DataDirError(MemliteError):
    """The data directory cannot be created or written."""


class ActorError(MemliteError):
    """Something went wrong talking to an actor."""


class MailboxFull(ActorError):
    """``send_nowait`` found the actor's bounded mailbox full."""


class AskTimeout(ActorError, TimeoutError):
    """``ask`` got no reply within its timeout."""


class ActorDied(ActorError):
    """The actor stopped (crashed, or was stopped) before it could reply."""


class RestartIntensityExceeded(ActorError):
    """A supervisor restarted children more than ``intensity`` times in ``period`` seconds."""


class StorageError(MemliteError):
    """The database could not be opened, read or written."""


class NotADatabaseError(StorageError):
    """The database file exists but is not an SQLite database."""


class SchemaTooNewError(StorageError):
    """The database was written by a newer memlite than this one."""


class MigrationError(StorageError):
    """A schema migration failed; it was rolled back and nothing was changed."""


class ObserverError(MemliteError):
    """The AI observer failed (no CLI, bad reply, quota, crash)."""


class ObserverUnavailable(ObserverError):
    """No Claude Code CLI can be run: the rules backend must take over."""


class ObserverCrashed(ObserverError):
    """The CLI process exited or died during a conversation; ``exit_code`` when known."""

    def __init__(self, message: str, *, exit_code: int | None = None) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class ObserverProtocolError(ObserverError):
    """The CLI printed something the SDK cannot decode (corrupt JSON, a line over the limit)."""


class ObserverErrorResult(ObserverError):
    """The CLI ended a turn with ``is_error``; ``text`` is its result prose (quota, API error)."""

    def __init__(self, message: str, *, text: str = "", subtype: str | None = None) -> None:
        super().__init__(message)
        self.text = text
        self.subtype = subtype


class ObserverTimeout(ObserverError, TimeoutError):
    """A turn, or the start of the conversation, missed our own deadline."""


class ObserverClosed(ObserverError):
    """``ask`` on a conversation that was closed, or broken by an earlier failure."""


class WorkerError(MemliteError):
    """The worker process could not be started, stopped or reached (see lifecycle.py)."""


class PortInUse(WorkerError):
    """The worker's port on 127.0.0.1 is already taken by another program."""
