"""Hypercorn's per-connection locks, taken without a scheduler pass when they are free.

Why: under Hypercorn 0.18's Trio worker every request on a kept-alive connection goes
through two ``trio.Lock``s: the connection's write lock (``TCPServer.send_lock``, around
every socket write, including the response's) and the keep-alive timer's lock
(``TrioSingleTask._lock``, taken when a request arrives to stop the idle timer and again
after the response to restart it). ``trio.Lock`` ends even an uncontended acquire with a
scheduler pass (``cancel_shielded_checkpoint``: the task is put back in the run queue and
the loop runs every other ready task and polls for I/O first). Measured in the worker at
10,000 observations (kept connection, ``bench/bench_http_ab.py --profile``), each such pass
on the way to the response's write was ~0.05 ms, two of them before the response's bytes
leave (idle timer stopped, write lock taken).

What: ``install()`` gives every new ``TCPServer`` and ``TrioSingleTask`` a ``PromptLock``
in place of its ``trio.Lock``. A ``PromptLock`` is a ``trio.Lock`` whose ``async with``
takes the lock at once when it is free, after the same cancellation check
(``checkpoint_if_cancelled``: a cancelled task still gets ``Cancelled`` there, as from
``trio.Lock.acquire``) but without the pass; a held lock is waited for exactly as before
(``trio.Lock.acquire``, FIFO). Mutual exclusion is unchanged (the same ``trio.Lock``
underneath, owned by the same task). No byte of any response changes; the work that
follows a lock (the write, which checkpoints itself) lets other tasks run as before.

Compatibility: it wraps the ``__init__`` of two classes of the pinned Hypercorn
(``hypercorn.trio.tcp_server.TCPServer``, ``hypercorn.trio.worker_context.TrioSingleTask``;
see ``constraints.txt``), only under the Hypercorn minor version it was written and
measured against (``HYPERCORN``, 0.18; any other: nothing is installed), and replaces
the attribute only when the original ``__init__``
left a ``trio.Lock`` under the expected name (``send_lock``, ``_lock``); anything else
(a class missing or without an ``__init__`` of its own, an attribute renamed or of
another type) leaves that object as Hypercorn made it. Idempotent.
"""

from __future__ import annotations

from types import TracebackType
from typing import Any

import trio

__all__ = ["HYPERCORN", "PromptLock", "hypercorn_supported", "install", "installed"]

HYPERCORN = "0.18"  # the Hypercorn minor version this module and ``idle_timer`` wrap

_MARK = "_memlite_prompt_locks"
# (module, class, attribute holding its trio.Lock)
TARGETS = (
    ("hypercorn.trio.tcp_server", "TCPServer", "send_lock"),
    ("hypercorn.trio.worker_context", "TrioSingleTask", "_lock"),
)


class PromptLock:
    """A ``trio.Lock`` (``async with`` only, plus ``locked()``) whose free acquire takes
    no scheduler pass; see the module docstring."""

    __slots__ = ("_lock",)

    def __init__(self) -> None:
        self._lock = trio.Lock()

    def locked(self) -> bool:
        return self._lock.locked()

    async def __aenter__(self) -> None:
        await trio.lowlevel.checkpoint_if_cancelled()
        try:
            self._lock.acquire_nowait()
        except trio.WouldBlock:
            await self._lock.acquire()

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        self._lock.release()


def hypercorn_supported() -> bool:
    """Whether the installed Hypercorn is the minor version ``HYPERCORN`` names."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("hypercorn")
    except PackageNotFoundError:
        return False
    return found.split(".")[:2] == HYPERCORN.split(".")


def _classes() -> list[tuple[type, str]]:
    import importlib

    found = []
    for module_name, class_name, attribute in TARGETS:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        cls = getattr(module, class_name, None)
        if isinstance(cls, type):
            found.append((cls, attribute))
    return found


def installed() -> list[str]:
    """The Hypercorn classes whose new instances get a ``PromptLock``."""
    return [cls.__name__ for cls, _ in _classes()
            if getattr(vars(cls).get("__init__"), _MARK, False)]


def install() -> list[str]:
    """Wrap the ``__init__`` of each target class present (see the module docstring);
    the names of the classes wrapped (none under another Hypercorn version)."""
    if not hypercorn_supported():
        return installed()
    for cls, attribute in _classes():
        original = vars(cls).get("__init__")  # its own (a class without one is left)
        if original is None or getattr(original, _MARK, False):
            continue

        def __init__(self: Any, *args: Any, _original: Any = original,
                     _attribute: str = attribute, **kwargs: Any) -> None:
            _original(self, *args, **kwargs)
            if type(getattr(self, _attribute, None)) is trio.Lock:
                setattr(self, _attribute, PromptLock())

        setattr(__init__, _MARK, True)
        __init__.__wrapped__ = original  # type: ignore[attr-defined]
        setattr(cls, "__init__", __init__)  # noqa: B010
    return installed()
