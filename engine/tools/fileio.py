"""Reading and writing text files for the file tools: line endings kept, atomic, all-or-nothing."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.paths import atomic_write_bytes
from engine.tools.base import ToolContext, ToolError


@dataclass
class TextFile:
    """A file's text with LF line endings, and what it had on disk (to write it back the same way)."""

    path: Path
    text: str
    crlf: bool = False
    exists: bool = True

    def encode(self, text: str) -> bytes:
        # Line endings preserved (`edit`): a CRLF file stays CRLF.
        return (text.replace("\n", "\r\n") if self.crlf else text).encode("utf-8")


def read_text(path: Path, *, missing_ok: bool = False) -> TextFile:
    if path.is_dir():
        raise ToolError(f"{path} is a directory, not a file")
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        if missing_ok:
            return TextFile(path, "", exists=False)
        raise ToolError(f"file not found: {path}") from None
    except OSError as exc:
        raise ToolError(f"cannot read {path}: {exc.strerror}") from None
    if b"\x00" in raw[:8192]:
        raise ToolError(f"{path} is a binary file")
    text = raw.decode("utf-8", errors="replace")
    crlf = "\r\n" in text
    return TextFile(path, text.replace("\r\n", "\n") if crlf else text, crlf=crlf)


def check_unmodified(ctx: ToolContext, path: Path) -> None:
    """Refuse to overwrite a file that changed on disk since a tool last read or wrote it (`write`)."""
    seen = ctx.read_stamps.get(str(path))
    if seen is None:
        return
    try:
        st = path.stat()
    except FileNotFoundError:
        return
    if (st.st_mtime_ns, st.st_size) != seen:
        raise ToolError(
            f"{path} was modified on disk since it was last read; view it again before writing",
            code="modified_externally",
        )


def commit_writes(ctx: ToolContext, changes: Sequence[tuple[Path, bytes | None]]) -> None:
    """Write (or delete, when bytes is None) every file, or put all of them back if one fails.

    The originals are kept as hard links (no copy of their bytes) until every write succeeded.
    """
    backups: list[tuple[Path, Path | None]] = []
    try:
        for n, (path, data) in enumerate(changes):
            backup = None
            if path.is_file():
                backup = path.with_name(f".{path.name}.{os.getpid()}.{n}.orig")
                backup.unlink(missing_ok=True)
                os.link(path, backup)
            backups.append((path, backup))
            if data is None:
                path.unlink()
            else:
                mode = path.stat().st_mode & 0o7777 if path.exists() else 0o644
                atomic_write_bytes(path, data, mode=mode)
    except OSError as exc:
        for path, backup in reversed(backups):
            try:
                if backup is None:
                    path.unlink(missing_ok=True)
                else:
                    os.replace(backup, path)
            except OSError:
                pass
        raise ToolError(f"cannot write {exc.filename or ''}: {exc.strerror}; nothing was changed") from None
    for path, backup in backups:
        if backup is not None:
            backup.unlink(missing_ok=True)
        ctx.remember(path)


def display(ctx: ToolContext, path: Path) -> str:
    try:
        return os.path.relpath(path, ctx.root) if path.is_relative_to(ctx.root) else str(path)
    except ValueError:
        return str(path)
