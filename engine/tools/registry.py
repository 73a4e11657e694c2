"""The tool registry: every built-in tool, plus the tools of configured external tool servers.

`call_tool` is the one way a tool runs (the run engine, `platform tools call`, `platform tools
serve`): parameters are checked against the tool's JSON schema, a `ToolError` becomes an error
result the agent sees, and nothing else escapes as a traceback.
"""

from __future__ import annotations

import importlib
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.tools.base import InvalidParams, Tool, ToolContext, ToolError, ToolResult, UnknownTool

# One module per tool family (docs/reference-tools.md#tags-and-membership); each exposes TOOLS.
FAMILIES = ("file", "patch", "search", "execution", "web", "planning", "analysis", "worktree", "workflow")



@cache
def builtin_tools() -> dict[str, Tool]:
    tools: dict[str, Tool] = {}
    for family in FAMILIES:
        module = importlib.import_module(f"engine.tools.{family}")
        for tool in module.TOOLS:
            tools[tool.name] = tool
    return tools


def available_tools(settings: dict[str, Any] | None = None, *, with_mcp: bool = True) -> dict[str, Tool]:
    """Built-in tools and, when servers are configured, `mcp_<server>_<tool>` tools."""
    tools = dict(builtin_tools())
    if with_mcp:
        from engine.tools.mcp import mcp_tools

        tools.update(mcp_tools(settings))
    return tools


def validate_params(tool: Tool, params: Any) -> dict[str, Any]:
    import jsonschema

    if not isinstance(params, dict):
        raise InvalidParams(f"{tool.name}: parameters must be a JSON object, not {type(params).__name__}")
    validator = jsonschema.Draft202012Validator(tool.schema)
    errors = sorted(validator.iter_errors(params), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        where = "/".join(str(p) for p in first.absolute_path) or "(parameters)"
        raise InvalidParams(
            f"{tool.name}: {where}: {first.message}", hint="see the schema with `platform tools list --json`"
        )
    return params


def call_tool(name: str, params: Any, ctx: ToolContext, tools: dict[str, Tool] | None = None) -> ToolResult:
    """Run one tool and return exactly what the agent sees."""
    tools = tools if tools is not None else available_tools(ctx.settings)
    if name not in tools:
        raise UnknownTool(f"unknown tool {name!r}", hint="list tools with `platform tools list`")
    tool = tools[name]
    params = validate_params(tool, params)
    try:
        return tool.handler(params, ctx)
    except ToolError as exc:
        return ToolResult(output=f"error: {exc.message}\n", is_error=True, data={"error": exc.to_dict()})


class ToolListing(BaseModel):
    tools: list[dict[str, Any]]
    spawn: list[dict[str, Any]] = []
    warnings: list[str] = []
    servers: list[dict[str, Any]] = []


class ToolCallOutcome(BaseModel):
    name: str
    output: str
    is_error: bool
    data: dict[str, Any] = {}


def list_tools(
    filter_entries: list[str] | None = None, settings: dict[str, Any] | None = None
) -> ToolListing:
    """Every available tool, or those a `tool_filter` selects (`platform tools list`)."""
    from engine.tools.filter import apply_filter
    from engine.tools.mcp import server_status

    tools = available_tools(settings)
    if filter_entries:
        selection = apply_filter(filter_entries, tools)
        chosen = [tools[name] for name in selection.tools]
        return ToolListing(
            tools=[t.describe() for t in chosen],
            spawn=[s.model_dump() for s in selection.spawn],
            warnings=selection.warnings,
            servers=server_status(settings),
        )
    return ToolListing(tools=[t.describe() for t in tools.values()], servers=server_status(settings))


def parse_params(text: str) -> Any:
    """`--params` value: JSON text, or `@file` holding JSON."""
    import json
    from pathlib import Path

    source = "--params"
    if text.startswith("@"):
        source = text[1:]
        try:
            text = Path(source).read_text(encoding="utf-8")
        except OSError as exc:
            raise InvalidParams(f"cannot read parameters file {source}: {exc.strerror}") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise InvalidParams(f"{source} is not valid JSON: {exc}") from None


def session_context(root: Path, session_id: str = "cli") -> ToolContext:
    """The context of `platform tools call`/`serve`: state kept per root and session in the cache."""
    import hashlib

    from engine.paths import cache_dir

    root = root.resolve()
    digest = hashlib.sha256(str(root).encode()).hexdigest()[:12]
    return ToolContext(
        root=root,
        session_id=session_id,
        data_dir=cache_dir() / "tools" / f"{root.name}-{digest}" / session_id,
    )


def invoke(name: str, params_text: str, root: Path, session_id: str = "cli") -> ToolCallOutcome:
    """One `platform tools call`: what files the session's tools read or wrote is kept between calls,
    so write's external-modification check works across separate commands too."""
    import json

    from engine.paths import atomic_write_bytes

    ctx = session_context(root, session_id)
    stamps = ctx.state_dir() / "read_stamps.json"
    try:
        ctx.read_stamps.update({k: (int(v[0]), int(v[1])) for k, v in json.loads(stamps.read_text()).items()})
    except (OSError, ValueError, TypeError, IndexError, AttributeError):
        pass
    result = call_tool(name, parse_params(params_text), ctx)
    atomic_write_bytes(stamps, json.dumps(ctx.read_stamps).encode())
    return ToolCallOutcome(name=name, output=result.output, is_error=result.is_error, data=result.data)
