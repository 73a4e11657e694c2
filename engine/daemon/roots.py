"""The allowed roots of a daemon: every path a request names must resolve (symlinks followed)
inside one of them. A path outside, or a symlink inside that points outside, is refused with
`outside_roots`; nothing is read or written."""

from __future__ import annotations

import os
from pathlib import Path

from engine.errors import EngineError


class OutsideRoots(EngineError):
    code = "outside_roots"


class Roots:
    def __init__(self, roots: list[Path]) -> None:
        if not roots:
            raise EngineError("a daemon needs at least one allowed root", code="usage", exit_code=2)
        self.roots = [Path(os.path.realpath(r)) for r in roots]

    @property
    def first(self) -> Path:
        return self.roots[0]

    def resolve(self, path: str) -> Path:
        """The real path of `path` (relative paths are taken from the first root)."""
        if "\0" in path:
            raise EngineError("a path may not contain NUL", code="usage", exit_code=2)
        given = Path(path) if path else self.first
        if not given.is_absolute():
            given = self.first / given
        real = Path(os.path.realpath(given))
        for root in self.roots:
            if real == root or real.is_relative_to(root):
                return real
        escaped = " (through a symlink)" if os.path.normpath(given) != str(real) else ""
        raise OutsideRoots(f"{path or '.'} is outside the daemon's allowed roots{escaped}",
                           hint="allowed: " + ", ".join(str(r) for r in self.roots))

    def strings(self) -> list[str]:
        return [str(r) for r in self.roots]
