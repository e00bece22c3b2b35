"""memlite.heap: freed heap pages go back to the system where the platform allows it."""

from __future__ import annotations

import os
import platform
import sys

import pytest

from memlite import heap


def _resident_kb() -> int:
    with open("/proc/self/statm") as f:  # Linux only: the test is skipped elsewhere
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


def test_the_platform_call_is_named():
    expected = {"darwin": "malloc_zone_pressure_relief"}.get(sys.platform)
    if expected is None and platform.libc_ver()[0] == "glibc":
        expected = "malloc_trim"
    assert heap.releaser_name() == expected
    assert heap.release_free_memory() is (expected is not None)


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc" or not os.path.exists("/proc/self/statm"),
                    reason="measures resident memory through glibc's heap and /proc")
def test_a_fragmented_heap_shrinks_after_a_release():
    # 40,000 blocks of 2 kB from the C heap (above pymalloc's 512-byte limit); every 64th
    # is kept, so no free run reaches the heap's top and free() alone returns nothing.
    blocks = [bytearray(2048) for _ in range(40_000)]
    kept = blocks[::64]
    del blocks
    before = _resident_kb()
    assert heap.release_free_memory() is True
    after = _resident_kb()
    assert before - after > 40_000 * 2 * 0.5  # at least half of the ~78 MB freed came back
    assert len(kept) == 625


def test_a_failing_call_is_reported_not_raised(monkeypatch):
    def boom():
        raise OSError("no")

    monkeypatch.setattr(heap, "_releaser", lambda: ("malloc_trim", boom))
    assert heap.release_free_memory() is False
    monkeypatch.setattr(heap, "_releaser", lambda: None)
    assert heap.release_free_memory() is False


_THREAD_BURST = """
import sys, threading
from memlite import heap
if sys.argv[1] == "one":
    assert heap.use_one_arena() is True
def rss_kb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4
def burst():
    # A big block freed raises glibc's dynamic mmap threshold (as a batch of activations
    # does), so the 20 MB of 64 kB blocks after it come from the thread's arena, and
    # freed, they end at that arena's top.
    big = bytearray(16 << 20)
    del big
    blocks = [bytearray(64 << 10) for _ in range(320)]
    del blocks
worker = threading.Thread(target=burst)
worker.start()
worker.join()
before = rss_kb()
heap.release_free_memory()
print(before - rss_kb())
"""


def _released_kb(mode: str) -> int:
    import subprocess

    done = subprocess.run([sys.executable, "-c", _THREAD_BURST, mode], capture_output=True,
                          text=True, check=True, timeout=60)
    return int(done.stdout.strip())


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc" or not os.path.exists("/proc/self/statm"),
                    reason="measures resident memory through glibc's arenas and /proc")
def test_with_one_arena_a_threads_freed_burst_goes_back_to_the_system():
    # A thread's own arena keeps the top it freed through a trim; on the main arena
    # (what the worker uses, since it loads and runs the model on threads) it goes back.
    assert _released_kb("one") > 15 * 1024


def test_one_arena_is_only_asked_of_glibc():
    expected = platform.libc_ver()[0] == "glibc" and sys.platform != "darwin"
    import subprocess

    done = subprocess.run([sys.executable, "-c",
                           "from memlite import heap; print(heap.use_one_arena())"],
                          capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == str(expected)


def test_the_worker_limits_arenas_before_it_imports_anything_that_starts_threads(monkeypatch):
    import memlite.worker
    from memlite import cli

    calls: list[str] = []
    monkeypatch.setattr(heap, "use_one_arena", lambda: calls.append("arena") or True)
    monkeypatch.setattr(memlite.worker, "run", lambda data_dir: calls.append("run") or 0)
    assert cli.main(["worker", "run", "--data-dir", "/nonexistent-memlite-test"]) == 0
    assert calls == ["arena", "run"]


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads through /proc")
def test_the_cli_starts_no_thread_before_the_worker_limits_arenas():
    import subprocess

    done = subprocess.run([sys.executable, "-c", "import os, memlite.cli, memlite.heap; "
                           "print(len(os.listdir('/proc/self/task')))"],
                          capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "1"
