"""Fixtures for the actor runtime's tests.

Every test here runs on ``autojump_clock`` (defined in ``tests/conftest.py``) and asks
for ``hang_guard``, so a deadlock does not hang: with every task blocked, virtual time
jumps straight to the watchdog's deadline, which fails the test with a message instead
of waiting for pytest-timeout. The guard must be requested by name: pytest-trio only
runs async fixtures that the test itself lists, so ``autouse`` would silently skip it.
"""

from __future__ import annotations

import pytest
import trio

HANG_AFTER = 1000.0
"""Virtual seconds after which a test is considered hung (all tests need far less)."""


@pytest.fixture
async def hang_guard(nursery):
    """Fail the test if it is still running after ``HANG_AFTER`` virtual seconds."""

    async def watchdog():
        await trio.sleep(HANG_AFTER)
        raise AssertionError(f"still running after {HANG_AFTER} virtual seconds: deadlock?")

    nursery.start_soon(watchdog)
