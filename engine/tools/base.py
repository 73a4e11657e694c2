"""What every tool is made of: a name, its tags, a JSON schema, and a handler.

A handler takes the validated parameter object and the `ToolContext` of the call and returns a
`ToolResult`: `output` is the exact text the agent sees, `data` the same facts for programs.
A failure the agent can act on is a `ToolError`; the registry turns it into an error result.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.errors import EngineError


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
    for write's external-modification check (spec 1, write behaviours).
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


def unified_diff(path: str, before: str, after: str) -> str:
    import difflib

    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=f"a/{path}",
        tofile=f"b/{path}",
    )
    return "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
