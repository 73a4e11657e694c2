"""A throwaway copy of a project: `--dry-run` runs the real operation there and reports the files it
would write (exact, and nothing touches the checkout); `ci verify-generated` regenerates there."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

SKIP = {".git", "bin", "tmp", "node_modules", ".venv", "__pycache__"}


def copy(root: Path, dest: Path) -> Path:
    shutil.copytree(root, dest, symlinks=True, ignore=lambda _d, names: [n for n in names if n in SKIP])
    return dest


def _stats(root: Path) -> dict[str, tuple[int, int]]:
    """Every file's (size, mtime_ns), the skipped directories pruned."""
    import os

    out: dict[str, tuple[int, int]] = {}
    base = str(root)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = [d for d in dirnames if d not in SKIP]
        rel_dir = os.path.relpath(dirpath, base)
        for name in filenames:
            full = os.path.join(dirpath, name)
            try:
                st = os.stat(full)
            except OSError:
                continue
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            out[rel.replace(os.sep, "/")] = (st.st_size, st.st_mtime_ns)
    return out


def _same(before: Path, after: Path, rel: str) -> bool:
    return hashlib.sha256((before / rel).read_bytes()).digest() == hashlib.sha256((after / rel).read_bytes()).digest()


def diff(before: Path, after: Path) -> list[tuple[str, str]]:
    """(path, created | modified | removed) between two trees, sorted by path. The copy keeps every
    file's mtime, so a file whose size and mtime are unchanged was not written; only the others are
    compared by content (a scaffold on a large project touches a few files of hundreds)."""
    a, b = _stats(before), _stats(after)
    out = [(p, "created") for p in b.keys() - a.keys()]
    out += [(p, "removed") for p in a.keys() - b.keys()]
    out += [(p, "modified") for p in a.keys() & b.keys() if a[p] != b[p] and not _same(before, after, p)]
    return sorted(out)


def carry_over(source: Path, dest: Path, changes: list[tuple[str, str]]) -> None:
    """Apply `diff(dest, source)` to `dest`: created and modified files copied (renamed into place,
    mode kept), removed ones deleted; the ownership ledgers under .framework/ last."""
    from engine.paths import atomic_write_bytes

    for rel, change in sorted(changes, key=lambda c: (c[0].startswith(".framework/"), c[0])):
        if change == "removed":
            (dest / rel).unlink(missing_ok=True)
        else:
            src = source / rel
            atomic_write_bytes(dest / rel, src.read_bytes(), src.stat().st_mode & 0o777)
