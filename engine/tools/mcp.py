"""External tool servers (MCP): their tools as `mcp_<server>_<tool>`, tagged `mcp` (spec 1)."""

from __future__ import annotations

from typing import Any

from engine.tools.base import Tool


def mcp_tools(settings: dict[str, Any] | None = None) -> dict[str, Tool]:
    return {}


def server_status(settings: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return []
