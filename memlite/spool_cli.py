"""``memlite spool``: what waits in the hook spool and its quarantine, and retrying it.

``memlite spool status`` prints how many spool files wait to be drained and how many
events are quarantined, with the newest reasons (``--json`` for a script).
``memlite spool retry`` puts the quarantined events back in the spool, for the worker's
next drain (within seconds when it runs, at its start otherwise): after an upgrade fixed
what refused them. What is still refused goes back to quarantine, with the new reason.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["add_spool_command"]


def _status(args: argparse.Namespace) -> int:
    from memlite.actors.spooler import spool_waiting
    from memlite.config import load_settings
    from memlite.hooks import spool

    data_dir = load_settings().data_dir
    found = spool.quarantined(data_dir, latest=args.latest)
    state: dict[str, Any] = {"waiting": spool_waiting(data_dir),
                             "quarantined": found.count, "latest": list(found.latest),
                             "files": list(found.files)}
    if args.json:
        print(json.dumps(state))
        return 0
    print(f"spool: {'events wait to be drained' if state['waiting'] else 'empty'}")
    print(f"quarantined: {found.count}" + (f" (in {', '.join(found.files)})"
                                          if found.files else ""))
    for entry in found.latest:
        print(f"  {entry.get('event') or '?'}: {entry.get('reason')}")
    return 0


def _retry(args: argparse.Namespace) -> int:
    from memlite.config import load_settings
    from memlite.hooks import spool

    requeued, kept = spool.requeue(load_settings().data_dir)
    print(f"{requeued} event(s) back in the spool for the next drain; {kept} kept in "
          "quarantine (not whole spool records)")
    return 0


def count(text: str) -> int:
    """An argparse type: a whole number, 0 or more (``--latest -1`` showed all but one)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number 0 or greater")
    return value


def add_spool_command(sub: Any) -> None:
    """Add ``memlite spool status|retry`` to the CLI's subparsers."""
    parser = sub.add_parser("spool", help="the hook spool: what waits, what is quarantined, "
                                          "retry the quarantined events")
    actions = parser.add_subparsers(dest="spool_command", metavar="ACTION", required=True)
    status = actions.add_parser("status", help="files waiting and quarantined events")
    status.add_argument("--latest", type=count, default=5, help="newest reasons to show")
    status.add_argument("--json", action="store_true", help="print JSON")
    status.set_defaults(func=_status)
    retry = actions.add_parser("retry", help="put quarantined events back in the spool")
    retry.set_defaults(func=_retry)
