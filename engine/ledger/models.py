"""Records of the machine ledger (docs/reference-deploy.md#files: promotions, gates, local sessions)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from engine.promotions.rules import Gate, Promotion  # the ledger's rules own them (machine and hosted)

__all__ = ["Apply", "Gate", "LocalSession", "Promotion", "RunRecords"]


class Apply(BaseModel):
    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import

    seq: int
    env: str
    promotion_id: str | None
    release: str
    pid: int
    host: str
    started_at: float
    finished_at: float | None
    phase: str
    outcome: str | None
    resources: list[dict[str, Any]]
    superseded_by_pid: int | None = None
    run_id: str | None = None
    namespace: str | None = None  # the Kubernetes namespace a K8sCluster apply targeted


class LocalSession(BaseModel):
    """Presence row: one per worktree per machine (a local session)."""

    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import

    machine: str
    worktree: str
    env: str
    branch: str
    dirty: bool
    refreshed_at: float
    stopped: bool


class RunRecords(BaseModel):
    """What one CI run wrote to the ledger (`ci run`)."""

    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import

    promotions: list[Promotion] = []
    applies: list[Apply] = []
    gates: list[Gate] = []
