"""``memlite search QUERY``: search the memory from the shell.

Where the answer comes from (a choice, written down): the running worker when there is
one (``GET /api/search/index``: the same engine, the loaded embedding model, so hybrid and
semantic searches work); when the worker is down (or does not answer), the database
itself, read through a query-only connection, by full text (no model is loaded in the
command: that takes seconds and ~100 MB), with a note saying so. The command never
starts a worker, so it leaves no process behind, and never writes, so it can lose
nothing; ``memlite worker start`` first gives the full hybrid search.

Output: one line per observation, best first: ``#id  date  type  title  (project)``;
``--json`` prints the API's JSON answer (``/api/search/index``) as it is, the direct read
included. Superseded observations are left out, as in every search by default.

Bad input (an empty query, a query of invalid UTF-8 or over ``MAX_QUERY_CHARS``, a limit
outside 1..``MAX_LIMIT``, an unknown mode) is refused with one line on stderr and exit
status 2 before anything is read.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.parse
from pathlib import Path
from typing import Any

from memlite.errors import InputError

__all__ = ["MAX_LIMIT", "MAX_QUERY_CHARS", "add_search_command"]

MAX_QUERY_CHARS = 1000
"""As the HTTP API and the MCP tool take."""
MAX_LIMIT = 100
"""As the HTTP API takes."""
MODES = ("hybrid", "fts", "semantic")
_DOWN = ("the worker is not running: full-text search only (`memlite worker start` for "
         "hybrid and semantic search)")


def limit(text: str) -> int:
    """An argparse type: a whole number of results from 1 to ``MAX_LIMIT``."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= MAX_LIMIT:
        raise argparse.ArgumentTypeError(f"{text}: give a number of results from 1 to "
                                         f"{MAX_LIMIT}")
    return value


def _query(words: list[str]) -> str:
    query = " ".join(words).strip()
    if not query:
        raise InputError("the query is empty: give words to search for, e.g. "
                         "`memlite search http client`")
    try:
        query.encode("utf-8")
    except UnicodeEncodeError:  # argv bytes that were not UTF-8 (kept as surrogates)
        raise InputError("the query is not valid UTF-8 text") from None
    if len(query) > MAX_QUERY_CHARS:
        raise InputError(f"the query is {len(query)} characters long; the most is "
                         f"{MAX_QUERY_CHARS}")
    return query


def _project(given: str | None) -> str | None:
    if given is None:
        return None
    from memlite.context import project_root

    try:
        return project_root(os.path.abspath(given))
    except ValueError as exc:
        raise InputError(f"--project: {exc}") from None


def _from_worker(data_dir: Path, params: dict[str, Any]) -> dict[str, Any] | None:
    """The worker's answer, or None when no worker runs or it does not answer."""
    from memlite.errors import WorkerError
    from memlite.http.credentials import load_or_create_token
    from memlite.lifecycle import find_worker
    from memlite.workerapi import call

    info = find_worker(data_dir)
    if info is None:
        return None
    query = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
    try:
        status, answer = call(info.port, load_or_create_token(data_dir), "GET",
                              f"/api/search/index?{query}", timeout=15)
    except WorkerError:
        return None
    if status == 400 and isinstance(answer, dict):
        raise InputError(str(answer.get("error") or answer))
    if status != 200 or not isinstance(answer, dict):
        raise WorkerError(f"the worker could not search (HTTP {status}: {str(answer)[:200]})")
    return answer


def _from_database(data_dir: Path, params: dict[str, Any]) -> dict[str, Any]:
    """A full-text search straight from the database (query-only), shaped like the API."""
    from memlite.http import queries
    from memlite.storage import connect, db_path
    from memlite.storage.filters import Filters

    if not db_path(data_dir).exists():
        return {"query": params["q"], "mode": params["mode"], "mode_used": None,
                "note": f"no memory database in {data_dir} yet", "count": 0, "results": []}
    conn = connect(data_dir, writer=False)
    try:
        found = queries.index(conn, params["q"], mode=params["mode"],
                              filters=Filters(project=params["project"]),
                              limit=params["limit"], vector=None, no_vector_reason=_DOWN)
    finally:
        conn.close()
    return {"query": params["q"], **found}


def _line(result: dict[str, Any]) -> str:
    date = str(result.get("date") or "")[:10]
    project = os.path.basename(str(result.get("project") or "").rstrip("/")) or "-"
    title = " ".join(str(result.get("title") or "").split())
    return f"#{result.get('id')}  {date}  {result.get('type')}  {title}  ({project})"


def _cmd_search(args: argparse.Namespace) -> int:
    from memlite.config import load_settings

    params = {"q": _query(args.query), "mode": args.mode, "limit": args.limit,
              "project": _project(args.project)}
    data_dir = load_settings().data_dir
    answer = _from_worker(data_dir, params)
    if answer is None:
        answer = _from_database(data_dir, params)
    if args.json:
        print(json.dumps(answer, ensure_ascii=False))
        return 0
    results = answer.get("results") or []
    for result in results:
        print(_line(result))
    if answer.get("note"):
        print(f"memlite: {answer['note']}", file=sys.stderr)
    if not results:
        print("memlite: no observation matches", file=sys.stderr)
    return 0


def add_search_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    search = sub.add_parser(
        "search", help="search the memory (the running worker's hybrid search; full text "
                       "from the database when the worker is down)")
    search.add_argument("query", nargs="*", help="words to search for")
    search.add_argument("--project", default=None,
                        help="any folder of one project (default: every project)")
    search.add_argument("--limit", type=limit, default=10,
                        help=f"results to show, 1 to {MAX_LIMIT} (default 10)")
    search.add_argument("--mode", choices=MODES, default="hybrid",
                        help="hybrid (default), fts (full text) or semantic (vectors)")
    search.add_argument("--json", action="store_true", help="print the API's JSON answer")
    search.set_defaults(func=_cmd_search)
