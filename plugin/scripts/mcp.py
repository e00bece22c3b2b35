"""memlite's MCP server entry point, run by ``memlite-mcp`` as ``python -I -S mcp.py``.

It puts the plugin directory (which ships memlite's source as ``plugin/memlite``) first
on ``sys.path`` and runs the lean, standard-library-only server (``memlite.mcp.server``),
so it starts on any Python 3.11+ even before the plugin's venv exists: its tools then
answer "memlite is still installing" until the worker can be started.
"""

import os
import sys

if sys.version_info < (3, 9):  # noqa: UP036 - this file runs on whatever python3 there is
    sys.stderr.write(f"memlite-mcp: needs Python 3.9 or newer, not {sys.version.split()[0]} "
                     f"({sys.executable}); set MEMLITE_PYTHON to a newer one\n")
    sys.exit(1)
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from memlite.mcp.server import main  # noqa: E402

sys.exit(main(sys.argv[1:]))
