"""memlite's hook entry point, run by ``memlite-hook`` as ``python -I -S hook.py <Event>``.

It puts the plugin directory (which ships memlite's source as ``plugin/memlite``) first
on ``sys.path`` and hands over to ``memlite.hooks.main``. Standard library only; any
failure exits 0 with nothing on stdout (Claude Code must never be blocked by memory).

The hook runs on Python 3.9 or newer (macOS 12+'s ``/usr/bin/python3`` is 3.9). On an
older one (macOS 11's Command Line Tools ship 3.8) memlite cannot start at all, not even
build its own environment: a SessionStart says so in one line rather than nothing.
"""

import json
import os
import sys

if sys.version_info < (3, 9):  # noqa: UP036 - this file runs on whatever python3 there is
    if sys.argv[1:2] == ["SessionStart"]:
        found = f"{sys.version_info[0]}.{sys.version_info[1]} ({sys.executable})"
        print(json.dumps({"systemMessage": (
            f"memlite: not started: its hook ran on Python {found}, and memlite needs 3.9 "
            "or newer; install one (macOS: brew install python@3.12) or set MEMLITE_PYTHON "
            "to it")}))
    sys.exit(0)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
try:
    from memlite.hooks.main import main
except Exception:  # noqa: BLE001 - a broken install must not break Claude Code
    sys.exit(0)
sys.exit(main(sys.argv[1:]))
