"""`ci validate-kcl` (docs/reference-env.md#shape-diff-config-new): every environment must render deployable manifests.

Each declared environment is rendered with its derived options only (charts included, writes
refused); every rendered object must be complete enough to apply.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from engine.errors import EngineError
from engine.project import Project


class EnvValidation(BaseModel):
    env: str
    status: Literal["ok", "error"]
    runtime: str | None = None
    objects: int = 0
    error: dict[str, Any] | None = None


class KclValidation(BaseModel):
    project: str
    environments: list[EnvValidation]

    @property
    def failed(self) -> list[EnvValidation]:
        return [e for e in self.environments if e.status != "ok"]


def _incomplete(runtime: str, doc: dict[str, Any]) -> str | None:
    if runtime in ("k8s", "hosted"):
        if not doc.get("apiVersion") or not doc.get("kind") or not (doc.get("metadata") or {}).get("name"):
            return "manifest lacks apiVersion, kind or metadata.name"
    elif runtime == "compose" and not doc.get("image"):
        return "compose service lacks an image"
    elif runtime == "process" and not doc.get("command"):
        return "process lacks a command"
    return None


def validate_kcl(project: Project) -> KclValidation:
    from engine.environments.evaluate import declared_names
    from engine.environments.render.pipeline import render_environment

    rows: list[EnvValidation] = []
    for name in declared_names(project):
        try:
            rendered = render_environment(project, name, fail_on_write=True)
        except EngineError as exc:
            rows.append(EnvValidation(env=name, status="error", error=exc.to_dict()))
            continue
        problem = next(
            (
                f"{o.kind} {o.name}: {p}"
                for o in rendered.objects
                if (p := _incomplete(rendered.runtime, o.document))
            ),
            None,
        )
        if not rendered.objects:
            problem = "renders no objects"
        if problem:
            rows.append(
                EnvValidation(
                    env=name,
                    status="error",
                    runtime=rendered.runtime,
                    objects=len(rendered.objects),
                    error={"code": "not_deployable", "message": f"{name}: {problem}"},
                )
            )
        else:
            rows.append(
                EnvValidation(env=name, status="ok", runtime=rendered.runtime, objects=len(rendered.objects))
            )
    return KclValidation(project=project.name, environments=rows)
