"""What a run records (docs/reference-tools.md#runs): its steps, status, plan and tasks. Shared by the engine and
the store."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class RunStep(BaseModel):
    index: int
    kind: str  # tool_call | tool_result | message
    name: str | None = None
    data: dict[str, Any] = {}


class RunRecord(BaseModel):
    id: str
    workflow: str
    status: str  # running | succeeded | failed
    steps: list[RunStep] = []
    inputs: dict[str, Any] = {}
    error: str | None = None
    plan: dict[str, Any] | None = None
    tasks: list[dict[str, Any]] = []
    tools: list[str] = []
    spawn: list[dict[str, Any]] = []  # sub-agent presets parsed from the tool_filter (its step 4)
    started_at: float = 0.0
    finished_at: float | None = None
