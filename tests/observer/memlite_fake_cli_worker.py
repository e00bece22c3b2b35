"""Test-only: ``memlite worker run`` with the observer's CLI pointed at ``fake_claude.py``.

The worker has no setting for the CLI's path (it runs the SDK's bundled CLI, or ``claude``
on PATH), so a test that needs a REAL worker process observing through the fake CLI starts
this script instead of ``python -m memlite``: it swaps the bundled CLI's path before the
worker starts and then runs the ordinary command line (``worker run --data-dir ...``).
``MEMLITE_TEST_FAKE_CLI`` names another fake (default ``fake_claude.py``).
Use it as ``start_worker(data_dir, argv=[python, this file, "worker", "run", ...])``.
"""

from __future__ import annotations

import os
from pathlib import Path

from memlite.observer import conversation_parts

conversation_parts.BUNDLED_CLI = Path(os.environ.get("MEMLITE_TEST_FAKE_CLI") or Path(
    __file__).resolve().with_name("fake_claude.py"))

from memlite.cli import main  # noqa: E402 - after the swap, on purpose

raise SystemExit(main())
