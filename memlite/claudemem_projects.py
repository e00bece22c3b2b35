"""Mapping claude-mem's folder-name projects to memlite's project paths.

claude-mem calls a project by the basename of its git top level (``shop``; a worktree is
``parent/child``), memlite by the top level's path (``/Users/a/code/shop``): SessionStart
and project-filtered search match that path. An import that kept the folder names would
store memory no session ever sees. So each name gets a path, from the first of:

1. ``given``: the user's ``memlite import --project NAME=PATH``;
2. the name itself when it is an absolute path (older claude-mem versions stored the cwd);
3. the paths the rows of that project carry: any ``cwd`` column, and the absolute paths
   in ``files_read`` / ``files_modified`` / ``files_edited``, each cut after its last
   component equal to the folder name; the most frequent wins (a tie is ambiguous);
4. ``known``: paths of repositories the user has worked in (memlite's own sessions,
   Claude Code's transcripts); a single one whose git top level has that folder name
   (for a worktree's ``parent/child``, the main checkout called ``parent``: memlite
   files every worktree of a repository under its main checkout, ``memlite.project``).

A path found in 3 or 4 that exists on this machine is resolved to its git top level
(``memlite.project.resolve_project``), as memlite names projects when it captures them;
one that does not exist is kept as it is (the repository may be cloned later at the same
place). A name with no candidate, or several equally likely, stays unmapped: its rows are
skipped and reported, never stored under a name that nothing would ever find.
"""

from __future__ import annotations

import json
import os
import shlex
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from memlite.project import resolve_project

__all__ = ["ProjectMap", "claude_code_cwds", "known_repositories", "map_projects"]

_PATH_COLUMNS = ("files_read", "files_modified", "files_edited", "files_touched")
_TRANSCRIPT_LINES = 20  # lines read per transcript looking for its cwd
_TRANSCRIPTS_PER_PROJECT = 3


@attrs.define
class ProjectMap:
    """Per claude-mem project name: its path and how it was found, or why not.

    ``mapped``: name -> (path, how); ``unmapped``: name -> rows left out;
    ``ambiguous``: name -> the candidate paths (its rows are in ``unmapped`` too).
    """

    mapped: dict[str, tuple[str, str]] = attrs.field(factory=dict)
    unmapped: dict[str, int] = attrs.field(factory=dict)
    ambiguous: dict[str, list[str]] = attrs.field(factory=dict)
    source: str = "FILE"  # the database, as the command to map a name names it

    @staticmethod
    def name_of(row: Mapping[str, Any]) -> str | None:
        """The claude-mem project name of a row (a merge into another project wins)."""
        for column in ("merged_into_project", "project"):
            value = row.get(column)
            if isinstance(value, str) and value.strip():
                return value.strip()
        return None

    def path_of(self, name: str) -> str | None:
        """The mapped path of ``name``; None (and the row counted) when unmapped."""
        if name in self.mapped:
            return self.mapped[name][0]
        self.unmapped[name] = self.unmapped.get(name, 0) + 1
        return None

    def to_json(self) -> dict[str, Any]:
        return {"mapped": {n: {"path": p, "how": h} for n, (p, h) in self.mapped.items()},
                "unmapped": dict(self.unmapped), "ambiguous": dict(self.ambiguous)}

    def lines(self) -> list[str]:
        """A person's report: each mapping, then what was left out and how to map it."""
        shown = [f"project {name!r} -> {path} ({how})"
                 for name, (path, how) in sorted(self.mapped.items())]
        for name, rows in sorted(self.unmapped.items()):
            why = (f"several repositories are called {name!r}: "
                   + ", ".join(self.ambiguous[name]) if name in self.ambiguous
                   else "no path in its rows and no repository of that name found")
            shown.append(f"project {name!r} NOT imported ({rows} rows): {why}; map it with "
                         f"`memlite import {shlex.quote(self.source)} --project "
                         f"{shlex.quote(name + '=/path/to/' + name.split('/')[-1])}`")
        return shown


def _leaf(name: str) -> str:
    return name.rstrip("/").rsplit("/", 1)[-1]


def _root(path: str) -> str:
    info = resolve_project(path)
    return info.root if info is not None else path


def _paths(value: Any) -> Iterator[str]:
    if isinstance(value, str) and value.startswith("["):
        try:
            value = json.loads(value)
        except ValueError:
            return
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list):
        yield from (v for v in value if isinstance(v, str) and os.path.isabs(v))


