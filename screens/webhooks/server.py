"""Which platform server the Webhooks screens talk to, and with which token (from the app's settings)."""

from __future__ import annotations

from typing import Any


def server_of(app: Any) -> tuple[str, str]:
    settings = app.settings
    return settings.platform_server_url, settings.platform_token.get_secret_value()
