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
