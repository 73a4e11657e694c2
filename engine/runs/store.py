"""Where runs are recorded: `<runs home>/<run id>/run.json`, rewritten atomically after each step.

The runs home is `$PLATFORM_RUNS_HOME`, default `~/.platform/runs`; each run's tool session
(plan, background process logs, spilled output) lives in `<run id>/session/`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from engine import names
from engine.errors import EngineError
from engine.paths import atomic_write_bytes

if TYPE_CHECKING:
    from engine.runs.records import RunRecord


class RunNotFound(EngineError):
    code = "run_not_found"


def runs_home() -> Path:
    override = os.environ.get("PLATFORM_RUNS_HOME")
    return Path(override) if override else Path.home() / ".platform" / "runs"


def run_dir(run_id: str, home: Path | None = None) -> Path:
    return (home or runs_home()) / run_id


def save_run(record: RunRecord, home: Path | None = None) -> Path:
    path = run_dir(record.id, home) / "run.json"
    atomic_write_bytes(path, json.dumps(record.model_dump(mode="json"), indent=1).encode())
    return path


def load_run(run_id: str, home: Path | None = None) -> RunRecord:
    from engine.runs.records import RunRecord

    path = run_dir(names.check(run_id, "run id"), home) / "run.json"
    try:
        return RunRecord.model_validate_json(path.read_text())
    except FileNotFoundError:
        raise RunNotFound(f"no run {run_id!r} under {home or runs_home()}") from None


class RunSummary(BaseModel):
    """One row of `platform runs list` and the dashboard's Runs table."""

    id: str
    workflow: str
    status: str
    steps: int
    tool_calls: int
    started_at: float
    finished_at: float | None = None
    error: str | None = None


class RunPage(BaseModel):
    """A page of runs, newest first. Pass `next_before` as `before` for the next page; empty when done."""

    home: str
    runs: list[RunSummary]
    next_before: str = ""


def list_runs(home: Path | None = None, *, limit: int = 50, before: str = "") -> RunPage:
    """Runs recorded under the runs home, newest first (run ids start with their UTC start time)."""
    from engine.runs.records import RunRecord

    root = home or runs_home()
    if limit < 1:
        raise EngineError("--limit must be at least 1", exit_code=2, code="usage")
    ids = sorted((p.name for p in root.iterdir() if (p / "run.json").is_file()), reverse=True) \
        if root.is_dir() else []
    if before:
        ids = [i for i in ids if i < before]
    page, rest = ids[:limit], ids[limit:]
    rows = []
    for run_id in page:
        try:
            record = RunRecord.model_validate_json((root / run_id / "run.json").read_bytes())
        except (OSError, ValueError):
            continue  # a run being written for the first time; it shows on the next read
        rows.append(RunSummary(
            id=record.id, workflow=record.workflow, status=record.status, steps=len(record.steps),
            tool_calls=sum(1 for s in record.steps if s.kind == "tool_call"), started_at=record.started_at,
            finished_at=record.finished_at, error=record.error,
        ))
    return RunPage(home=str(root), runs=rows, next_before=page[-1] if rest else "")
