"""The tool registry: every built-in tool, plus the tools of configured external tool servers.

`call_tool` is the one way a tool runs (the run engine, `platform tools call`, `platform tools
serve`): parameters are checked against the tool's JSON schema, a `ToolError` becomes an error
result the agent sees, and nothing else escapes as a traceback.
"""

from __future__ import annotations

import importlib
from functools import cache
from typing import Any

from engine.tools.base import InvalidParams, Tool, ToolContext, ToolError, ToolResult, UnknownTool

# One module per tool family (spec 1, Tags); each exposes TOOLS.
FAMILIES = ("file", "patch", "search", "execution", "web", "planning", "analysis", "worktree", "workflow")

TAGS = ("default", "readonly", "file", "search", "execution", "web", "planning", "analysis", "workflow", "mcp")


@cache
def builtin_tools() -> dict[str, Tool]:
    tools: dict[str, Tool] = {}
    for family in FAMILIES:
        try:
            module = importlib.import_module(f"engine.tools.{family}")
        except ModuleNotFoundError as exc:
            if exc.name == f"engine.tools.{family}":
                continue  # a family not built yet
            raise
        for tool in module.TOOLS:
            tools[tool.name] = tool
    return tools


def available_tools(settings: dict[str, Any] | None = None, *, with_mcp: bool = True) -> dict[str, Tool]:
    """Built-in tools and, when servers are configured, `mcp_<server>_<tool>` tools (spec 1)."""
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
        raise InvalidParams(f"{tool.name}: {where}: {first.message}",
                            hint="see the schema with `platform tools list --json`")
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
