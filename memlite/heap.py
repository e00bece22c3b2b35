"""Handing freed heap memory back to the system after a burst of work (best effort).

Why: embedding observations allocates megabytes of activations per text (ONNX Runtime,
numpy, the tokenizer), all freed after each call; but the C allocator keeps freed pages
for reuse, so a worker that embedded a backlog stays that much larger for the rest of
its life. Measured here (glibc, MiniLM int8 copy, one process): 109 MB resident after
loading the model, 171 MB after embedding 200 long texts, 103 MB after ``malloc_trim``.

How, per platform (ctypes on the process's own symbols, ``CDLL(None)``: no library
search, no subprocess):

* glibc (Linux): ``malloc_trim(0)`` returns free pages anywhere in the heap;
* macOS: ``malloc_zone_pressure_relief(NULL, 0)`` (libSystem, macOS 10.7+) asks every
  malloc zone to give back what it can;
* anything else (musl, Windows...): nothing, and ``release_free_memory`` says so.

Called off the Trio thread after a batch of work (``memlite/actors/embedder.py``), never
per request: a trim walks the heap (~1 ms for ~100 MB).

One arena (glibc): by default glibc gives threads their own malloc arenas, and
``malloc_trim`` cannot shrink the top of a thread's arena, the part a burst of freed
activations ends in. The worker loads and runs the model on threads, so a trim after a
backlog left ~15-25 MB behind (2 CPUs, MiniLM: 160-172 MB after a 200-text backlog
against ~146 MB idle). ``use_one_arena`` (``mallopt(M_ARENA_MAX, 1)``, called by
``memlite worker run`` before any thread exists) puts every thread on the main arena,
whose top a trim does return: 150 MB after the same backlog, no slower (per-thread
caches still serve small blocks without the arena's lock): the backlog's CPU time
5.91 s against 6.38 s (bench_worker.py --before), hybrid search over HTTP at 10k
observations p50 10.01 ms against 9.97 ms, the two workers' requests interleaved.
macOS's allocator needs no such setting (pressure relief reaches every zone); elsewhere
it is a no-op.
"""

from __future__ import annotations

import ctypes
import functools
import logging
import sys
from collections.abc import Callable

__all__ = ["release_free_memory", "releaser_name", "use_one_arena"]

log = logging.getLogger(__name__)


@functools.cache
def _releaser() -> tuple[str, Callable[[], object]] | None:
    try:
        process = ctypes.CDLL(None)
    except OSError:
        return None
    if sys.platform == "darwin":
        relief = getattr(process, "malloc_zone_pressure_relief", None)
        if relief is None:
            return None
        relief.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
        relief.restype = ctypes.c_size_t
        return "malloc_zone_pressure_relief", lambda: relief(None, 0)
    trim = getattr(process, "malloc_trim", None)  # glibc only
    if trim is None:
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return "malloc_trim", lambda: trim(0)


M_ARENA_MAX = -8  # glibc's malloc.h


def use_one_arena() -> bool:
    """Make every thread allocate from glibc's main arena (``mallopt(M_ARENA_MAX, 1)``).

    Only effective before the process's second thread first allocates (glibc fixes its
    arena limit then): call it first thing in a process's entry point. False where there
    is no glibc ``mallopt`` (macOS, musl, Windows): nothing to do there."""
    if sys.platform == "darwin":
        return False
    try:
        process = ctypes.CDLL(None)
    except OSError:
        return False
    mallopt = getattr(process, "mallopt", None)
    if mallopt is None or getattr(process, "malloc_trim", None) is None:  # not glibc
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_ARENA_MAX, 1))


def releaser_name() -> str | None:
    """The C function this platform releases memory with, or None (no such call)."""
    found = _releaser()
    return found[0] if found else None


def release_free_memory() -> bool:
    """Give freed heap pages back to the system; False where the platform has no way
    (or the call failed, logged). Blocking: call it on a worker thread."""
    found = _releaser()
    if found is None:
        return False
    try:
        found[1]()
    except Exception:  # noqa: BLE001 - best effort: never let a trim break the caller
        log.warning("%s failed", found[0], exc_info=True)
        return False
    return True
