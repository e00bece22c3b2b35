"""memlite's hook entry point, run by ``memlite-hook`` as ``python -I -S hook.py <Event>``.

It puts the plugin directory (which ships memlite's source as ``plugin/memlite``) first
on ``sys.path`` and hands over to ``memlite.hooks.main``. Standard library only; any
failure exits 0 with nothing on stdout (Claude Code must never be blocked by memory).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
try:
    from memlite.hooks.main import main
except Exception:  # noqa: BLE001 - a broken install must not break Claude Code
    sys.exit(0)
sys.exit(main(sys.argv[1:]))
