"""Git provenance from the real `git` (docs/reference-deploy.md#files: provenance tree, commit, branch, dirty)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from engine.git import git_output


class Provenance(BaseModel):
    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import (bench/k8s.py)

    tree: str | None = None
    commit: str | None = None
    branch: str | None = None
    dirty: bool = False
    committed_at: float | None = None  # the commit's committer time (docs/reference-metrics.md#lead-time-for-changes)


def is_repo(root: Path) -> bool:
    return git_output(root, "rev-parse", "--is-inside-work-tree") == "true"


def worktree_tree(root: Path) -> str | None:
    """The tree hash of the checkout as it is on disk (tracked and untracked, minus ignored files).

    A throwaway index keeps the user's staging area untouched.
    """
    git_dir = git_output(root, "rev-parse", "--absolute-git-dir")
    if not git_dir:
        return None
    with tempfile.TemporaryDirectory() as tmp:
        index = str(Path(tmp) / "index")
        env = {"GIT_INDEX_FILE": index}
        if git_output(root, "read-tree", "HEAD", env=env) is None:
            git_output(root, "read-tree", "--empty", env=env)
        # .framework/ holds the releases themselves: cutting one must not change the tree it names
        if git_output(root, "add", "-A", "--", ".", ":(exclude).framework", env=env) is None:
            return None
        git_output(root, "rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", ".framework", env=env)
        return git_output(root, "write-tree", env=env)


def provenance(root: Path) -> Provenance:
    if not is_repo(root):
        return Provenance()
    commit = git_output(root, "rev-parse", "--verify", "-q", "HEAD")
    when = git_output(root, "show", "-s", "--format=%ct", "HEAD") if commit else None
    branch = git_output(root, "symbolic-ref", "--short", "-q", "HEAD")
    status = git_output(root, "status", "--porcelain", "--", ".", ":(exclude).framework")
    return Provenance(tree=worktree_tree(root), commit=commit, branch=branch, dirty=bool(status),
                      committed_at=float(when) if when and when.isdigit() else None)


def commits_between(root: Path, old: str | None, new: str | None) -> list[dict[str, str]]:
    """Commits reachable from one release's commit and not the other (either direction), newest first."""
    if not old or not new or old == new:
        return []
    out = git_output(root, "log", "--format=%H%x09%s", f"{old}..{new}") or ""
    if not out:
        out = git_output(root, "log", "--format=%H%x09%s", f"{new}..{old}") or ""
    commits = []
    for line in out.splitlines():
        sha, _, subject = line.partition("\t")
        commits.append({"commit": sha, "subject": subject})
    return commits


def show_file(root: Path, rev: str, path: str) -> str | None:
    return git_output(root, "show", f"{rev}:{path}")


def list_tree(root: Path, rev: str, path: str) -> list[str]:
    out = git_output(root, "ls-tree", "--name-only", f"{rev}:{path}")
    return out.splitlines() if out else []


def rev_exists(root: Path, rev: str) -> bool:
    return git_output(root, "rev-parse", "--verify", "-q", f"{rev}^{{commit}}") is not None
