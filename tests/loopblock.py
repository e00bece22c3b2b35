"""A Trio instrument that fails a test when a task step holds the event loop too long.

Everything in the worker shares one Trio thread: a task step that computes (or does
blocking I/O) for 40 ms stalls every request, SSE stream and actor for 40 ms. Issue 17
moved ``/proc`` scans and large redactions to threads; this keeps them there.

Opt in per module or test with ``pytestmark = pytest.mark.loop_guard`` (async tests).

What counts is the Trio thread's CPU time per task step (``time.thread_time``), so a
loaded CI machine that preempts the process does not fail a test (wall time is recorded
too, for the report). The limit is ``LOOPBLOCK_MS`` (default 20 ms). Steps of a
task whose name is in ``EXEMPT`` are recorded but not failed on: the first-call imports
that every Python program pays once.

With ``LOOPBLOCK_REPORT=<file>`` every guarded test appends one JSON line (test,
longest CPU ms, its task, longest wall ms) to the file: ``bench/bench_loop.py`` reads it
for BENCHMARKS.md.
"""

from __future__ import annotations

import gc
import json
import os
import time

import trio

LIMIT_MS = float(os.environ.get("LOOPBLOCK_MS") or 20.0)
EXEMPT = frozenset({
    # The HTTP tests' app, built once per test: ``create_app`` (routes, the Jinja
    # environment, the OpenAPI document) runs once when a worker starts, before it serves
    # anything, so it stalls nobody; 15-18 ms CPU on a quiet 2-CPU machine, 25 ms once
    # under CI load (round 6), where it failed a test that blocked nothing.
    "<fixture 'app'>",
})


class LoopBlockWatch(trio.abc.Instrument):
    """Records the longest task step on the Trio thread (CPU and wall time)."""

    def __init__(self) -> None:
        self.longest_cpu = self.longest_wall = self.longest_gc = self.longest_exempt = 0.0
        self.cpu_task = self.wall_task = ""
        self.steps = 0
        self._cpu = self._wall = self._gc = self._gc_began = 0.0

    # The cyclic garbage collector runs inside whatever step allocates at that moment;
    # its pauses are the interpreter's, not the step's, so they are counted apart.
    def _on_gc(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._gc_began = time.thread_time()
        else:
            self._gc += time.thread_time() - self._gc_began

    def before_run(self) -> None:
        gc.callbacks.append(self._on_gc)

    def after_run(self) -> None:
        gc.callbacks.remove(self._on_gc)

    def before_task_step(self, task: trio.lowlevel.Task) -> None:
        self._cpu, self._wall, self._gc = time.thread_time(), time.perf_counter(), 0.0

    def after_task_step(self, task: trio.lowlevel.Task) -> None:
        self.longest_gc = max(self.longest_gc, self._gc)
        cpu = time.thread_time() - self._cpu - self._gc
        wall = time.perf_counter() - self._wall
        self.steps += 1
        if task.name in EXEMPT:
            self.longest_exempt = max(self.longest_exempt, cpu)
            return
        if cpu > self.longest_cpu:
            self.longest_cpu, self.cpu_task = cpu, task.name
        if wall > self.longest_wall:
            self.longest_wall, self.wall_task = wall, task.name

    def report(self, test: str) -> dict[str, object]:
        return {"test": test, "cpu_ms": round(self.longest_cpu * 1000, 2),
                "cpu_task": self.cpu_task, "wall_ms": round(self.longest_wall * 1000, 2),
                "wall_task": self.wall_task, "steps": self.steps,
                "gc_ms": round(self.longest_gc * 1000, 2),
                "exempt_cpu_ms": round(self.longest_exempt * 1000, 2)}


def record(line: dict[str, object]) -> None:
    path = os.environ.get("LOOPBLOCK_REPORT")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(line) + "\n")


def guarded_run(test: str):  # type: ignore[no-untyped-def]
    """A ``trio.run`` for pytest-trio (``pytest.mark.trio(run=...)``) that adds the watch
    and fails the test past ``LIMIT_MS``."""

    def run(fn, *, clock=None, instruments=()):  # type: ignore[no-untyped-def]
        watch = LoopBlockWatch()
        result = trio.run(fn, clock=clock, instruments=[*instruments, watch])
        line = watch.report(test)
        record(line)
        assert watch.longest_cpu * 1000 <= LIMIT_MS, (
            f"the event loop was blocked {line['cpu_ms']} ms (CPU) by task "
            f"{line['cpu_task']!r}; limit {LIMIT_MS} ms: move that work to a thread")
        return result

    return run
