"""Pydantic models of the webhook resources: trigger definition, delivery, history."""

from __future__ import annotations

import secrets
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

# Delivery outcomes recorded in history ("what it did": docs/reference-webhooks.md#commands, history outcomes).
OUTCOMES = ("queued", "run_started", "retry", "filtered_out", "filter_error", "refused")


class HmacConfig(BaseModel):
    """`webhook.hmac` (docs/reference-webhooks.md#endpoints)."""

    model_config = ConfigDict(extra="forbid")
    header: str = "X-Signature-256"
    algorithm: Literal["sha256", "sha1", "sha512"] = "sha256"
    prefix: str = ""
    encoding: Literal["hex", "base64"] = "hex"

    @field_validator("header")
    @classmethod
    def _header_name(cls, value: str) -> str:
        if not value or any(c in value for c in " :\r\n\t"):
            raise ValueError("must be an HTTP header name")
        return value


class WebhookConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")
    hmac: HmacConfig | None = None


class TriggerDefinition(BaseModel):
    """A webhook trigger as declared: name, webhook (may be empty), optional filter."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    webhook: WebhookConfig = Field(default_factory=WebhookConfig)
    filter: str | None = None


class Automation(BaseModel):
    id: str
    name: str
    workflow_name: str
    created_at: str
    triggers: list[Trigger] = []


class Trigger(BaseModel):
    """A trigger as shown: never its token or HMAC secret (those are displayed once)."""

    id: str
    automation: str
    name: str
    enabled: bool
    activated: bool
    hmac_secret_set: bool
    definition: TriggerDefinition
    url: str | None = None
    created_at: str
    rotated_at: str | None = None


class Activation(BaseModel):
    """The one answer that carries the URL and token (displayed once, at activation)."""

    trigger: Trigger
    url: str
    token: str
    url_with_token: str
    hmac: bool


class Run(BaseModel):
    id: str
    status: str
    started_at: str
    finished_at: str | None = None
    steps: int = 0
    error: str | None = None


class Delivery(BaseModel):
    id: str
    trigger: str
    received_at: str
    status_code: int
    outcome: str
    auth_method: str | None = None
    dedupe_key: str | None = None
    duplicate_of: str | None = None
    detail: str | None = None
    body_bytes: int
    payload: dict | None = None
    run: Run | None = None


class History(BaseModel):
    automation: str
    trigger: str | None = None
    deliveries: list[Delivery]
    next_before: str = ""
    """Cursor of the next (older) page; empty when this page is the last (the paging convention)."""


class AutomationList(BaseModel):
    automations: list[Automation]


class MinuteStats(BaseModel):
    start: str  # ISO-8601 UTC: the minute's first instant
    deliveries: int
    rejected: int
    deduplicated: int
    p50_ms: float | None  # None: no delivery of the minute has an answer latency
    p99_ms: float | None


class TriggerStats(BaseModel):
    automation: str
    trigger: str
    minutes: int
    since: str
    until: str
    deliveries: int
    rejected: int
    deduplicated: int
    outcomes: dict[str, int]
    p50_ms: float | None
    p99_ms: float | None
    per_minute: list[MinuteStats]  # oldest first, `minutes` entries


Automation.model_rebuild()


def delivery_id(received_us: int, random_hex: str | None = None) -> str:
    """Time-ordered ids: new rows append at the right edge of the primary-key B-tree instead of
    touching a random page each (fewer pages per group commit). 10 random hex digits follow."""
    return f"dlv_{received_us:014x}{random_hex or secrets.token_hex(5)}"
