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
from pathlib import Path
from typing import TYPE_CHECKING

from memlite import __version__
from memlite.errors import MemliteError
from memlite.search_cli import add_search_command
from memlite.spool_cli import add_spool_command

if TYPE_CHECKING:
    from memlite.lifecycle import WorkerInfo

__all__ = ["build_parser", "main", "seconds"]


def seconds(text: str) -> float:
    """An argparse type: a duration in seconds, finite and greater than 0.

    A zero, negative or NaN wait used to start a worker and then report it "not ready in
    time" (or a doctor canary "not observed within -5 s"): a bad argument is refused
    before anything runs.
    """
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not (0 < value < float("inf")):
        raise argparse.ArgumentTypeError(
            f"{text!r}: give a number of seconds greater than 0 (for example 20)")
    return value


def _cmd_demo(args: argparse.Namespace) -> int:
    from memlite.demo import run_demo

    return run_demo(keep=args.keep)


def _cmd_settings(args: argparse.Namespace) -> int:
    from memlite.config import load_settings

    settings = load_settings()
    if args.json:
        view = {"dataDir": str(settings.data_dir), "settings": settings.public()}
        print(json.dumps(view, indent=2))
        return 0
    print(f"data directory: {settings.data_dir}")
    width = max(len(key) for key in settings.values)
    for key, item in settings.public().items():
        value = item["value"]
        shown = ",".join(value) if isinstance(value, list) else json.dumps(value)
        print(f"  {key:<{width}}  {shown:<24} ({item['source']})  {item['doc']}")
    return 0


def _worker_line(head: str, info: WorkerInfo) -> str:
    return f"{head}: pid {info.pid}, port {info.port}, url {info.url}"


