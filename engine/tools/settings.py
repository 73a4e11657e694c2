"""Application settings for the tools: the web search provider and external tool servers (MCP).

Read from a YAML file (`$PLATFORM_SETTINGS`, default `~/.config/platform/settings.yaml`) with
environment overrides (`PLATFORM_WEBSEARCH_URL`, ...). Example:

    websearch_url: http://127.0.0.1:8888/search      # a SearXNG-compatible JSON endpoint
    mcp_servers:
      github: {command: github-mcp, args: [stdio], env: {TOKEN_ENV: GITHUB_TOKEN}}
      docs:   {url: http://127.0.0.1:9000/mcp, headers: {X-Team: core}}
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, model_validator

from engine.errors import ConfigError


class McpServer(BaseModel):
    """One external tool server: a command speaking MCP on stdio, or a streamable HTTP URL."""

    command: str | None = None
    args: list[str] = []
    env: dict[str, str] = {}
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = {}
    timeout: float = Field(default=15.0, gt=0, description="seconds to start and answer")
    enabled: bool = True

    @model_validator(mode="after")
    def _one_transport(self) -> McpServer:
        if bool(self.command) == bool(self.url):
            raise ValueError("give exactly one of `command` (stdio) or `url` (streamable HTTP)")
        return self


class ToolSettings(BaseModel):
    websearch_url: str | None = None
    websearch_api_key_env: str | None = None
    mcp_servers: dict[str, McpServer] = {}


def settings_path() -> Path:
    override = os.environ.get("PLATFORM_SETTINGS")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "platform" / "settings.yaml"


def load_settings(data: dict[str, Any] | None = None) -> ToolSettings:
    """Settings from `data` if given, else the settings file; environment variables win."""
    if data is None:
        path = settings_path()
        data = {}
        if path.is_file():
            import yaml

            try:
                data = yaml.safe_load(path.read_text()) or {}
            except yaml.YAMLError as exc:
                raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
            if not isinstance(data, dict):
                raise ConfigError(f"{path}: expected a mapping at the top level")
    data = dict(data)
    if os.environ.get("PLATFORM_WEBSEARCH_URL"):
        data["websearch_url"] = os.environ["PLATFORM_WEBSEARCH_URL"]
    try:
        return ToolSettings.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"tool settings: {where}: {first['msg']}", hint=f"check {settings_path()}") from exc