def _cut_at(path: str, leaf: str) -> str | None:
    """``/a/shop/src/x.py`` and ``shop`` -> ``/a/shop``: up to the last component named so."""
    parts = Path(path).parts
    for index in range(len(parts) - 1, 0, -1):
        if parts[index] == leaf:
            return str(Path(*parts[: index + 1]))
    return None


def _from_rows(rows: Iterable[Mapping[str, Any]], name: str) -> Counter[str]:
    leaf = _leaf(name)
    found: Counter[str] = Counter()
    for row in rows:
        cwd = row.get("cwd")
        if isinstance(cwd, str) and os.path.isabs(cwd):
            root = _cut_at(cwd, leaf) or _root(cwd)
            if _leaf(root) == leaf:
                found[root] += 1
        for column in _PATH_COLUMNS:
            for path in _paths(row.get(column)):
                cut = _cut_at(path, leaf)
                if cut is not None:
                    found[cut] += 1
    return found


def map_projects(data: Mapping[str, list[dict[str, Any]]], *, given: Mapping[str, str],
                 known: Iterable[str]) -> ProjectMap:
    """Map every project name of ``data`` (claude-mem's rows by table); see the module."""
    by_name: dict[str, list[dict[str, Any]]] = {}
    for rows in data.values():
        for row in rows:
            name = ProjectMap.name_of(row)
            if name is not None:
                by_name.setdefault(name, []).append(row)
    known_roots: dict[str, set[str]] = {}
    for path in known:
        if os.path.isabs(path):
            root = _root(path)
            known_roots.setdefault(_leaf(root), set()).add(root)
    result = ProjectMap()
    for name, rows in sorted(by_name.items()):
        if name in given:
            result.mapped[name] = (_root(os.path.abspath(os.path.expanduser(given[name]))),
                                   "given with --project")
            continue
        if os.path.isabs(name):
            result.mapped[name] = (_root(name), "the name is a path")
            continue
        counted = _from_rows(rows, name).most_common()
        if counted and (len(counted) == 1 or counted[0][1] > counted[1][1]):
            path = counted[0][0]
            result.mapped[name] = (_root(path) if os.path.isdir(path) else path,
                                   "from paths in its rows")
            continue
        # A worktree is "parent/child" in claude-mem and its main checkout in memlite.
        candidates = sorted(known_roots.get(name.split("/", 1)[0] if "/" in name
                                            else name, ()))
        if len(candidates) == 1:
            result.mapped[name] = (candidates[0], "a repository you worked in")
            continue
        if len(candidates) > 1 or len(counted) > 1:
            result.ambiguous[name] = candidates or [path for path, _ in counted]
    return result


def claude_code_cwds(config_dir: Path | None = None) -> list[str]:
    """The working directories of Claude Code's transcripts (``~/.claude/projects``).

    Each project folder's name encodes a path lossily (``/`` and ``.`` both become
    ``-``), so the path is read from the ``cwd`` field of its transcripts' first lines.
    ``CLAUDE_CONFIG_DIR`` replaces ``~/.claude`` as Claude Code documents.
    """
    base = config_dir or Path(os.environ.get("CLAUDE_CONFIG_DIR")
                              or Path.home() / ".claude")
    found: set[str] = set()
    try:
        folders = sorted((base / "projects").iterdir())
    except OSError:
        return []
    for folder in folders:
        try:
            transcripts = sorted(folder.glob("*.jsonl"))[:_TRANSCRIPTS_PER_PROJECT]
        except OSError:
            continue
        for transcript in transcripts:
            cwd = _cwd_of(transcript)
            if cwd:
                found.add(cwd)
                break
    return sorted(found)


def _cwd_of(transcript: Path) -> str | None:
    try:
        with open(transcript, encoding="utf-8", errors="replace") as f:
            for _, line in zip(range(_TRANSCRIPT_LINES), f, strict=False):
                try:
                    row = json.loads(line)
                except ValueError:
                    continue
                cwd = row.get("cwd") if isinstance(row, dict) else None
                if isinstance(cwd, str) and os.path.isabs(cwd):
                    return cwd
    except OSError:
        return None
    return None


def known_repositories(conn: Any) -> list[str]:
    """Project paths memlite already knows (its sessions), plus Claude Code's cwds."""
    rows = conn.execute("SELECT DISTINCT project FROM sessions WHERE project IS NOT NULL")
    return sorted({str(p) for (p,) in rows} | set(claude_code_cwds()))
