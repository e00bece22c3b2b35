"""A project folder as memlite recognises one: a git work tree (``.git/HEAD`` on main).

Shared by the tests that need a project root; memlite's project key comes from the
folder holding ``.git`` (:mod:`memlite.project`).
"""

from __future__ import annotations

from pathlib import Path


def git_project(root: Path, *, src: bool = False) -> str:
    """Make ``root`` a git work tree on main (with an empty ``src/`` if asked); its path."""
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    if src:
        (root / "src").mkdir()
    return str(root)
