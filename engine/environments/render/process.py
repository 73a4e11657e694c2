"""The process plan: what the `process` runtime runs on this machine (docs/reference-deploy.md#the-process-runtime).

One entry per workload (and per frontend with a dev command): command, working directory,
environment, ports and health check. Secret values are not in the plan, only their names;
the runtime resolves them when it starts the process.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from engine.environments.model import EnvironmentSpec, Port
from engine.environments.render.k8s import RenderError


class PlannedHealth(BaseModel):
    path: str
    port: int


class PlannedProcess(BaseModel):
    """One supervised process: `PORT` is set to its first port (the service listen port)."""

    name: str
    kind: str  # "workload" or "frontend"
    command: list[str]
    cwd: str
    env: dict[str, str]
    secrets: list[str] = []
    ports: list[Port] = []
    health: PlannedHealth | None = None
    replicas: int = 1


class ProcessPlan(BaseModel):
    project: str
    env: str
    root: str
    processes: list[PlannedProcess]

    def process(self, name: str) -> PlannedProcess:
        for proc in self.processes:
            if proc.name == name:
                return proc
        raise KeyError(name)


def _cwd(root: Path, rel: str | None) -> str:
    path = (root / rel).resolve() if rel else root.resolve()
    if root.resolve() not in (path, *path.parents):
        raise RenderError(f"working directory {rel!r} is outside the project")
    return str(path)


def plan_processes(spec: EnvironmentSpec, *, project: str, root: Path, port_offset: int = 0) -> ProcessPlan:
    """`port_offset` is the dev stack's block offset (block*100); 0 for the primary checkout."""
    processes: list[PlannedProcess] = []
    for w in spec.workloads:
        command = list(w.run) if w.run else ([w.artifact] if w.artifact else None)
        if not command:
            raise RenderError(
                f"workload {w.name!r} declares neither run nor artifact; "
                "a process environment needs a command to run",
                hint=f'set run = ["<program>", ...] on workload {w.name!r}',
            )
        ports = [Port(name=p.name, port=p.port + port_offset) for p in w.ports]
        env = dict(sorted(w.env.items()))
        if ports:
            env["PORT"] = str(ports[0].port)
        health = None
        if w.health:
            hp = w.port_named(w.health.port)
            if hp is not None:
                health = PlannedHealth(path=w.health.path, port=hp.port + port_offset)
        processes.append(
            PlannedProcess(
                name=w.name,
                kind="workload",
                command=command,
                cwd=_cwd(root, w.cwd),
                env=env,
                secrets=list(w.secrets),
                ports=ports,
                health=health,
                replicas=w.replicas,
            )
        )
    # A frontend's dev server is told where the API is (the first workload with a port) and its base
    # path (docs/reference-frontends.md#env-up): the scaffolded configs map these to the kind's own names.
    api = next((p for p in processes if p.ports), None)
    for f in spec.frontends:
        if not f.dev:
            continue
        ports = [Port(name="http", port=f.port + port_offset)] if f.port else []
        env = {"PORT": str(ports[0].port)} if ports else {}
        if api is not None:
            env["FRAMEWORK_API_URL"] = f"http://127.0.0.1:{api.ports[0].port}"
        if f.base_path:
            env["FRAMEWORK_BASE_PATH"] = f.base_path
        processes.append(
            PlannedProcess(
                name=f.name, kind="frontend", command=list(f.dev), cwd=_cwd(root, f.dir), env=env, ports=ports
            )
        )
    return ProcessPlan(project=project, env=spec.name, root=str(root), processes=processes)
