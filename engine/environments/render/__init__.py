"""Rendering environments for their runtimes (k8s manifests, compose file, process plan).

Kept light: the functions below import their modules on call (see engine/environments/render/pipeline.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from engine.environments.render.pipeline import Rendered
    from engine.environments.render.process import ProcessPlan
    from engine.project import Project


def process_plan(
    project: Project, env: str, options: Mapping[str, str] | None = None, *, port_offset: int = 0
) -> ProcessPlan:
    """The process plan (workload, command, cwd, env, ports, health) the process runtime runs.

    Raises RenderError (exit 1) when `env` does not run as processes (k8s, compose, hosted).
    """
    from engine.environments.render.pipeline import render_environment

    return plan_of(project, render_environment(project, env, options), port_offset=port_offset)


def plan_of(project: Project, rendered: Rendered, *, port_offset: int = 0) -> ProcessPlan:
    """The process plan of an environment already rendered (callers that render once: env up, debug)."""
    from engine.environments.render.k8s import RenderError
    from engine.environments.render.process import plan_processes

    if rendered.runtime != "process":
        raise RenderError(
            f"environment {rendered.env!r} runs on {rendered.runtime}, not as processes on this machine"
        )
    return plan_processes(rendered.environment, project=project.key, root=project.root, port_offset=port_offset)
