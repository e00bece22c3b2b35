"""Which processes a test started: the leak check of tests/conftest.py (and its variant in
tests/browser/conftest.py) compares these before and after each test."""

from __future__ import annotations

import os

from procroot import PROC  # noqa: E402

__all__ = ["descendant_pids"]


def descendant_pids(root: int) -> set[int]:
    """Every live process whose parent chain leads to ``root`` (read from /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir(PROC):
        if not entry.isdigit():
            continue
        try:
            with open(f"{PROC}/{entry}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        # The command name may contain spaces and parentheses: split after the last ')'.
        fields = stat[stat.rindex(b")") + 2 :].split()
        if fields[0] == b"Z":
            continue
        children.setdefault(int(fields[1]), []).append(int(entry))
    found: set[int] = set()
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found
