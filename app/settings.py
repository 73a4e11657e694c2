"""Dashboard settings: one pydantic-settings class, env prefix `FRAMEWORK_UI_`, optional TOML file.

The file is `$FRAMEWORK_UI_CONFIG` or `~/.config/framework/dashboard.toml`; environment
variables override it. Tests pass a `DashboardSettings` directly (no watchers, no clock).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import SecretStr
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, TomlConfigSettingsSource


def settings_file() -> Path:
    override = os.environ.get("FRAMEWORK_UI_CONFIG")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "framework" / "dashboard.toml"


class DashboardSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="FRAMEWORK_UI_", extra="ignore")

    watch: bool = True
    """Refresh views when project files change (watchdog)."""
    debounce_seconds: float = 0.25
    """Coalesce bursts of file events into one refresh."""
    show_clock: bool = False
    cursor_blink: bool = True
    animations: bool = False
    """Off by default (STYLE.md)."""
    theme: str = "textual-dark"
    """Any Textual theme name (ctrl+p -> "Change theme" lists them)."""
    refresh_seconds: float = 5.0
    """How often live views poll state that has no file to watch."""
    protected_environments: list[str] = []
    """Deploying to these from the dashboard requires typing the environment's name."""
    keymap: dict[str, str] = {}
    """Binding id -> keys, e.g. {"app.quit" = "ctrl+q", "screen.runs" = "r,7"} (ids are listed by `?`)."""
    platform_server_url: str = ""
    """The `platform server` the Webhooks screen reads; empty: $PLATFORM_SERVER_URL."""
    platform_token: SecretStr = SecretStr("")
    """Its admin API token; empty: $PLATFORM_TOKEN. Never shown."""
    show_volatile: bool = True
    """Show ages, elapsed times and generated ids ("5m ago", "12s / 300s", prm_...); snapshot tests turn
    them off (no clocks, no random ids)."""
    deploy_timeout: float = 300.0
    """Wait budget in seconds of deploys started from the dashboard (`--timeout`)."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[Any, ...]:
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls, toml_file=settings_file()))


def deterministic_settings(**overrides: Any) -> DashboardSettings:
    """Deterministic settings for Pilot and snapshot tests: no watchers, no clock, no blinking."""
    values: dict[str, Any] = {"watch": False, "show_clock": False, "cursor_blink": False, "animations": False}
    values.update(overrides)
    return DashboardSettings(**values)
