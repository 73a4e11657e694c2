"""The CLI's way to the server's admin API: `PLATFORM_SERVER_URL` and `PLATFORM_TOKEN` (issue 7,
until login lands). Answers are parsed back into the engine's models."""

from __future__ import annotations

import os
from typing import Any, TypeVar

from pydantic import BaseModel

from engine.errors import EngineError
from engine.hooks.models import Activation, Automation, AutomationList, History, Trigger, TriggerDefinition

M = TypeVar("M", bound=BaseModel)


class ServerUnreachable(EngineError):
    exit_code = 2
    code = "server_unreachable"


def _settings() -> tuple[str, str]:
    url = os.environ.get("PLATFORM_SERVER_URL", "").rstrip("/")
    token = os.environ.get("PLATFORM_TOKEN", "")
    if not url:
        raise EngineError(
            "PLATFORM_SERVER_URL is not set",
            code="usage",
            exit_code=2,
            hint="export PLATFORM_SERVER_URL=http://127.0.0.1:8080 (the URL `platform server` printed)",
        )
    if not token:
        raise EngineError(
            "PLATFORM_TOKEN is not set",
            code="usage",
            exit_code=2,
            hint="export PLATFORM_TOKEN=<the admin API token `platform server` printed once>",
        )
    return url, token


def _call(
    method: str,
    path: str,
    model: type[M],
    body: dict[str, Any] | None = None,
    params: dict[str, Any] | None = None,
) -> M:
    import httpx

    url, token = _settings()
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
    try:
        doc = response.json()
    except ValueError:
        doc = {}
    if response.status_code != 200:
        err = doc.get("error") if isinstance(doc, dict) else None
        err = err if isinstance(err, dict) else {}
        raise EngineError(
            str(err.get("message") or f"server answered {response.status_code}"),
            hint=err.get("hint"),
            code=str(err.get("code") or "server_error"),
            exit_code=int(doc.get("exit_code") or 1) if isinstance(doc, dict) else 1,
        )
    return model.model_validate(doc)


def create_automation(name: str, workflow_source: str) -> Automation:
    return _call("POST", "/api/automations", Automation, {"name": name, "workflow": workflow_source})


def list_automations() -> AutomationList:
    return _call("GET", "/api/automations", AutomationList)


def add_trigger(automation: str, definition: TriggerDefinition) -> Trigger:
    return _call(
        "POST",
        f"/api/automations/{automation}/triggers",
        Trigger,
        {"definition": definition.model_dump(exclude_none=True)},
    )


def activate(automation: str, trigger: str, hmac_secret: str | None, rotate: bool = False) -> Activation:
    verb = "rotate" if rotate else "activate"
    return _call(
        "POST",
        f"/api/automations/{automation}/triggers/{trigger}/{verb}",
        Activation,
        {"hmac_secret": hmac_secret},
    )


def set_enabled(automation: str, trigger: str, enabled: bool) -> Trigger:
    verb = "enable" if enabled else "disable"
    return _call("POST", f"/api/automations/{automation}/triggers/{trigger}/{verb}", Trigger, {})


def history(automation: str, trigger: str | None, limit: int) -> History:
    params: dict[str, Any] = {"limit": limit}
    if trigger:
        params["trigger"] = trigger
    return _call("GET", f"/api/automations/{automation}/history", History, params=params)
