"""Where runs are recorded: `<runs home>/<run id>/run.json`, rewritten atomically after each step.

The runs home is `$PLATFORM_RUNS_HOME`, default `~/.platform/runs`; each run's tool session
(plan, background process logs, spilled output) lives in `<run id>/session/`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import EngineError
from engine.paths import atomic_write_bytes

if TYPE_CHECKING:
    from engine.runs.engine import RunRecord


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
    from engine.runs.engine import RunRecord

    path = run_dir(run_id, home) / "run.json"
    try:
        return RunRecord.model_validate_json(path.read_text())
    except FileNotFoundError:
        raise RunNotFound(f"no run {run_id!r} under {home or runs_home()}") from None
