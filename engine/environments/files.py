"""Where environments are declared: `deploy/kcl/<env>/main.k` (docs/reference-env.md).

The bottom of the environments package: rendering and evaluation both find files through it.
"""

from __future__ import annotations

from pathlib import Path

from engine import names
from engine.errors import EnvironmentNotFound
from engine.project import Project

MAIN_FILE = "main.k"


def declared_names(project: Project) -> list[str]:
    """Directory names under deploy/kcl that hold a main.k, sorted."""
    if not project.kcl_dir.is_dir():
        return []
    return sorted(p.parent.name for p in project.kcl_dir.glob(f"*/{MAIN_FILE}") if p.is_file())


def env_file(project: Project, name: str) -> Path:
    path = project.kcl_dir / names.environment(name) / MAIN_FILE
    if not path.is_file():
        known = ", ".join(declared_names(project)) or "none"
        raise EnvironmentNotFound(
            f"environment {name!r} is not declared: {path.relative_to(project.root)} does not exist",
            hint=f"declared environments: {known}",
        )
    return path
