"""Dashboard settings: one pydantic-settings class, env prefix `FRAMEWORK_UI_`, optional TOML file.

The file is `$FRAMEWORK_UI_CONFIG` or `~/.config/framework/dashboard.toml`; environment
variables override it. The fields live on `DashboardFields` (plain pydantic); the
pydantic-settings class `DashboardSettings` (app/settings_sources.py, built from these fields)
adds validation and the env and file sources. pydantic and pydantic-settings cost ~150-300 ms to
import, about a third of the dashboard's first paint, so the fields are a plain dataclass and
`load_settings()` imports them only when there is something to read (a settings file or a
FRAMEWORK_UI_* variable); otherwise the defaults are the settings. Tests pass
`deterministic_settings()` (no watchers, no clock, no blinking).
"""

from __future__ import annotations

import os
from typing import Any

from app.settings_fields import ENV_PREFIX, DashboardFields, Secret, settings_file

__all__ = ["ENV_PREFIX", "DashboardFields", "Secret", "deterministic_settings", "load_settings", "settings_file"]


def load_settings() -> DashboardFields:
    """The user's settings: file and FRAMEWORK_UI_* variables when present, else the defaults."""
    if settings_file().is_file() or any(k.startswith(ENV_PREFIX) and k != "FRAMEWORK_UI_CONFIG" for k in os.environ):
        from app.settings_sources import load_from_sources

        return load_from_sources()
    return DashboardFields()


def deterministic_settings(**overrides: Any) -> DashboardFields:
    """Deterministic settings for Pilot and snapshot tests: no watchers, no clock, no blinking."""
    values: dict[str, Any] = {"watch": False, "show_clock": False, "cursor_blink": False, "animations": False}
    values.update(overrides)
    return DashboardFields(**values)


def __getattr__(name: str) -> Any:
    # `from app.settings import DashboardSettings` keeps working without an eager pydantic-settings import.
    if name == "DashboardSettings":
        from app.settings_sources import DashboardSettings

        return DashboardSettings
    raise AttributeError(name)
