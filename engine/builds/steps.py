"""The steps every build shares (engine.builds.dispatch for workloads, engine.builds.frontends for
frontends): running a build command, expanding an artifact path into its files, the build record."""

from __future__ import annotations

import subprocess
from pathlib import Path

from pydantic import BaseModel

from engine.errors import EngineError, InvalidInput
from engine.project import Project

SKIP_DIRS = {"__pycache__", ".git", "node_modules", ".venv"}


class BuildFailed(EngineError):
    code = "build_failed"


class WorkloadBuild(BaseModel):
    workload: str
    type: str | None
    status: str  # built | skipped | failed
    seconds: float = 0.0
    output: str = ""


def run_step(argv: list[str] | str, cwd: Path, what: str, shell: bool = False) -> str:
    try:
        out = subprocess.run(argv, cwd=cwd, shell=shell, capture_output=True, text=True, timeout=1800)
    except OSError as exc:
        raise BuildFailed(f"{what}: cannot run: {exc.strerror}") from exc
    text = (out.stdout + out.stderr).strip()
    if out.returncode != 0:
        tail = "\n".join(text.splitlines()[-10:])
        raise BuildFailed(f"{what}: exited {out.returncode}" + (f"\n{tail}" if tail else ""))
    return text


def expand_artifact(project: Project, rel: str) -> list[Path]:
    path = (project.root / rel).resolve()
    if project.root.resolve() not in (path, *path.parents):
        raise InvalidInput(f"artifact {rel!r} lies outside the project")
    if path.is_file():
        return [path]
    if path.is_dir():
        return sorted(
            p for p in path.rglob("*") if p.is_file() and not SKIP_DIRS & set(p.relative_to(path).parts)
        )
    return []
