"""The caller side of a daemon's tools: a workflow run with `target: daemon:<name>` sends each tool
call to the server's daemon API (`POST /api/daemons/<name>/tools/<tool>`), which forwards it over
the daemon's stream; the answer is the same ToolResult `platform tools call` gives on that
machine. Credentials: the platform login (or PLATFORM_TOKEN) for PLATFORM_SERVER_URL."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from engine.errors import EngineError

# Refusals the agent sees as a tool error (and may correct); anything else fails the run.
TOOL_ERRORS = ("invalid_params", "unknown_tool", "outside_roots", "not_found", "usage")


class RemoteResult(BaseModel):
    output: str
    is_error: bool
    data: dict[str, Any] = {}


class DaemonTools:
    def __init__(self, name: str, session: str = "run", server_flag: str | None = None) -> None:
        from engine.auth import credentials

        self.name, self.session = name, session
        self.resolved = credentials.resolve_platform(server_flag)
        self.resolved.require("platform")

    def call(self, tool: str, params: Any) -> Any:
        from urllib.parse import quote

        from engine.auth.client import call
        from engine.tools.base import ToolResult

        try:
            got = call(self.resolved, "POST", f"/api/daemons/{quote(self.name)}/tools/{quote(tool)}", RemoteResult,
                       {"params": params, "session": self.session})
        except EngineError as exc:
            if exc.code in TOOL_ERRORS:
                return ToolResult(output=f"error: {exc.message}\n", is_error=True, data={"error": exc.to_dict()})
            raise EngineError(f"daemon {self.name}: {exc.message}", code=exc.code, hint=exc.hint) from None
        return ToolResult(output=got.output, is_error=got.is_error, data=got.data)
