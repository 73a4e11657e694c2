"""Records of the machine ledger (spec 2, Records: promotion, gate, local session)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class Gate(BaseModel):
    """One check result recorded against a promotion (spec 2, Records: gate)."""

    name: str
    status: str
    summary: str = ""
    run_id: str = "local"
    promotion_id: str = ""
    env: str = ""
    at_promote: bool = False
    recorded_at: float = 0.0


class Promotion(BaseModel):
    """A ledger entry: environment, release, per-image digests frozen at that moment."""

    id: str
    seq: int
    project: str
    env: str
    release: str
    images: dict[str, dict[str, Any]]
    direction: str
    previous_id: str | None = None
    plan_digest: str | None = None
    supersede: bool = False
    source: str = "deploy"
    who: str
    created_at: float
    run_id: str | None = None  # the CI run that promoted (engine/ci_environment.py); None outside CI
    gates: list[Gate] = []


class Apply(BaseModel):
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


class LocalSession(BaseModel):
    """Presence row: one per worktree per machine (spec 2, Records: local session)."""

    machine: str
    worktree: str
    env: str
    branch: str
    dirty: bool
    refreshed_at: float
    stopped: bool


class RunRecords(BaseModel):
    """What one CI run wrote to the ledger (spec 2, `ci run`)."""

    promotions: list[Promotion] = []
    applies: list[Apply] = []
    gates: list[Gate] = []
