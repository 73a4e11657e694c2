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
