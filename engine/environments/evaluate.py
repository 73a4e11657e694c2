"""Environments declared in `deploy/kcl/<env>/main.k` (spec 2, `framework env list`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from engine.environments.files import MAIN_FILE, declared_names, env_file
from engine.errors import EngineError, KclError
from engine.project import Project

__all__ = ["MAIN_FILE", "declared_names", "env_file", "evaluate_environment", "list_environments"]



class EnvironmentSummary(BaseModel):
    """One row of `env list`. `error` is set (and the rest empty) when its KCL does not evaluate."""

    name: str
    kind: str | None = None
    target: str | None = None
    workloads: list[str] = []
    file: str
    error: dict[str, Any] | None = None


class EnvironmentList(BaseModel):
    project: str
    root: str
    environments: list[EnvironmentSummary]

    @property
    def failed(self) -> list[EnvironmentSummary]:
        return [e for e in self.environments if e.error]


def evaluate_environment(
    project: Project, name: str, options: dict[str, str] | None = None
) -> dict[str, Any]:
    """The evaluated `environment` document of one environment (derived options included)."""
    return evaluate_environment_tracked(project, name, options)[0]


def evaluate_environment_tracked(
    project: Project,
    name: str,
    options: Mapping[str, str] | None = None,
    *,
    derived: Mapping[str, str] | None = None,
    watch: bool = False,
) -> tuple[dict[str, Any], list[str]]:
    """(`environment` document, files the evaluation wrote under the project when `watch`).

    `options` are the user's -D values (already validated); `derived` the tool's own options
    (spec 2: env, namespace, image_tag, image_digests, worktree, branch), computed when None.
    """
    from engine.environments.options import derived_options
    from engine.kcl.evaluate import evaluate_tracked

    path = env_file(project, name)
    merged = dict(derived if derived is not None else derived_options(project, name))
    merged.update(options or {})
    result = evaluate_tracked(
        path,
        kcl_root=project.kcl_dir,
        options=merged,
        relative_to=project.root,
        watch=project.root if watch else None,
    )
    env = result.data.get("environment")
    if not isinstance(env, dict):
        raise KclError(
            f"{path.relative_to(project.root)}: defines no `environment` "
            f"(top-level names: {', '.join(sorted(result.data)) or 'none'})",
            file=str(path.relative_to(project.root)),
            hint="assign a framework.Environment to `environment`",
        )
    return env, result.wrote


def _target_of(env: dict[str, Any]) -> str | None:
    target = env.get("target")
    if isinstance(target, dict) and target.get("type"):
        return str(target["type"])
    return "hosted" if env.get("kind") == "hosted" else None


def list_environments(project: Project) -> EnvironmentList:
    rows: list[EnvironmentSummary] = []
    for name in declared_names(project):
        rel = str((project.kcl_dir / name / MAIN_FILE).relative_to(project.root))
        try:
            env = evaluate_environment(project, name)
        except EngineError as exc:
            rows.append(EnvironmentSummary(name=name, file=rel, error=exc.to_dict()))
            continue
        if env.get("name") != name:
            mismatch = KclError(
                f"{rel}: declares name {env.get('name')!r} but lives in deploy/kcl/{name}/",
                file=rel,
                hint=f'set name = "{name}" or rename the directory',
            )
            rows.append(EnvironmentSummary(name=name, file=rel, error=mismatch.to_dict()))
            continue
        rows.append(
            EnvironmentSummary(
                name=name,
                kind=env.get("kind"),
                target=_target_of(env),
                workloads=[str(w.get("name")) for w in env.get("workloads") or [] if isinstance(w, dict)],
                file=rel,
            )
        )
    return EnvironmentList(project=project.name, root=str(project.root), environments=rows)
