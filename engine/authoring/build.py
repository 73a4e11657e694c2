"""`framework build [env]` (docs/reference-authoring.md#commands): compiles the project's binaries (and, later,
frontends) locally; never publishes. Without an environment: every entry of `binaries` with `go build`
and every service whose `build` is docker or shell. With one: its workloads' builds, exactly as
`env build <env>` runs them without --push (one dispatch: go, docker, shell).
"""

from __future__ import annotations

from pydantic import BaseModel

from engine.authoring.config import load
from engine.builds.dispatch import BuildResult, WorkloadBuild, build_workload, env_build
from engine.environments.model import Build, Workload
from engine.errors import InvalidInput
from engine.project import Project


class ProjectBuild(BaseModel):
    env: str | None = None
    builds: list[WorkloadBuild] = []


def build(project: Project, env: str | None = None) -> ProjectBuild | BuildResult:
    cfg = load(project)
    if not cfg.enabled("build"):
        raise InvalidInput("the build feature is disabled in framework.yaml (features.build: false)")
    if env is not None:
        return env_build(project, env)
    workloads: list[Workload] = []
    for binary in cfg.binaries:
        name = str(binary.get("name") or "")
        if not name:
            raise InvalidInput("framework.yaml: an entry of `binaries` has no name")
        main = str(binary.get("main") or f"./cmd/{name}")
        workloads.append(Workload(name=name, build=Build(type="go", main=main, artifacts=[f"bin/{name}"])))
    for svc in cfg.services:
        kind = svc.get("build", "go")
        if kind in ("docker", "shell"):
            workloads.append(Workload(name=str(svc.get("name")), image=svc.get("image") or str(svc.get("name")),
                                      build=Build(type=kind, command=svc.get("command"),
                                                  context=svc.get("context"))))
        elif kind != "go":
            raise InvalidInput(f"service {svc.get('name')}: build type {kind!r} is not go, docker or shell")
    if not workloads:
        raise InvalidInput("nothing to build: framework.yaml declares no `binaries` and no docker or shell service")
    return ProjectBuild(builds=[build_workload(project, "local", w, None) for w in workloads])
