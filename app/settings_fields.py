"""The dashboard's setting fields and defaults (plain Python: no pydantic before first paint).

Shared by app/settings.py (defaults, loading) and app/settings_sources.py (validation, sources).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

ENV_PREFIX = "FRAMEWORK_UI_"


def settings_file() -> Path:
    override = os.environ.get("FRAMEWORK_UI_CONFIG")
    if override:
        return Path(override)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "framework" / "dashboard.toml"


class Secret:
    """A value that never shows itself in repr or str (like pydantic's SecretStr)."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get_secret_value(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('**********')" if self._value else "Secret('')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


@dataclass
class DashboardFields:
    """Every dashboard setting with its default (a plain dataclass: no pydantic before first paint)."""

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
    protected_environments: list[str] = field(default_factory=list)
    """Deploying to these from the dashboard requires typing the environment's name."""
    keymap: dict[str, str] = field(default_factory=dict)
    """Binding id -> keys, e.g. {"app.quit" = "ctrl+q", "screen.runs" = "r,7"} (ids are listed by `?`)."""
    platform_server_url: str = ""
    """The `platform server` the Webhooks screen reads; empty: $PLATFORM_SERVER_URL."""
    platform_token: Secret = field(default_factory=lambda: Secret(""))
    """Its admin API token; empty: $PLATFORM_TOKEN. Never shown."""
    show_volatile: bool = True
    """Show ages, elapsed times and generated ids ("5m ago", "12s / 300s", prm_...); snapshot tests turn
    them off (no clocks, no random ids)."""
    deploy_timeout: float = 300.0
    """Wait budget in seconds of deploys started from the dashboard (`--timeout`)."""

    def __post_init__(self) -> None:
        if isinstance(self.platform_token, str):
            self.platform_token = Secret(self.platform_token)