def _uptime(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def _cmd_worker_start(args: argparse.Namespace) -> int:
    from memlite.config import load_settings
    from memlite.spawn import start_worker

    result = start_worker(load_settings().data_dir, timeout=args.timeout)
    info = result.info
    assert info is not None  # start_worker waits for readiness
    if args.json:
        replaced = result.replaced.to_json() if result.replaced else None
        print(json.dumps({**info.to_json(), "url": info.url, "started": result.started,
                          "replaced": replaced}))
    elif result.replaced:
        old = result.replaced
        print(_worker_line("worker started", info)
              + f" (replaced version {old.version}, pid {old.pid})")
    else:
        print(_worker_line("worker started" if result.started else "worker already running", info))
    return 0


def _cmd_worker_stop(args: argparse.Namespace) -> int:
    from memlite.config import default_data_dir
    from memlite.spawn import stop_worker

    info = stop_worker(default_data_dir(), grace=args.timeout)
    print(f"worker stopped: pid {info.pid}" if info else "worker not running")
    return 0


def _cmd_worker_status(args: argparse.Namespace) -> int:
    from memlite.config import default_data_dir
    from memlite.lifecycle import find_worker, probe_ready

    info = find_worker(default_data_dir())
    answering = info is not None and probe_ready(info.port, pid=info.pid)
    if args.json:
        extra = {"url": info.url, "uptimeSeconds": round(info.uptime(), 3),
                 "answering": answering} if info else {}
        print(json.dumps({"running": info is not None, **(info.to_json() if info else {}),
                          **extra}))
    elif info is None:
        print("worker not running")
    else:
        print(f"worker running: pid {info.pid}, port {info.port}, version {info.version}, "
              f"uptime {_uptime(info.uptime())}, url {info.url}"
              + ("" if answering else " (not answering)"))
    return 0 if info is not None else 1


def _cmd_worker_restart(args: argparse.Namespace) -> int:
    from memlite.config import load_settings
    from memlite.spawn import stop_worker

    stop_worker(load_settings().data_dir)
    return _cmd_worker_start(args)


def _cmd_worker_run(args: argparse.Namespace) -> int:
    from memlite.heap import use_one_arena

    use_one_arena()  # before the worker's imports start threads (memlite/heap.py)
    from memlite.worker import run

    return run(args.data_dir)


def _add_worker_commands(sub: argparse._SubParsersAction) -> None:
    worker = sub.add_parser("worker", help="start, stop or inspect the background worker")
    commands = worker.add_subparsers(dest="worker_command", metavar="ACTION", required=True)

    start = commands.add_parser("start", help="start the worker (if needed) and wait until ready")
    start.add_argument("--timeout", type=seconds, default=20.0,
                       help="seconds to wait (default 20)")
    start.add_argument("--json", action="store_true", help="print JSON")
    start.set_defaults(func=_cmd_worker_start)

    stop = commands.add_parser("stop", help="stop the worker (SIGTERM, then SIGKILL)")
    stop.add_argument("--timeout", type=seconds, default=5.0,
                      help="seconds before SIGKILL (default 5)")
    stop.set_defaults(func=_cmd_worker_stop)

    status = commands.add_parser("status", help="is the worker running? (exit 0 yes, 1 no)")
    status.add_argument("--json", action="store_true", help="print JSON")
    status.set_defaults(func=_cmd_worker_status)

    restart = commands.add_parser("restart", help="stop, then start the worker")
    restart.add_argument("--timeout", type=seconds, default=20.0,
                         help="seconds to wait (default 20)")
    restart.add_argument("--json", action="store_true", help="print JSON")
    restart.set_defaults(func=_cmd_worker_restart)

    run = commands.add_parser("run", help="run the worker in the foreground (what start runs)")
    run.add_argument("--data-dir", type=Path, default=None,
                     help="data directory (default: $MEMLITE_DATA_DIR or ~/.memlite)")
    run.set_defaults(func=_cmd_worker_run)


def _cmd_dashboard(args: argparse.Namespace) -> int:
    """Start the worker if needed, ask it for a one-time login URL with the token, print it."""
    from memlite.config import load_settings
    from memlite.errors import WorkerError
    from memlite.http.credentials import load_or_create_token
    from memlite.spawn import start_worker
    from memlite.workerapi import call

    data_dir = load_settings().data_dir
    info = start_worker(data_dir, timeout=args.timeout).info
    assert info is not None  # start_worker waits for readiness
    token = load_or_create_token(data_dir)
    status, answer = call(info.port, token, "POST", "/api/auth/login-link", timeout=5)
    if status == 401:
        raise WorkerError("the worker does not accept this install's token; run "
                          "`memlite worker restart` and try again")
    url = answer.get("url") if status == 200 and isinstance(answer, dict) else None
    if not isinstance(url, str):
        raise WorkerError(f"the worker did not give a login link (HTTP {status}: "
                          f"{str(answer)[:200]})")
    if args.json:
        print(json.dumps({"url": url, "port": info.port, "pid": info.pid}))
    else:
        print(f"Open this link in your browser within 5 minutes (it works once):\n{url}")
    return 0


def _cmd_context(args: argparse.Namespace) -> int:
    """Print the SessionStart block of a project, read straight from the database.

    It opens its own query-only connection (WAL lets it read beside a running worker), so
    it needs no worker and shows exactly what ``GET /api/context`` would answer.
    """
    import os

    from memlite.config import load_settings
    from memlite.context import ContextBlock, build_context_for, project_root
    from memlite.storage import connect, db_path

    settings = load_settings()
    project = os.path.abspath(args.project or os.getcwd())
    root = project_root(project)
    if not db_path(settings.data_dir).exists():
        block = ContextBlock(project=root, text="", budget=settings.context_max_chars,
                             reason=f"no memory database in {settings.data_dir} yet")
    else:
        conn = connect(settings.data_dir, writer=False)
        try:
            block = build_context_for(conn, project, settings)
        finally:
            conn.close()
    if args.json:
        print(json.dumps(block.to_json(), indent=2))
    elif block.text:
        print(block.text)
    else:
        print(f"memlite: empty context: {block.reason}", file=sys.stderr)
    return 0


def _cmd_reindex(args: argparse.Namespace) -> int:
    from memlite.config import load_settings
    from memlite.reindex import reindex

    final = reindex(load_settings().data_dir, timeout=args.timeout)
    if args.json:
        print(json.dumps(final))
    return 0


def _add_context_command(sub: argparse._SubParsersAction) -> None:
    context = sub.add_parser("context", help="print the context block a new session of a "
                                             "project would receive")
    context.add_argument("--project", default=None,
                         help="any folder of the project (default: the current directory)")
    context.add_argument("--json", action="store_true",
                         help="print the whole record (layers, omitted, reason) as JSON")
    context.set_defaults(func=_cmd_context)


def _cmd_install(args: argparse.Namespace) -> int:
    from memlite.installer import install, uninstall

    action = install if args.command == "install" else uninstall
    for output in action(claude=args.claude, scope=args.scope):
        if output:
            print(output)
    if args.command == "uninstall":
        print("memlite plugin removed; the memory in the data directory is kept")
    return 0


def _cmd_mcp(args: argparse.Namespace) -> int:
    import os

    impl = args.impl or os.environ.get("MEMLITE_MCP_IMPL", "").strip() or "lean"
    if impl == "mcpserver":
        from memlite.mcp.mcpserver import main as serve_mcpserver

        return serve_mcpserver()
    from memlite.mcp.server import main as serve_lean

    return serve_lean()


def _add_mcp_command(sub: argparse._SubParsersAction) -> None:
    mcp = sub.add_parser("mcp", help="serve memlite's memory tools over MCP on stdio "
                                     "(what Claude Code starts)")
    mcp.add_argument("--impl", choices=("lean", "mcpserver"), default=None,
                     help="lean: the standard-library server (default, starts in ~30 ms); "
                          "mcpserver: mcp 2.x's MCPServer (0.5-1.3 s to import)")
    mcp.set_defaults(func=_cmd_mcp)


def _add_plugin_commands(sub: argparse._SubParsersAction) -> None:
    for name, text in (("install", "register the memlite plugin with Claude Code"),
                       ("uninstall", "remove the plugin from Claude Code (keeps the memory)")):
        command = sub.add_parser(name, help=text)
        command.add_argument("--claude", default=None,
                             help="the Claude Code CLI (default: claude on PATH, else the "
                                  "one bundled with claude-agent-sdk)")
        command.add_argument("--scope", default="user", choices=("user", "project", "local"),
                             help="settings scope (default user)")
        command.set_defaults(func=_cmd_install)


def _cmd_doctor(args: argparse.Namespace) -> int:
    from memlite.doctor import run_doctor

    return run_doctor(deadline=args.deadline)


def _cmd_export(args: argparse.Namespace) -> int:
    """Write the memory (or one project's) as JSONL to stdout or ``--output``."""
    from memlite.config import load_settings
    from memlite.errors import InputError
    from memlite.storage import connect, db_path
    from memlite.transfer import PLURAL, export

    data_dir = load_settings().data_dir
    if not db_path(data_dir).exists():
        raise InputError(f"no memory database in {data_dir} yet: nothing to export")
    conn = connect(data_dir, writer=False)  # a reader: fine beside a running worker
    try:
        if args.output is None:
            counts = export(conn, sys.stdout, project=args.project)
        else:
            import os

            def private(path: str, flags: int) -> int:  # a new export file is 0600: it
                return os.open(path, flags, 0o600)  # holds the memory, like the database

            try:
                with open(args.output, "w", encoding="utf-8", opener=private) as out:
                    counts = export(conn, out, project=args.project)
            except OSError as exc:
                raise InputError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    finally:
        conn.close()
    print("exported " + ", ".join(f"{n} {PLURAL[kind]}" for kind, n in counts.items()),
          file=sys.stderr)
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    """Read an export back (idempotent); exit 1 when some lines were bad."""
    import os

    from memlite.config import load_settings
    from memlite.errors import InputError
    from memlite.transfer import import_path

    projects: dict[str, str] = {}
    for item in args.project:
        name, sep, path = item.partition("=")
        if not sep or not name.strip() or not os.path.isabs(os.path.expanduser(path)):
            raise InputError(f"--project {item!r}: give NAME=PATH with an absolute PATH "
                             "(NAME is claude-mem's project name, PATH the project's folder)")
        projects[name.strip()] = os.path.expanduser(path)
    report = import_path(load_settings().data_dir, args.file, projects=projects)
    if args.json:
        print(json.dumps(report.to_json()))
    else:
        print("\n".join(report.lines()))
    return 1 if report.bad else 0


def _add_transfer_commands(sub: argparse._SubParsersAction) -> None:
    export = sub.add_parser("export", help="write the memory as JSONL (sessions, prompts, "
                                           "observations, summaries)")
    export.add_argument("--project", default=None,
                        help="only this project (its stored path, the git top level)")
    export.add_argument("--output", type=Path, default=None,
                        help="file to write (default: stdout)")
    export.set_defaults(func=_cmd_export)
    imp = sub.add_parser("import", help="read a `memlite export` file, or a claude-mem "
                                        "database, into memory (idempotent; stop the "
                                        "worker first)")
    imp.add_argument("file", type=Path, help="the JSONL export, or claude-mem.db")
    imp.add_argument("--json", action="store_true", help="print the counts as JSON")
    imp.add_argument("--project", action="append", default=[], metavar="NAME=PATH",
                     help="claude-mem only: the folder of claude-mem's project NAME (when "
                          "its rows name no path and no repository of that name is known; "
                          "repeat for several)")
    imp.set_defaults(func=_cmd_import)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memlite", description="Memory for Claude Code.")
    parser.add_argument("--version", action="version", version=f"memlite {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = sub.add_parser("demo", help="run memlite end to end on a throwaway data directory")
    demo.add_argument("--keep", action="store_true",
                      help="leave the worker running and keep the throwaway directory")
    demo.set_defaults(func=_cmd_demo)

    settings = sub.add_parser("settings",
                              help="show every setting, its value and where it came from")
    settings.add_argument("--json", action="store_true", help="print JSON")
    settings.set_defaults(func=_cmd_settings)

    _add_worker_commands(sub)
    _add_plugin_commands(sub)
    _add_context_command(sub)
    add_search_command(sub)
    _add_mcp_command(sub)
    _add_transfer_commands(sub)
    add_spool_command(sub)

    doctor = sub.add_parser("doctor", help="check memlite end to end: worker, observer, "
                                           "an event in and an observation out")
    doctor.add_argument("--deadline", type=seconds, default=20.0,
                        help="seconds the canary event may take to be observed (default 20)")
    doctor.set_defaults(func=_cmd_doctor)

    reindex = sub.add_parser("reindex", help="embed every observation again with the current "
                                             "model (EMBEDDER), showing progress")
    reindex.add_argument("--timeout", type=seconds, default=20.0,
                         help="seconds to wait for the worker to start (default 20)")
    reindex.add_argument("--json", action="store_true",
                         help="print the embedder's final status as JSON on stdout")
    reindex.set_defaults(func=_cmd_reindex)

    dashboard = sub.add_parser("dashboard", help="print a one-time login link to the dashboard")
    dashboard.add_argument("--timeout", type=seconds, default=20.0,
                           help="seconds to wait for the worker (default 20)")
    dashboard.add_argument("--json", action="store_true", help="print JSON")
    dashboard.set_defaults(func=_cmd_dashboard)
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
