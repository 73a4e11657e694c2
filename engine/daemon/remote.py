"""The caller side of a daemon's tools: a workflow run with `target: daemon:<name>` sends each tool
call to the server's daemon API (`POST /api/daemons/<name>/tools/<tool>`), which forwards it over
the daemon's stream; the answer is the same ToolResult `platform tools call` gives on that
machine. Credentials: the platform login (or PLATFORM_TOKEN) for PLATFORM_SERVER_URL."""

from __future__ import annotations

from typing import Any

from engine.errors import EngineError


class DaemonTools:
    def __init__(self, name: str, session: str = "run", server_flag: str | None = None) -> None:
        from engine.auth import credentials

        self.name, self.session = name, session
        self.resolved = credentials.resolve_platform(server_flag)
        self.token = self.resolved.require("platform")

    def call(self, tool: str, params: Any) -> Any:
        import httpx

        from engine.tools.base import ToolResult

        url = f"{self.resolved.server}/api/daemons/{self.name}/tools/{tool}"
        try:
            r = httpx.post(url, json={"params": params, "session": self.session}, timeout=None,
                           headers={"Authorization": f"Bearer {self.token}"})
        except httpx.HTTPError as exc:
            raise EngineError(f"cannot reach {self.resolved.server}: {exc}", code="server_unreachable",
                              exit_code=2) from None
        try:
            doc = r.json()
        except ValueError:
            doc = {}
        if r.status_code == 200:
            return ToolResult(output=str(doc.get("output", "")), is_error=bool(doc.get("is_error")),
                              data=dict(doc.get("data") or {}))
        err = doc.get("error") or {}
        code, message = str(err.get("code") or "daemon_error"), str(err.get("message") or f"HTTP {r.status_code}")
        if code in ("invalid_params", "unknown_tool", "outside_roots", "not_found", "usage"):
            return ToolResult(output=f"error: {message}\n", is_error=True, data={"error": err})
        raise EngineError(f"daemon {self.name}: {message}", code=code)  # not connected, stream lost: the run fails
