"""What one doctor check reports: status, detail and the fix."""

from __future__ import annotations

from pydantic import BaseModel

OK, WARN, ERROR, SKIP = "ok", "warn", "error", "skip"


class Check(BaseModel):
    name: str
    status: str  # ok | warn | error | skip
    detail: str
    fix: str | None = None
    signals: list[str] = []  # the signals this check belongs to (e.g. `deploy`)


class DoctorReport(BaseModel):
    project: str | None
    signal: str | None
    checks: list[Check]
    counts: dict[str, int]
