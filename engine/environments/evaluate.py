"""Environments declared in `deploy/kcl/<env>/main.k` (docs/reference-env.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from engine.environments.files import MAIN_FILE, declared_names, env_file
from engine.environments.model import EnvironmentSpec
from engine.errors import EngineError, KclError
from engine.project import Project

__all__ = [
    "MAIN_FILE", "declared_names", "env_file", "environment_spec", "evaluate_document", "evaluate_environment",
    "list_environments",
]



class EnvironmentSummary(BaseModel):
    """One row of `env list`. `error` is set (and the rest empty) when its KCL does not evaluate."""

    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import

    name: str
    kind: str | None = None
    target: str | None = None
    workloads: list[str] = []
    file: str
    error: dict[str, Any] | None = None


class EnvironmentList(BaseModel):
    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import

    project: str
    root: str
    environments: list[EnvironmentSummary]

    @property
    def failed(self) -> list[EnvironmentSummary]:
        return [e for e in self.environments if e.error]


def evaluate_environment(
    project: Project, name: str, options: dict[str, str] | None = None
) -> EnvironmentSpec:
    """The evaluated environment of `name`, typed (derived options included)."""
    return environment_spec(project, name, evaluate_document(project, name, options))


def evaluate_document(
    project: Project, name: str, options: dict[str, str] | None = None
) -> dict[str, Any]:
    """The evaluated `environment` document as KCL gave it (for placeholders and raw views)."""
    return evaluate_environment_tracked(project, name, options)[0]


def environment_spec(project: Project, name: str, doc: dict[str, Any]) -> EnvironmentSpec:
    """Validate an evaluated document as an EnvironmentSpec; a mismatch is a KCL error (exit 1)."""
    from pydantic import ValidationError

    try:
        return EnvironmentSpec.model_validate(doc)
    except ValidationError as exc:
        rel = f"deploy/kcl/{name}/{MAIN_FILE}"
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "environment"
        raise KclError(
            f"{rel}: environment.{where}: {first['msg']}",
            file=rel,
            hint="assign a framework.Environment to `environment` (see assets/kcl/framework/)",
        ) from None


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
    (docs/reference-env.md#render-options: env, namespace, image_tag, image_digests, worktree, branch), computed
    when None.
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


def list_environments(project: Project) -> EnvironmentList:
    rows: list[EnvironmentSummary] = []
    for name in declared_names(project):
        rel = str((project.kcl_dir / name / MAIN_FILE).relative_to(project.root))
        try:
            env = evaluate_environment(project, name)
        except EngineError as exc:
            rows.append(EnvironmentSummary(name=name, file=rel, error=exc.to_dict()))
            continue
        if env.name != name:
            mismatch = KclError(
                f"{rel}: declares name {env.name!r} but lives in deploy/kcl/{name}/",
                file=rel,
                hint=f'set name = "{name}" or rename the directory',
            )
            rows.append(EnvironmentSummary(name=name, file=rel, error=mismatch.to_dict()))
            continue
        rows.append(
            EnvironmentSummary(
                name=name,
                kind=env.kind,
                target=env.target_type,
                workloads=[w.name for w in env.workloads],
                file=rel,
            )
        )
    return EnvironmentList(project=project.name, root=str(project.root), environments=rows)
