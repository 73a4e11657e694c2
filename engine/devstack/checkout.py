"""Which checkout a project lives in: the worktree key, the primary checkout, branch, dirty flag.

`env devstack key` (docs/reference-devstack.md#commands): the primary checkout's key is the empty string; a linked git
worktree's key is its name in git (`.git/worktrees/<name>`), unique per repository. Read from
the `.git` files directly so `env devstack key` costs no git process.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from pydantic import BaseModel

from engine.project import Project


class Checkout(BaseModel):
    root: str           # the project's directory in this checkout
    key: str            # "" on the primary checkout (and outside git)
    primary_root: str   # the project's directory in the primary checkout: holds .framework/blocks.json
    worktree: str | None = None  # top directory of this git checkout
    branch: str = ""


def _gitdir_of(top: Path) -> Path | None:
    """The git dir a `.git` file points to (`gitdir: <path>`), for linked worktrees."""
    try:
        text = (top / ".git").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    return (top / text.split(":", 1)[1].strip()).resolve()


def _branch(gitdir: Path) -> str:
    try:
        head = (gitdir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return ""
    return head.removeprefix("ref: refs/heads/") if head.startswith("ref: ") else ""


def detect(root: Path) -> Checkout:
    root = root.resolve()
    for top in (root, *root.parents):
        dot = top / ".git"
        if dot.is_dir():
            return Checkout(root=str(root), key="", primary_root=str(root), worktree=str(top), branch=_branch(dot))
        if dot.is_file():
            gitdir = _gitdir_of(top)
            if gitdir is None:
                break
            try:
                common = (gitdir / (gitdir / "commondir").read_text(encoding="utf-8").strip()).resolve()
            except OSError:
                common = gitdir.parent.parent
            primary_top = common.parent
            primary = primary_top / root.relative_to(top)
            return Checkout(root=str(root), key=gitdir.name, primary_root=str(primary), worktree=str(top),
                            branch=_branch(gitdir))
    return Checkout(root=str(root), key="", primary_root=str(root))


def is_dirty(root: Path) -> bool:
    """Uncommitted changes under the checkout (the local session's dirty flag); False outside git."""
    try:
        out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0 and bool(out.stdout.strip())


def worktree_exists(origin: str) -> bool:
    """A linked worktree still exists when its directory still holds its `.git` file."""
    top = Path(origin)
    return (top / ".git").exists()


def refresh_session(project: Project, checkout: Checkout, env: str) -> None:
    """The local session presence row (one per worktree per machine)."""
    from engine.ledger.store import Ledger

    with Ledger.open(project.key) as ledger:
        ledger.upsert_session(checkout.key, env, checkout.branch, is_dirty(Path(checkout.root)))
