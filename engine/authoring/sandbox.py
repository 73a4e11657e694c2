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


def _digests(root: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for path in root.rglob("*"):
        rel = path.relative_to(root)
        if path.is_file() and not SKIP & set(rel.parts):
            out[rel.as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def diff(before: Path, after: Path) -> list[tuple[str, str]]:
    """(path, created | modified | removed) between two trees, sorted by path."""
    a, b = _digests(before), _digests(after)
    out = [(p, "created") for p in b.keys() - a.keys()]
    out += [(p, "removed") for p in a.keys() - b.keys()]
    out += [(p, "modified") for p in a.keys() & b.keys() if a[p] != b[p]]
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
