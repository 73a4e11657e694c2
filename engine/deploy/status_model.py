"""The documents of `framework env status` (docs/reference-deploy.md#commands), shared by the machine ledger's
environments (engine.deploy.status) and hosted ones (engine.deploy.hosted_status)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

EXIT_PRIORITY = (1, 6, 8, 7, 2)
# `--signal <name>` (docs/reference-deploy.md#env-status---signal-name: this build defines the signals):
# the exit status reflects only that signal's checks. `verify`: image verify states (drift, missing,
# untagged -> 1; unreachable -> 2); `health`: runtime health checks (unhealthy -> 1); `deploy`: the
# last apply's outcome (failed or timed out -> 1; in flight or ready -> 0). "Could not determine"
# (2) and the outcomes of --wait (6, 8, 1 when it fell over) apply whatever the signal.
SIGNALS = ("deploy", "health", "verify")


class EnvStatus(BaseModel):
    env: str
    kind: str | None = None
    target: str | None = None
    ledger: dict[str, Any] = {}
    promotion: dict[str, Any] | None = None
    release: str | None = None
    provenance: dict[str, Any] | None = None
    images: list[dict[str, Any]] = []
    workloads: list[dict[str, Any]] = []
    health: str = "unknown"
    gates: list[dict[str, Any]] = []
    convergence: str = "unbound"
    sessions: list[dict[str, Any]] = []
    history: dict[str, Any] | None = None
    queued: dict[str, Any] | None = None  # hosted, waiting on a person: the wait and its action URL
    wait: dict[str, Any] | None = None
    message: str = ""
    signals: dict[str, int] = {}  # exit status of each signal's checks alone (see SIGNALS)
    exit_code: int = 0


class StatusResult(BaseModel):
    project: str
    environments: list[EnvStatus]


