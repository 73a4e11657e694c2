"""`break <file:line | function>`: where a breakpoint goes, checked before the adapter sees it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from engine.errors import EngineError, UsageError
from engine.project import Project


class BadLocation(EngineError):
    code = "bad_location"


def parse(project: Project, where: str, *, func: bool = False, condition: str | None = None) -> dict[str, Any]:
    """{file, line, function, condition} for the broker. A `file:line` names a readable file
    (relative to the current directory or the project root) and a line inside it."""
    where = where.strip()
    if not where:
        raise UsageError("break needs <file:line> or a function name")
    cond = condition.strip() if condition else None
    file_part, sep, line_part = where.rpartition(":")
    if func or not sep or not line_part.strip().isdigit():
        if func or (not sep and "/" not in where and not where.endswith((".py", ".go"))):
            return {"file": None, "line": None, "function": where, "condition": cond}
        raise UsageError(f"{where}: expected <file:line> (e.g. services/api/main.py:12) or --func <name>")
    line = int(line_part)
    candidates = [Path(file_part)] if os.path.isabs(file_part) else [Path.cwd() / file_part, project.root / file_part]
    path = next((p.resolve() for p in candidates if p.is_file()), None)
    if path is None:
        raise BadLocation(f"{file_part}: no such file (looked in {Path.cwd()} and {project.root})")
    try:
        count = len(path.read_text(errors="replace").splitlines())
    except OSError as exc:
        raise BadLocation(f"{file_part}: unreadable ({exc.strerror})") from None
    if not 1 <= line <= count:
        raise BadLocation(f"{file_part}:{line}: the file has {count} lines")
    return {"file": str(path), "line": line, "function": None, "condition": cond}
