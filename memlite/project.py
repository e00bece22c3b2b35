"""Project identity: which git repository a working directory belongs to, without git.

memlite groups memory by project, and a project is the git top-level directory, not the
folder's base name: two checkouts both called ``api`` are different projects, and a
subfolder of a repository is the same project as its root (DESIGN §4). The name is kept
for display only.

Everything here reads a few small files and never spawns ``git`` (a hook has ~30 ms, the
worker has better things to do than fork). How the top level is found:

* Walk up from ``cwd`` to the first directory holding ``.git``.
* ``.git`` is a directory: that directory's parent is the top level.
* ``.git`` is a file (a linked worktree, or a submodule): it reads ``gitdir: <path>``. If
  that git directory has a ``commondir`` file (worktrees have one), the identity is the
  *main* checkout, the parent of the common ``.git``, so every worktree of a repository
  is one project; the branch and commit still come from the worktree's own ``HEAD``.
  Without ``commondir`` (a submodule) the directory holding the ``.git`` file is the
  top level.
* No ``.git`` up to the filesystem root: the project is the resolved ``cwd`` itself.

Branch and commit come from ``HEAD`` (``ref: refs/heads/<branch>``, or a bare sha when
detached), then the loose ref file, then ``packed-refs``. Anything unreadable is None:
identity never fails, it just knows less.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import attrs

__all__ = ["ProjectInfo", "resolve_project"]

_SHA = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})?$")
_MAX_SMALL_FILE = 64 * 1024


@attrs.frozen(kw_only=True)
class ProjectInfo:
    """Where a session's working directory belongs.

    Attributes:
        root: the identity: the git top-level directory (the main checkout for a
            worktree), or the working directory itself outside git. Absolute.
        name: the root's base name, for display.
        branch: the checked-out branch, None when detached or unknown.
        commit: the HEAD commit's sha, None when unknown (e.g. a repository with no
            commits yet).
        is_git: whether a ``.git`` was found.
    """

    root: str
    name: str
    branch: str | None = None
    commit: str | None = None
    is_git: bool = False


def _read_small(path: Path) -> str | None:
    try:
        with open(path, "rb") as f:
            data = f.read(_MAX_SMALL_FILE)
    except OSError:
        return None
    return data.decode("utf-8", "replace").strip()


def _find_dot_git(start: Path) -> Path | None:
    for directory in (start, *start.parents):
        candidate = directory / ".git"
        if candidate.is_dir() or candidate.is_file():
            return candidate
    return None


def _git_dirs(dot_git: Path) -> tuple[Path, Path, Path] | None:
    """``(top_level, git_dir, common_dir)`` for a ``.git`` directory or file."""
    if dot_git.is_dir():
        return dot_git.parent, dot_git, dot_git
    text = _read_small(dot_git)
    if not text or not text.startswith("gitdir:"):
        return None
    git_dir = Path(text[len("gitdir:"):].strip())
    if not git_dir.is_absolute():
        git_dir = dot_git.parent / git_dir
    git_dir = Path(os.path.normpath(git_dir))
    common = _read_small(git_dir / "commondir")
    if common is None:  # a submodule: its own repository, rooted where the .git file is
        return dot_git.parent, git_dir, git_dir
    common_dir = Path(os.path.normpath(git_dir / common))
    # The main checkout is the parent of a non-bare common dir named ".git".
    top = common_dir.parent if common_dir.name == ".git" else dot_git.parent
    return top, git_dir, common_dir


def _packed_ref(common_dir: Path, ref: str) -> str | None:
    text = _read_small(common_dir / "packed-refs")
    for line in (text or "").splitlines():
        sha, _, name = line.partition(" ")
        if name.strip() == ref and _SHA.match(sha):
            return sha
    return None


def _head(git_dir: Path, common_dir: Path) -> tuple[str | None, str | None]:
    """``(branch, commit)`` from ``HEAD``."""
    head = _read_small(git_dir / "HEAD")
    if not head:
        return None, None
    if _SHA.match(head):
        return None, head  # detached
    if not head.startswith("ref:"):
        return None, None
    ref = head[len("ref:"):].strip()
    branch = ref.removeprefix("refs/heads/") if ref.startswith("refs/heads/") else None
    for base in (git_dir, common_dir):
        sha = _read_small(base / ref)
        if sha and _SHA.match(sha):
            return branch, sha
    return branch, _packed_ref(common_dir, ref)


def resolve_project(cwd: str | os.PathLike[str] | None) -> ProjectInfo | None:
    """Find the project that ``cwd`` belongs to; None when ``cwd`` is empty or relative.

    Symlinks are resolved. A directory that does not exist (any more) still gets an
    identity from its path, so a session whose folder was deleted is kept apart.
    """
    if cwd is None or not str(cwd).strip():
        return None
    if not os.path.isabs(cwd):
        return None
    start = Path(os.path.realpath(cwd))  # a symlinked path is the same project
    dot_git = _find_dot_git(start)
    dirs = _git_dirs(dot_git) if dot_git is not None else None
    if dirs is None:
        return ProjectInfo(root=str(start), name=start.name or str(start))
    top, git_dir, common_dir = dirs
    branch, commit = _head(git_dir, common_dir)
    return ProjectInfo(root=str(top), name=top.name or str(top), branch=branch, commit=commit,
                       is_git=True)
