"""`framework project checkouts` (docs/reference-project.md#project-checkouts) on real git repositories in tmp
dirs: a bare remote with a recorded HEAD, a clone and two more worktrees (one ahead and dirty, one behind); ahead and
behind left out when no default branch is recorded; the `--tree` content hash by its documented algorithm."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from tests.authoring_fixtures import fw, fw_text


def git(cwd: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=t", "-c",
                           "init.defaultBranch=main", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def commit(cwd: Path, name: str, text: str) -> None:
    (cwd / name).write_text(text)
    git(cwd, "add", name)
    git(cwd, "commit", "-q", "-m", name)


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """origin.git (bare, HEAD main) <- clone `main` (2 commits) + worktree `feature` (1 ahead, dirty) + worktree
    `old` (at the first commit: 1 behind) + worktree `lonely` (an orphan branch: no common history)."""
    base = tmp_path_factory.mktemp("checkouts")
    seed = base / "seed"
    seed.mkdir()
    git(seed, "init", "-q")
    commit(seed, "a.txt", "one\n")
    first = git(seed, "rev-parse", "HEAD")
    commit(seed, "b.txt", "two\n")
    git(base, "clone", "-q", "--bare", str(seed), "origin.git")
    git(base, "clone", "-q", str(base / "origin.git"), "main")
    main = base / "main"
    git(main, "worktree", "add", "-q", "-b", "feature", str(base / "feature"))
    commit(base / "feature", "c.txt", "three\n")
    (base / "feature" / "a.txt").write_text("edited\n")
    git(main, "worktree", "add", "-q", "-b", "old", str(base / "old"), first)
    git(main, "worktree", "add", "-q", "--detach", str(base / "lonely"))
    git(base / "lonely", "checkout", "-q", "--orphan", "lonely")
    commit(base / "lonely", "z.txt", "unrelated\n")
    return {"base": base, "main": main, "feature": base / "feature", "old": base / "old"}


def test_default_remote_and_every_worktree_with_ahead_behind(repos: dict[str, Path]) -> None:
    """docs/reference-project.md#project-checkouts: origin's recorded HEAD is the default branch; every worktree
    of `git worktree list` with its branch, head, dirty and ahead/behind against origin/main, left out for a
    worktree with no history in common with it (CLI --json)."""
    code, doc, err = fw("project", "checkouts", cwd=repos["feature"])
    assert code == 0 and doc["ok"], err
    assert doc["default"]["remote"] == "origin" and doc["default"]["branch"] == "main"
    assert doc["default"]["ref"] == "refs/remotes/origin/main"
    assert doc["default"]["url"] == str(repos["base"] / "origin.git")
    trees = {Path(w["path"]).name: w for w in doc["worktrees"]}
    assert set(trees) == {"main", "feature", "old", "lonely"}
    assert [n for n, w in trees.items() if w["current"]] == ["feature"]
    assert (trees["main"]["branch"], trees["main"]["ahead"], trees["main"]["behind"], trees["main"]["dirty"]) == (
        "main", 0, 0, False)
    assert (trees["feature"]["ahead"], trees["feature"]["behind"], trees["feature"]["dirty"]) == (1, 0, True)
    assert (trees["old"]["ahead"], trees["old"]["behind"], trees["old"]["dirty"]) == (0, 1, False)
    assert trees["feature"]["head"] == git(repos["feature"], "rev-parse", "HEAD")
    assert "ahead" not in trees["lonely"] and "behind" not in trees["lonely"]  # no common history: not computable
    assert trees["lonely"]["branch"] == "lonely" and trees["lonely"]["dirty"] is False


def test_ahead_behind_are_omitted_when_no_default_branch_is_recorded(tmp_path: Path) -> None:
    """docs/reference-project.md#project-checkouts: with no remote HEAD recorded, `default` and each worktree's
    ahead/behind are left out of the document (not null, not 0); outside a git checkout: exit 1, no traceback."""
    from engine.inspection.checkouts import checkouts

    repo = tmp_path / "solo"
    repo.mkdir()
    git(repo, "init", "-q")
    commit(repo, "a.txt", "one\n")
    doc = checkouts(repo).model_dump(mode="json")
    assert "default" not in doc
    assert len(doc["worktrees"]) == 1
    only = doc["worktrees"][0]
    assert "ahead" not in only and "behind" not in only and only["branch"] == "main" and only["dirty"] is False
    outside = tmp_path / "plain"
    outside.mkdir()
    code, text, err = fw_text("project", "checkouts", cwd=outside)
    assert code == 1 and "not in a git checkout" in err and "Traceback" not in err and text == ""


def _documented_hash(root: Path) -> str:
    """docs/reference-project.md#project-checkouts, the tree hash, written out from the page's words."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                            capture_output=True, check=True).stdout.split(b"\0")
    total = hashlib.sha256()
    for name in sorted(n for n in listed if n):
        path = root / os.fsdecode(name)
        if not path.exists() and not path.is_symlink():
            continue
        if path.is_symlink():
            kind, content = b"l", os.fsencode(os.readlink(path))
        else:
            kind, content = (b"x" if os.access(path, os.X_OK) else b"f"), path.read_bytes()
        total.update(name + b"\0" + kind + b"\0" + hashlib.sha256(content).hexdigest().encode() + b"\n")
    return total.hexdigest()


def test_tree_hash_covers_edits_and_untracked_files_not_ignored_ones(repos: dict[str, Path], tmp_path: Path) -> None:
    """docs/reference-project.md#project-checkouts: `--tree` hashes tracked and untracked-not-ignored files as they
    are on disk by the documented algorithm; an ignored file leaves it unchanged, an edit, a new file, a mode change
    or a deletion changes it; the same content in another clone hashes the same."""
    from engine.inspection.checkouts import tree_hash

    repo = tmp_path / "work"
    git(repos["base"], "clone", "-q", str(repos["base"] / "origin.git"), str(repo))
    twin = tmp_path / "twin"
    git(repos["base"], "clone", "-q", str(repos["base"] / "origin.git"), str(twin))
    start = tree_hash(repo)
    assert start.algorithm == "sha256-tree-v1" and start.files == 2
    assert start.hash == _documented_hash(repo) == tree_hash(twin).hash
    (repo / ".gitignore").write_text("*.log\n")
    with_ignore = tree_hash(repo)
    assert with_ignore.files == 3 and with_ignore.hash != start.hash
    (repo / "debug.log").write_text("noise\n")
    assert tree_hash(repo).hash == with_ignore.hash
    (repo / "a.txt").write_text("changed, not committed\n")
    edited = tree_hash(repo).hash
    assert edited != with_ignore.hash
    (repo / "a.txt").chmod(0o755)
    moded = tree_hash(repo).hash
    assert moded != edited
    (repo / "b.txt").unlink()
    gone = tree_hash(repo)
    assert gone.files == 2 and gone.hash != moded and gone.hash == _documented_hash(repo)
    code, doc, err = fw("project", "checkouts", "--tree", cwd=repo)
    assert code == 0 and doc["tree"] == {"algorithm": "sha256-tree-v1", "hash": gone.hash, "files": 2}, err
