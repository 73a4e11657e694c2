"""The pydantic-settings class of the dashboard: FRAMEWORK_UI_* variables over the TOML file.

Built from the `DashboardFields` dataclass, so the fields are declared once.
"""

from __future__ import annotations

import dataclasses
from typing import Any, get_type_hints

from pydantic import SecretStr, create_model
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict, TomlConfigSettingsSource

from app.settings_fields import ENV_PREFIX, DashboardFields, Secret, settings_file


class _Sources(BaseSettings):
    model_config = SettingsConfigDict(env_prefix=ENV_PREFIX, extra="ignore")

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


def _definitions() -> dict[str, Any]:
    hints = get_type_hints(DashboardFields, globalns={"Secret": Secret})
    out: dict[str, Any] = {}
    for f in dataclasses.fields(DashboardFields):
        kind = SecretStr if hints[f.name] is Secret else hints[f.name]
        if f.default is not dataclasses.MISSING:
            out[f.name] = (kind, f.default)
        else:
            default = f.default_factory()  # type: ignore[misc]
            out[f.name] = (kind, SecretStr("") if isinstance(default, Secret) else default)
    return out


DashboardSettings: type[BaseSettings] = create_model("DashboardSettings", __base__=_Sources, **_definitions())


def load_from_sources() -> DashboardFields:
    """Read and validate the file and the environment; hand back the plain fields."""
    loaded = DashboardSettings()
    values = {f.name: getattr(loaded, f.name) for f in dataclasses.fields(DashboardFields)}
    values["platform_token"] = Secret(loaded.platform_token.get_secret_value())  # type: ignore[attr-defined]
    return DashboardFields(**values)
