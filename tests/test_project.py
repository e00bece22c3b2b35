"""Project identity: the git top level of a working directory, found without running git.

The repositories are laid out by hand (the files git itself writes), so the tests pin the
formats we read and need no ``git`` binary.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from memlite.project import ProjectInfo, resolve_project

SHA_MAIN = "a" * 40
SHA_FEATURE = "b" * 40
SHA_PACKED = "c" * 40


def make_repo(root: Path, *, head: str = "ref: refs/heads/main",
              loose: dict[str, str] | None = None, packed: dict[str, str] | None = None) -> Path:
    git = root / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text(head + "\n")
    for ref, sha in (loose if loose is not None else {"refs/heads/main": SHA_MAIN}).items():
        (git / ref).parent.mkdir(parents=True, exist_ok=True)
        (git / ref).write_text(sha + "\n")
    if packed:
        lines = ["# pack-refs with: peeled fully-peeled sorted"]
        lines += [f"{sha} {ref}" for ref, sha in packed.items()]
        (git / "packed-refs").write_text("\n".join(lines) + "\n")
    return root


def test_repository_root(tmp_path):
    repo = make_repo(tmp_path / "api")
    assert resolve_project(repo) == ProjectInfo(root=str(repo), name="api", branch="main",
                                                commit=SHA_MAIN, is_git=True)


def test_a_subfolder_is_the_same_project(tmp_path):
    repo = make_repo(tmp_path / "api")
    deep = repo / "src" / "pkg" / "mod"
    deep.mkdir(parents=True)
    assert resolve_project(deep) == resolve_project(repo)
    assert resolve_project(str(deep) + "/").root == str(repo)


def test_two_checkouts_with_one_name_are_two_projects(tmp_path):
    first = make_repo(tmp_path / "one" / "api")
    second = make_repo(tmp_path / "two" / "api")
    a, b = resolve_project(first), resolve_project(second)
    assert (a.name, b.name) == ("api", "api")
    assert a.root != b.root


def test_a_worktree_is_its_main_checkout_with_its_own_branch(tmp_path):
    main = make_repo(tmp_path / "api", loose={"refs/heads/main": SHA_MAIN,
                                              "refs/heads/feature": SHA_FEATURE})
    admin = main / ".git" / "worktrees" / "feature"
    admin.mkdir(parents=True)
    (admin / "HEAD").write_text("ref: refs/heads/feature\n")
    (admin / "commondir").write_text("../..\n")
    tree = tmp_path / "elsewhere" / "api-feature"
    (tree / "sub").mkdir(parents=True)
    (tree / ".git").write_text(f"gitdir: {admin}\n")
    found = resolve_project(tree / "sub")
    assert found == ProjectInfo(root=str(main), name="api", branch="feature",
                                commit=SHA_FEATURE, is_git=True)


def test_a_relative_gitdir_is_resolved_from_the_git_file(tmp_path):
    main = make_repo(tmp_path / "api")
    admin = main / ".git" / "worktrees" / "wt"
    admin.mkdir(parents=True)
    (admin / "HEAD").write_text(SHA_FEATURE + "\n")
    (admin / "commondir").write_text("../..\n")
    tree = tmp_path / "wt"
    tree.mkdir()
    (tree / ".git").write_text("gitdir: ../api/.git/worktrees/wt\n")
    found = resolve_project(tree)
    assert (found.root, found.branch, found.commit) == (str(main), None, SHA_FEATURE)


def test_a_submodule_is_its_own_project(tmp_path):
    outer = make_repo(tmp_path / "outer")
    modules = outer / ".git" / "modules" / "lib"
    modules.mkdir(parents=True)
    (modules / "HEAD").write_text(SHA_PACKED + "\n")
    sub = outer / "vendor" / "lib"
    sub.mkdir(parents=True)
    (sub / ".git").write_text("gitdir: ../../.git/modules/lib\n")
    found = resolve_project(sub)
    assert (found.root, found.name, found.commit) == (str(sub), "lib", SHA_PACKED)


def test_detached_head_has_a_commit_and_no_branch(tmp_path):
    repo = make_repo(tmp_path / "api", head=SHA_FEATURE)
    found = resolve_project(repo)
    assert (found.branch, found.commit) == (None, SHA_FEATURE)


def test_packed_refs(tmp_path):
    repo = make_repo(tmp_path / "api", loose={}, packed={"refs/heads/main": SHA_PACKED,
                                                         "refs/heads/other": SHA_MAIN})
    assert resolve_project(repo).commit == SHA_PACKED


def test_a_repository_without_commits(tmp_path):
    repo = make_repo(tmp_path / "new", loose={})
    found = resolve_project(repo)
    assert (found.root, found.branch, found.commit, found.is_git) == (str(repo), "main", None,
                                                                      True)


def test_outside_git_the_folder_is_the_project(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    assert resolve_project(folder) == ProjectInfo(root=str(folder), name="notes")


def test_a_deleted_folder_still_has_an_identity(tmp_path):
    gone = tmp_path / "gone" / "away"
    assert resolve_project(gone) == ProjectInfo(root=str(gone), name="away")


def test_symlinks_are_resolved(tmp_path):
    repo = make_repo(tmp_path / "api")
    link = tmp_path / "link"
    link.symlink_to(repo)
    assert resolve_project(link).root == str(repo)


@pytest.mark.parametrize("cwd", [None, "", "   ", "relative/path"])
def test_no_usable_cwd(cwd):
    assert resolve_project(cwd) is None


def test_garbage_git_files_give_what_can_be_known(tmp_path):
    repo = tmp_path / "odd"
    repo.mkdir()
    (repo / ".git").write_text("this is not a gitdir line\n")
    assert resolve_project(repo) == ProjectInfo(root=str(repo), name="odd")
    repo2 = make_repo(tmp_path / "odd2", head="ref: refs/heads/main", loose={})
    (repo2 / ".git" / "refs" / "heads" / "main").write_text("not a sha\n")
    assert resolve_project(repo2).commit is None


@pytest.mark.skipif(not any(os.access(os.path.join(p, "git"), os.X_OK)
                            for p in os.environ.get("PATH", "").split(os.pathsep)),
                    reason="no git binary")
def test_agrees_with_real_git(tmp_path):
    """Cross-check with the git binary on a real repository and worktree."""
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_SYSTEM": os.devnull}

    def git(*args: str, cwd: Path) -> str:
        return subprocess.run(["git", *args], cwd=cwd, env=env, check=True,
                              capture_output=True, text=True).stdout.strip()

    repo = tmp_path / "real"
    repo.mkdir()
    git("init", "-q", "-b", "trunk", cwd=repo)
    (repo / "f").write_text("x")
    git("add", "f", cwd=repo)
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "m", cwd=repo)
    git("worktree", "add", "-q", "-b", "topic", str(tmp_path / "wt"), cwd=repo)
    head = git("rev-parse", "HEAD", cwd=repo)
    assert resolve_project(repo) == ProjectInfo(root=str(repo), name="real", branch="trunk",
                                                commit=head, is_git=True)
    found = resolve_project(tmp_path / "wt")
    assert (found.root, found.branch, found.commit) == (str(repo), "topic", head)

