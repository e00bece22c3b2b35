"""Older revisions of memlite's storage modules, loaded from git for a side-by-side run
(``bench_search_index.py``): a module's source as of a commit, executed into a fresh
module object; nothing is installed or checked out. None where git cannot show it (no
git, a shallow clone, a commit not in this repository).
"""

from __future__ import annotations

import subprocess
import types
from pathlib import Path

__all__ = ["search_as_of", "storage_module"]

ROOT = Path(__file__).resolve().parent.parent


def storage_module(name: str, commit: str) -> types.ModuleType | None:
    """``memlite.storage.<name>`` as of ``commit``, or None without git."""
    try:
        source = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{commit}:memlite/storage/{name}.py"],
            capture_output=True, text=True, check=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    module = types.ModuleType(f"{name}_{commit}")
    exec(compile(source, f"{commit}:{name}.py", "exec"), module.__dict__)  # noqa: S102
    return module


def search_as_of(commit: str) -> types.ModuleType | None:
    """``memlite.storage.search`` as of ``commit`` with that commit's full-text list
    (``fts_lists``, with that commit's ``fts_split`` and filter check when git has them),
    KNN job (``vector_job``) and steps after fusion (``search_after``, ``followup``), or
    None without git. Its other imports are today's modules, unchanged since
    (``vector_index.passing`` keeps the SQL conditions path that commit called)."""
    search_then = storage_module("search", commit)
    fts_then = storage_module("fts_lists", commit)
    job_then = storage_module("vector_job", commit)
    after_then = storage_module("search_after", commit)
    followup_then = storage_module("followup", commit)
    if None in (search_then, fts_then, job_then, after_then, followup_then):
        return None
    assert search_then and fts_then and job_then and after_then and followup_then
    split_then = storage_module("fts_split", commit)
    filters_then = storage_module("filters", commit)
    if split_then is not None and filters_then is not None:  # its full-text list whole
        fts_then.fts_split = split_then
        fts_then.passing = filters_then.passing
    search_then.fts_list = fts_then.fts_list
    search_then.vector_job = job_then
    for name in ("current_in_place", "superseded_last", "that_day_first"):
        setattr(search_then, name, getattr(after_then, name))
    search_then.with_next_in_session = followup_then.with_next_in_session
    return search_then
