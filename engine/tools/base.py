"""What every tool is made of: a name, its tags, a JSON schema, and a handler.

A handler takes the validated parameter object and the `ToolContext` of the call and returns a
`ToolResult`: `output` is the exact text the agent sees, `data` the same facts for programs.
A failure the agent can act on is a `ToolError`; the registry turns it into an error result.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.errors import EngineError

# The tags tools carry; a tool_filter's `tag:<name>` entries name one of these
# (docs/reference-tools.md#tags-and-membership).
TAGS = (
    "default",
    "readonly",
    "file",
    "search",
    "execution",
    "web",
    "planning",
    "analysis",
    "workflow",
    "mcp",
)


class ToolError(EngineError):
    """A tool call failed as a whole (nothing was changed); the message is what the agent sees."""

    code = "tool_error"


class UnknownTool(EngineError):
    """No tool of that name is available (built-in or from a configured external tool server)."""

    code = "unknown_tool"
    exit_code = 2


class InvalidParams(EngineError):
    """The parameter object does not match the tool's JSON schema."""

    code = "invalid_params"
    exit_code = 2


class ToolResult(BaseModel):
    output: str
    is_error: bool = False
    data: dict[str, Any] = {}


@dataclass
class ToolContext:
    """Where a call runs: the project or worktree root, and the run/session it belongs to.

    `data_dir` holds what outlives one call (plans, background process logs, spilled output);
    `read_stamps` records the (mtime_ns, size) each file had when a tool last read or wrote it,
    for write's external-modification check (`write` refuses a file changed on disk).
    """

    root: Path
    session_id: str = "default"
    data_dir: Path | None = None
    chat_id: str | None = None
    settings: dict[str, Any] | None = None  # None: the settings file (engine.tools.settings)
    read_stamps: dict[str, tuple[int, int]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def resolve(self, path: str | None) -> Path:
        """A tool path: absolute as given, relative against the root; `~` expanded."""
        if not path:
            return self.root
        p = Path(path).expanduser()
        return p if p.is_absolute() else self.root / p

    def state_dir(self) -> Path:
        base = self.data_dir or (self.root / ".framework" / "tools")
        base.mkdir(parents=True, exist_ok=True)
        return base

    def remember(self, path: Path) -> None:
        try:
            st = path.stat()
        except OSError:
            self.read_stamps.pop(str(path), None)
            return
        self.read_stamps[str(path)] = (st.st_mtime_ns, st.st_size)


Handler = Callable[[dict[str, Any], ToolContext], ToolResult]


@dataclass(frozen=True)
class Tool:
    name: str
    tags: tuple[str, ...]
    description: str
    schema: dict[str, Any]
    handler: Handler
    source: str = "builtin"

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "tags": list(self.tags),
            "description": self.description,
            "source": self.source,
            "input_schema": self.schema,
        }


def schema(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """A JSON schema object for a tool's parameters (unknown parameters are refused)."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


def string(desc: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": desc, **extra}


def integer(desc: str, **extra: Any) -> dict[str, Any]:
    return {"type": "integer", "description": desc, **extra}


def boolean(desc: str, **extra: Any) -> dict[str, Any]:
    return {"type": "boolean", "description": desc, **extra}


def clamp(value: int | None, default: int, maximum: int, minimum: int = 0) -> int:
    """A limit parameter: default when absent, never above the spec's maximum."""
    if value is None:
        return default
    return max(minimum, min(int(value), maximum))


DIFF_MAX_BYTES = 32 * 1024
DIFF_MAX_LINES = 20000
_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def _common_prefix(a: str, b: str, limit: int) -> int:
    """Length of the common prefix, compared in 64 KB slices (C speed) before character by character."""
    at, step = 0, 1 << 16
    while at < limit and a[at : at + step] == b[at : at + step]:
        at += step
    at = min(at, limit)
    end = min(at + step, limit)
    while at < end and a[at] == b[at]:
        at += 1
    return at


def _common_suffix(a: str, b: str, limit: int) -> int:
    at, step = 0, 1 << 16
    la, lb = len(a), len(b)
    while (
        at < limit
        and a[max(0, la - at - step) : la - at] == b[max(0, lb - at - step) : lb - at]
        and la - at - step >= 0
        and lb - at - step >= 0
    ):
        at += step
    at = min(at, limit)
    while at < limit and a[la - at - 1] == b[lb - at - 1]:
        at += 1
    return at


def _line_start(text: str, at: int, back: int) -> int:
    """Offset of the start of the line holding `at`, moved `back` more lines up."""
    pos = text.rfind("\n", 0, at) + 1
    for _ in range(back):
        if pos == 0:
            break
        pos = text.rfind("\n", 0, pos - 1) + 1
    return pos


def _line_end(text: str, at: int, forward: int) -> int:
    """Offset just past the line holding `at`, moved `forward` more lines down."""
    pos = at
    for _ in range(forward + 1):
        nl = text.find("\n", pos)
        if nl < 0:
            return len(text)
        pos = nl + 1
    return pos


def unified_diff(path: str, before: str, after: str) -> str:
    """A unified diff of the changed region only (common head and tail found first, at C speed).

    difflib alone is slow on large files and, with many identical lines, its junk heuristic
    reports the whole file as changed; trimming keeps a one-line edit of a 50 MB file cheap.
    """
    import difflib

    if before == after:
        return ""
    limit = min(len(before), len(after))
    head = _common_prefix(before, after, limit)
    tail = _common_suffix(before, after, limit - head)
    start = _line_start(before, head, 3)  # same offset in both: the prefix is shared
    a_end = (
        _line_end(before, max(start, len(before) - tail - 1), 3)
        if tail < len(before) - start
        else len(before)
    )
    b_end = len(after) - (len(before) - a_end)
    b_end = max(b_end, start)
    a_mid = before[start:a_end].splitlines(keepends=True)
    b_mid = after[start:b_end].splitlines(keepends=True)
    first_line = before.count("\n", 0, start)
    if len(a_mid) + len(b_mid) > DIFF_MAX_LINES:
        return (
            f"--- a/{path}\n+++ b/{path}\n[diff not shown: {len(a_mid)} line(s) replaced by {len(b_mid)} "
            f"from line {first_line + 1}]\n"
        )
    out = []
    for line in difflib.unified_diff(a_mid, b_mid, fromfile=f"a/{path}", tofile=f"b/{path}"):
        m = _HUNK.match(line)
        if m:  # shift hunk positions back to the whole file's line numbers
            line = (
                f"@@ -{int(m.group(1)) + first_line}{m.group(2) or ''} +{int(m.group(3)) + first_line}"
                f"{m.group(4) or ''} @@\n"
            )
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    text = "".join(out)
    if len(text) > DIFF_MAX_BYTES:
        text = (
            text[:DIFF_MAX_BYTES].rsplit("\n", 1)[0] + f"\n[diff truncated at {DIFF_MAX_BYTES // 1024} KB]\n"
        )
    return text
