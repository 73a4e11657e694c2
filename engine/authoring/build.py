"""`framework build [env]` (docs/reference-authoring.md#commands): compiles the project's binaries and frontends
locally; never publishes. Without an environment: every entry of `binaries` with `go build`, every
service whose `build` is docker or shell, and every entry of `frontends[]` with its kind's own build
(`next build`, `vite build`, `expo export --platform web`: docs/reference-frontends.md#build). With one:
its workloads' builds, exactly as `env build <env>` runs them without --push (one dispatch: go, docker,
shell), and each of its frontends' `build`.
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
    frontends: list[WorkloadBuild] = []  # each frontend's build (type: its kind)


def _frontend_builds(project: Project, cfg_enabled: bool) -> list[WorkloadBuild]:
    from engine.authoring.frontends import entries
    from engine.authoring.scaffold_frontend import build_frontend

    out = []
    for entry in entries(project.config, project.config_path) if cfg_enabled else []:
        output, seconds = build_frontend(project, entry)
        out.append(WorkloadBuild(workload=entry.name, type=entry.kind, status="built", seconds=seconds, output=output))
    return out


def build(project: Project, env: str | None = None) -> ProjectBuild | BuildResult:
    cfg = load(project)
    if not cfg.enabled("build"):
        raise InvalidInput("the build feature is disabled in framework.yaml (features.build: false)")
    if env is not None:
        result = env_build(project, env)
        from engine.builds.frontends import build_frontend as build_declared
        from engine.environments.evaluate import evaluate_environment

        done = {b.workload for b in result.builds}
        for frontend in evaluate_environment(project, env).frontends:
            if frontend.name not in done:  # carried ones (control plane) were built by env_build
                result.builds.append(build_declared(project, frontend))
        return result
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
    fronts = _frontend_builds(project, cfg.enabled("frontend"))
    if not workloads and not fronts:
        raise InvalidInput("nothing to build: framework.yaml declares no `binaries`, no docker or shell service "
                           "and no frontend")
    return ProjectBuild(builds=[build_workload(project, "local", w, None) for w in workloads], frontends=fronts)
