"""The `tool_filter` workflow input (docs/reference-tools.md#tool-filter), evaluated in four steps.

1. `tag:<tag>` entries and plain names are collected;
2. `!<name>` entries remove tools from that set;
3. glob patterns (`mcp_github_*`) expand against all available tools and add their matches;
4. `spawn:<workflow>(<preset>,...)` entries are parsed into sub-agent presets.
An empty filter selects `tag:default`. Malformed entries (unknown tag or tool, empty names, bad
spawn syntax) are errors; a glob that matches nothing is not (a tool server may be down).
"""

from __future__ import annotations

import fnmatch
import re

from pydantic import BaseModel

from engine.errors import EngineError
from engine.tools.base import TAGS, Tool

_NAME = re.compile(r"^[A-Za-z0-9_.\-]+$")
_SPAWN = re.compile(r"^spawn:([A-Za-z0-9_.\-]+)\(([^()]*)\)$")
_GLOB_CHARS = set("*?[")


class ToolFilterError(EngineError):
    code = "invalid_tool_filter"
    exit_code = 2


class SpawnPreset(BaseModel):
    workflow: str
    presets: list[str]


class FilterResult(BaseModel):
    tools: list[str]
    spawn: list[SpawnPreset] = []
    warnings: list[str] = []


def apply_filter(entries: list[str] | None, tools: dict[str, Tool]) -> FilterResult:
    entries = list(entries or []) or ["tag:default"]
    included: list[str] = []
    excluded: set[str] = set()
    globs: list[str] = []
    spawns: list[SpawnPreset] = []
    warnings: list[str] = []
    for raw in entries:
        if not isinstance(raw, str):
            raise ToolFilterError(f"tool_filter entry {raw!r} is not a string")
        entry = raw.strip()
        if not entry:
            raise ToolFilterError("tool_filter has an empty entry")
        if entry.startswith("tag:"):
            tag = entry[4:]
            if tag not in TAGS:
                raise ToolFilterError(
                    f"tool_filter entry {raw!r}: unknown tag {tag!r}", hint="tags: " + ", ".join(TAGS)
                )
            included += [t.name for t in tools.values() if tag in t.tags]
        elif entry.startswith("!"):
            name = entry[1:]
            if not _NAME.match(name):
                raise ToolFilterError(f"tool_filter entry {raw!r}: '!' takes one tool name")
            if name not in tools:
                warnings.append(f"{raw}: no tool named {name!r} is available")
            excluded.add(name)
        elif entry.startswith("spawn:"):
            m = _SPAWN.match(entry)
            if not m:
                raise ToolFilterError(
                    f"tool_filter entry {raw!r}: expected spawn:<workflow>(<preset>,<preset>)"
                )
            presets = [p.strip() for p in m.group(2).split(",")] if m.group(2).strip() else []
            if any(not p for p in presets):
                raise ToolFilterError(f"tool_filter entry {raw!r}: empty preset name")
            spawns.append(SpawnPreset(workflow=m.group(1), presets=presets))
        elif _GLOB_CHARS & set(entry):
            if not _NAME.match(
                entry.replace("*", "").replace("?", "").replace("[", "").replace("]", "") or "x"
            ):
                raise ToolFilterError(f"tool_filter entry {raw!r} is not a valid glob of tool names")
            globs.append(entry)
        else:
            if not _NAME.match(entry):
                raise ToolFilterError(
                    f"tool_filter entry {raw!r} is not a tool name, tag:, !, glob or spawn: entry"
                )
            if entry not in tools:
                if entry.startswith("mcp_"):
                    warnings.append(f"{raw}: tool server tool not available (server down or not configured)")
                    continue
                raise ToolFilterError(
                    f"tool_filter entry {raw!r}: no tool named {entry!r}",
                    hint="list tools with `platform tools list`",
                )
            included.append(entry)
    selected = [name for name in dict.fromkeys(included) if name not in excluded]
    for pattern in globs:
        matched = [name for name in tools if fnmatch.fnmatchcase(name, pattern)]
        if not matched:
            warnings.append(f"{pattern}: matches no available tool")
        selected += [name for name in matched if name not in selected]
    return FilterResult(tools=selected, spawn=spawns, warnings=warnings)
