"""`framework project checkouts` (docs/reference-project.md#project-checkouts): the default branch's remote and
every worktree of this checkout (`git worktree list --porcelain`), with ahead/behind against the default branch
where git can compute it (omitted otherwise); `--tree` hashes the current checkout's content.

Tree hash (`sha256-tree-v1`): the files are `git ls-files --cached --others --exclude-standard` (tracked and
untracked-not-ignored, as they are on disk now, uncommitted edits included; a tracked file deleted on disk is left
out), sorted by their path's UTF-8 bytes; for each, the line `<path>\\0<type>\\0<sha256 of content>\\n` is fed to
one sha256, where type is `f` (file), `x` (executable file) or `l` (symlink, whose target text is the content).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from pydantic import BaseModel

from engine.errors import EngineError
from engine.git import git_output

TREE_ALGORITHM = "sha256-tree-v1"


class NotACheckout(EngineError):
    code = "not_a_checkout"
    exit_code = 1


class DefaultBranch(BaseModel):
    remote: str
    branch: str
    ref: str  # refs/remotes/<remote>/<branch>
    url: str | None = None
    head: str | None = None


class Worktree(BaseModel):
    path: str
    head: str | None = None
    branch: str | None = None  # None when detached
    detached: bool = False
    bare: bool = False
    locked: bool = False
    prunable: bool = False
    current: bool = False
    dirty: bool | None = None  # None when the worktree's directory is missing
    ahead: int | None = None  # omitted from output when not computable (see `dump`)
    behind: int | None = None


class TreeHash(BaseModel):
    algorithm: str = TREE_ALGORITHM
    hash: str
    files: int


class CheckoutsResult(BaseModel):
    root: str
    default: DefaultBranch | None = None
    worktrees: list[Worktree]
    tree: TreeHash | None = None

    def model_dump(self, **kwargs):  # type: ignore[no-untyped-def, override]
        """ahead/behind (and the other unknowns) are left out, not null, when git cannot compute them."""
        kwargs.setdefault("exclude_none", True)
        return super().model_dump(**kwargs)


def _toplevel(cwd: Path) -> Path:
    top = git_output(cwd, "rev-parse", "--show-toplevel")
    if not top:
        raise NotACheckout(f"{cwd} is not in a git checkout", hint="run it inside a git repository or worktree")
    return Path(top)


def default_branch(root: Path) -> DefaultBranch | None:
    """origin's recorded HEAD, else the first remote (sorted) with a recorded HEAD; None when none is recorded."""
    remotes = (git_output(root, "remote") or "").split()
    for remote in sorted(remotes, key=lambda r: (r != "origin", r)):
        ref = git_output(root, "symbolic-ref", "--quiet", f"refs/remotes/{remote}/HEAD")
        if not ref:
            continue
        prefix = f"refs/remotes/{remote}/"
        return DefaultBranch(remote=remote, branch=ref[len(prefix):] if ref.startswith(prefix) else ref, ref=ref,
                             url=git_output(root, "remote", "get-url", remote),
                             head=git_output(root, "rev-parse", "--verify", "--quiet", ref))
    return None


def _parse_porcelain(text: str) -> list[Worktree]:
    out: list[Worktree] = []
    for block in text.split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            key, _, value = line.partition(" ")
            fields[key] = value
        if "worktree" not in fields:
            continue
        branch = fields.get("branch")
        out.append(Worktree(path=fields["worktree"], head=fields.get("HEAD"),
                            branch=branch.removeprefix("refs/heads/") if branch else None,
                            detached="detached" in fields, bare="bare" in fields, locked="locked" in fields,
                            prunable="prunable" in fields))
    return out


def _ahead_behind(root: Path, base: str, head: str) -> tuple[int, int] | None:
    if git_output(root, "merge-base", base, head) is None:
        return None  # no common history: the counts would mean nothing
    counts = git_output(root, "rev-list", "--left-right", "--count", f"{base}...{head}")
    parts = (counts or "").split()
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[1]), int(parts[0])


def checkouts(cwd: Path, *, tree: bool = False) -> CheckoutsResult:
    root = _toplevel(cwd)
    default = default_branch(root)
    listing = git_output(root, "worktree", "list", "--porcelain")
    if listing is None:
        raise NotACheckout(f"git worktree list failed in {root}")
    worktrees = _parse_porcelain(listing)
    here = root.resolve()
    for wt in worktrees:
        path = Path(wt.path)
        wt.current = path.resolve() == here
        if wt.bare or not path.is_dir():
            continue
        status = git_output(path, "status", "--porcelain", "--untracked-files=normal")
        wt.dirty = bool(status) if status is not None else None
        if default and default.head and wt.head:
            counts = _ahead_behind(root, default.head, wt.head)
            if counts:
                wt.ahead, wt.behind = counts
    return CheckoutsResult(root=str(root), default=default, worktrees=worktrees,
                           tree=tree_hash(root) if tree else None)


def _files(root: Path) -> list[str]:
    proc = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                          capture_output=True, timeout=120)
    if proc.returncode != 0:
        raise NotACheckout(f"git ls-files failed in {root}: {proc.stderr.decode(errors='replace').strip()}")
    names = {os.fsdecode(n) for n in proc.stdout.split(b"\0") if n}
    return sorted(names, key=lambda n: n.encode("utf-8", "surrogateescape"))


def tree_hash(root: Path) -> TreeHash:
    total = hashlib.sha256()
    count = 0
    for name in _files(root):
        path = root / name
        if path.is_symlink():
            kind, content = "l", os.fsencode(os.readlink(path))
        elif path.is_file():
            kind = "x" if os.access(path, os.X_OK) else "f"
            content = path.read_bytes()
        else:
            continue  # deleted on disk (still in the index), or a submodule's directory
        digest = hashlib.sha256(content).hexdigest()
        total.update(name.encode("utf-8", "surrogateescape") + b"\0" + kind.encode() + b"\0" + digest.encode() + b"\n")
        count += 1
    return TreeHash(hash=total.hexdigest(), files=count)
