"""A small external MCP tool server for the tests (official SDK, MCPServer): `echo`, `add`, `boom`.

Run as a script it serves stdio; `app()` gives its streamable HTTP app for a local uvicorn server.
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("fixture")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return f"echo: {text}"


@server.tool()
def add(a: int, b: int) -> str:
    """Add two integers."""
    return str(a + b)


@server.tool()
def boom() -> str:
    """Always fails."""
    raise ToolError("boom failed on purpose")


def app():
    return server.streamable_http_app()


if __name__ == "__main__":
    server.run("stdio")
