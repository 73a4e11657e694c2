"""Environments declared in `deploy/kcl/<env>/main.k` (docs/reference-env.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from engine.environments.files import MAIN_FILE, declared_names, env_file
from engine.errors import KclError
from engine.project import Project

if TYPE_CHECKING:  # pydantic is imported by the validation only (env list's warm path needs none)
    from engine.environments.model import EnvironmentSpec
    from engine.kcl.evaluate import Evaluation

__all__ = [
    "MAIN_FILE", "declared_names", "env_file", "environment_spec", "evaluate_document", "evaluate_environment",
    "evaluate_environment_result", "evaluate_environment_tracked",
]


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

    from engine.environments.model import EnvironmentSpec

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
    env, result = evaluate_environment_result(project, name, options, derived=derived, watch=watch)
    return env, result.wrote


def evaluate_environment_result(
    project: Project,
    name: str,
    options: Mapping[str, str] | None = None,
    *,
    derived: Mapping[str, str] | None = None,
    watch: bool = False,
) -> tuple[dict[str, Any], Evaluation]:
    """(`environment` document, the evaluation: files written, cache key); see evaluate_environment_tracked."""
    from engine.environments.derived import derived_options
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
    return env, result
