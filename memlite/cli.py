"""The ``memlite`` command.

Every subcommand turns memlite's own errors (``MemliteError``) into one line on stderr
and exit status 2: a person sees what is wrong and what to do, never a traceback.
Nothing but the command's own output goes to stdout.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from memlite import __version__
from memlite.errors import MemliteError

__all__ = ["build_parser", "main"]


def _cmd_demo(args: argparse.Namespace) -> int:
    from memlite.demo import run_demo

    return run_demo(keep=args.keep)


def _cmd_settings(args: argparse.Namespace) -> int:
    from memlite.config import load_settings

    settings = load_settings()
    if args.json:
        print(json.dumps({"dataDir": str(settings.data_dir), "settings": settings.public()}, indent=2))
        return 0
    print(f"data directory: {settings.data_dir}")
    width = max(len(key) for key in settings.values)
    for key, item in settings.public().items():
        value = item["value"]
        shown = ",".join(value) if isinstance(value, list) else json.dumps(value)
        print(f"  {key:<{width}}  {shown:<24} ({item['source']})  {item['doc']}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memlite", description="Memory for Claude Code.")
    parser.add_argument("--version", action="version", version=f"memlite {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = sub.add_parser("demo", help="run memlite end to end on a throwaway data directory")
    demo.add_argument("--keep", action="store_true", help="keep the throwaway data directory")
    demo.set_defaults(func=_cmd_demo)

    settings = sub.add_parser("settings", help="show every setting, its value and where it came from")
    settings.add_argument("--json", action="store_true", help="print JSON")
    settings.set_defaults(func=_cmd_settings)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except MemliteError as exc:
        print(f"memlite: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
