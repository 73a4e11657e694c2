"""`platform tools serve`: our built-in tools as an MCP server over stdio (official SDK, low-level server).

Other agents (any MCP client) list and call the same tools with the same schemas and get the
exact text our agents see; an error result is marked `isError`. Tools run in worker threads so
that a long bash call does not stall the protocol.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import __version__


def build_server(root: Path, filter_entries: list[str] | None = None, session_id: str = "mcp") -> Any:
    import anyio
    import mcp_types as types
    from mcp.server.lowlevel import Server

    from engine.errors import EngineError
    from engine.tools.filter import apply_filter
    from engine.tools.registry import builtin_tools, call_tool, session_context

    tools = builtin_tools()
    if filter_entries:
        tools = {name: tools[name] for name in apply_filter(filter_entries, tools).tools}
    ctx = session_context(root, session_id)

    async def list_tools(_ctx: Any, _params: Any) -> Any:
        return types.ListToolsResult(
            tools=[
                types.Tool(name=t.name, description=t.description, input_schema=t.schema)
                for t in tools.values()
            ]
        )

    async def call(_ctx: Any, params: Any) -> Any:
        def run() -> tuple[str, bool]:
            try:
                result = call_tool(params.name, params.arguments or {}, ctx, tools=tools)
                return result.output, result.is_error
            except EngineError as exc:
                return f"error: {exc.message}\n", True

        output, is_error = await anyio.to_thread.run_sync(run)
        return types.CallToolResult(content=[types.TextContent(text=output)], is_error=is_error)

    return Server(
        "platform-tools",
        version=__version__,
        on_list_tools=list_tools,
        on_call_tool=call,
        instructions="Agent tools of the platform: files, search, shell, web, planning, analysis, git.",
    )


def serve_stdio(root: Path, filter_entries: list[str] | None = None, session_id: str = "mcp") -> int:
    import anyio
    from mcp.server.stdio import stdio_server

    from engine.tools.execution import close_session
    from engine.tools.registry import session_context

    server = build_server(root, filter_entries, session_id)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        close_session(session_context(root, session_id))  # background processes end with the session
    return 0
