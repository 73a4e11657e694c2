"""`env config`: the resolved environment variables of each workload (docs/reference-env.md#shape-diff-config-new).

Secret values are never shown: a secret appears with its name and where it comes from.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel

from engine.environments.bindings import BindingView, views
from engine.errors import UsageError
from engine.project import Project


class ConfigVar(BaseModel):
    name: str
    value: str | None
    source: Literal["declared", "port", "secret"]
    secret: bool = False
    origin: str | None = None

    def shown(self) -> str:
        return f"(secret from {self.origin})" if self.secret else (self.value or "")


class WorkloadConfig(BaseModel):
    workload: str
    vars: list[ConfigVar]


class EnvConfig(BaseModel):
    project: str
    env: str
    runtime: str
    workloads: list[WorkloadConfig]
    bindings: list[BindingView] = []  # where `env new --bind` placed workloads or frontends


def env_config(
    project: Project, env: str, options: Mapping[str, str] | None = None, workload: str | None = None
) -> EnvConfig:
    from engine.environments.render.k8s import secret_name
    from engine.environments.render.pipeline import render_environment

    rendered = render_environment(project, env, options, charts=False)
    spec = rendered.environment
    names = [w.name for w in spec.workloads]
    if workload is not None and workload not in names:
        raise UsageError(
            f"--workload {workload}: not a workload of {env!r} (declared: {', '.join(names) or 'none'})"
        )
    secret_source = {
        "k8s": "Secret {name}",
        "hosted": "Secret {name}",
        "compose": "the compose environment",
        "process": "the process environment",
    }[rendered.runtime]
    out = []
    for w in spec.workloads:
        if workload is not None and w.name != workload:
            continue
        resolved: dict[str, ConfigVar] = {
            k: ConfigVar(name=k, value=v, source="declared") for k, v in w.env.items()
        }
        if w.ports:
            resolved["PORT"] = ConfigVar(name="PORT", value=str(w.ports[0].port), source="port")
        for s in w.secrets:
            resolved[s] = ConfigVar(
                name=s,
                value=None,
                source="secret",
                secret=True,
                origin=secret_source.format(name=secret_name(w)),
            )
        out.append(WorkloadConfig(workload=w.name, vars=[resolved[k] for k in sorted(resolved)]))
    return EnvConfig(project=project.name, env=env, runtime=rendered.runtime, workloads=out,
                     bindings=[b for b in views(spec) if workload is None or b.name == workload])
