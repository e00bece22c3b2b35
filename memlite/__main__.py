"""``python -m memlite``: the same as the ``memlite`` command."""
from memlite.cli import main

raise SystemExit(main())
