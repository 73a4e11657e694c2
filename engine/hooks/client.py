"""The CLI's way to the server's admin API: `PLATFORM_SERVER_URL` and `PLATFORM_TOKEN`, else the
stored login for that server (docs/reference-auth.md#platform-auth). Answers are parsed back into the engine's models.

Every call takes an optional `server=(url, token)`: the dashboard passes the URL and token of its
settings; an empty part falls back to the environment variable."""

from __future__ import annotations

import os
from typing import Any, TypeVar

from pydantic import BaseModel

from engine.errors import EngineError
from engine.hooks.models import (
    Activation,
    Automation,
    AutomationList,
    Delivery,
    History,
    Trigger,
    TriggerDefinition,
    TriggerStats,
)

M = TypeVar("M", bound=BaseModel)
Server = tuple[str, str] | None


class ServerUnreachable(EngineError):
    exit_code = 2
    code = "server_unreachable"


def server_settings(server: Server = None) -> tuple[str, str]:
    """(url, token) from `server` or PLATFORM_SERVER_URL / PLATFORM_TOKEN, else the stored login for
    that URL (`platform auth login`); a usage error (2) if there is none."""
    given_url, given_token = server or ("", "")
    url = (given_url or os.environ.get("PLATFORM_SERVER_URL", "")).rstrip("/")
    if url and not given_token and not os.environ.get("PLATFORM_TOKEN"):
        from engine.auth.credentials import platform_token_for  # `platform auth login` for that server

        given_token = platform_token_for(url) or ""
    token = given_token or os.environ.get("PLATFORM_TOKEN", "")
    if not url:
        raise EngineError(
            "PLATFORM_SERVER_URL is not set",
            code="usage",
            exit_code=2,
            hint="export PLATFORM_SERVER_URL=http://127.0.0.1:8080 (the URL `platform server` printed)",
        )
    if not token:
        raise EngineError(
            f"no login for {url} and PLATFORM_TOKEN is not set",
            code="usage",
            exit_code=2,
            hint=f"platform auth login --server {url}, or export PLATFORM_TOKEN=<an API token>",
        )
    return url, token


def _call(
    method: str,
    path: str,
    model: type[M],
    body: dict[str, Any] | None = None,
    params: dict[str, Any] | None = None,
    server: Server = None,
) -> M:
    import httpx

    url, token = server_settings(server)
    try:
        response = httpx.request(
            method,
            url + path,
            json=body,
            params=params,
            timeout=30,
            headers={"Authorization": f"Bearer {token}"},
        )
    except httpx.HTTPError as exc:
        raise ServerUnreachable(f"cannot reach {url}: {exc}", hint="is `platform server` running?") from None
    from engine.auth.client import answer, refusal, validated

    doc = answer(response)
    if response.status_code != 200:
        raise refusal(response, doc)
    return validated(model, doc, url)


def create_automation(name: str, workflow_source: str, server: Server = None) -> Automation:
    return _call(
        "POST", "/api/automations", Automation, {"name": name, "workflow": workflow_source}, server=server
    )


def list_automations(server: Server = None) -> AutomationList:
    return _call("GET", "/api/automations", AutomationList, server=server)


def add_trigger(automation: str, definition: TriggerDefinition, server: Server = None) -> Trigger:
    return _call(
        "POST",
        f"/api/automations/{automation}/triggers",
        Trigger,
        {"definition": definition.model_dump(exclude_none=True)},
        server=server,
    )


def activate(
    automation: str, trigger: str, hmac_secret: str | None, rotate: bool = False, server: Server = None
) -> Activation:
    verb = "rotate" if rotate else "activate"
    return _call(
        "POST",
        f"/api/automations/{automation}/triggers/{trigger}/{verb}",
        Activation,
        {"hmac_secret": hmac_secret},
        server=server,
    )


def set_enabled(automation: str, trigger: str, enabled: bool, server: Server = None) -> Trigger:
    verb = "enable" if enabled else "disable"
    return _call(
        "POST", f"/api/automations/{automation}/triggers/{trigger}/{verb}", Trigger, {}, server=server
    )


def history(
    automation: str, trigger: str | None, limit: int, before: str | None = None, server: Server = None
) -> History:
    """One page of history, newest first; pass the previous page's `next_before` as `before`."""
    params: dict[str, Any] = {"limit": limit}
    if trigger:
        params["trigger"] = trigger
    if before:
        params["before"] = before
    return _call("GET", f"/api/automations/{automation}/history", History, params=params, server=server)


def replay(automation: str, delivery_id: str, server: Server = None) -> Delivery:
    """Replay a recorded delivery as a new delivery and run; the new delivery is returned."""
    return _call(
        "POST", f"/api/automations/{automation}/deliveries/{delivery_id}/replay", Delivery, {}, server=server
    )


def stats(automation: str, trigger: str, minutes: int = 60, server: Server = None) -> TriggerStats:
    """Per-minute deliveries, answer latency and rejected/deduplicated counts over the last `minutes`."""
    return _call("GET", f"/api/automations/{automation}/triggers/{trigger}/stats", TriggerStats,
                 params={"minutes": minutes}, server=server)
