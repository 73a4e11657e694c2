"""The evaluated environment as typed models (mirrors assets/kcl/framework/environment.k).

`evaluate_environment` returns an `EnvironmentSpec`; deploy, status, dev stacks, builds and the
renderers all read it through these types. KCL's `check:` blocks already validated the document;
these models tolerate fields added to the KCL package later (extra fields are ignored).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    # validators built on first use, not at import: a deploy validates EnvironmentSpec only (bench/k8s.py)
    model_config = ConfigDict(extra="ignore", defer_build=True)


EnvironmentKind = Literal["local", "self_managed", "hosted"]
TargetType = Literal["process", "k8s", "compose"]
Runtime = Literal["process", "k8s", "compose", "hosted"]
BuildType = Literal["go", "docker", "shell", "remote"]


class Port(_Model):
    name: str = "http"
    port: int


class Build(_Model):
    type: BuildType
    context: str | None = None
    main: str | None = None
    dockerfile: str | None = None
    command: str | None = None
    inputs: list[str] = []
    artifacts: list[str] = []


class HealthCheck(_Model):
    type: Literal["http", "tcp", "command"] = "http"
    command: str | None = None
    path: str = "/healthz"
    port: str | None = None
    initial_delay_seconds: int = 0
    period_seconds: int = 10


class Route(_Model):
    host: str
    path: str = "/"
    port: str | None = None


class Workload(_Model):
    name: str
    image: str | None = None
    artifact: str | None = None
    build: Build | None = None
    run: list[str] | None = None
    cwd: str | None = None
    env: dict[str, str] = {}
    secrets: list[str] = []
    ports: list[Port] = []
    health: HealthCheck | None = None
    replicas: int = 1
    routes: list[Route] = []
    # Kubernetes objects applied as they are with this workload (K8sCluster): an operator's CRDs and RBAC;
    # an object, or a path or glob (relative to the project root) of YAML files.
    manifests: list[str | dict[str, Any]] = []

    def port_named(self, name: str | None) -> Port | None:
        if not self.ports:
            return None
        if name is None:
            return self.ports[0]
        return next((p for p in self.ports if p.name == name), None)

    def health_spec(self) -> dict[str, Any] | None:
        """The health check as the process runtime takes it: its port name resolved (health_port)."""
        if self.health is None:
            return None
        spec = self.health.model_dump(exclude_none=True)
        spec.pop("port", None)
        port = self.health_port()
        if port is not None:
            spec["port"] = port
        return spec

    def health_port(self) -> int | None:
        """The health check's port number when it names a port other than the first; None means
        each instance's own (first) port, which differs per replica on the process runtime."""
        if self.health is None or self.health.port is None:
            return None
        port = self.port_named(self.health.port)
        if port is None or port is self.ports[0]:
            return None
        return port.port


class Frontend(_Model):
    name: str
    dir: str
    build: str | None = None
    dev: list[str] | None = None
    output: str = "dist"  # the built directory, relative to `dir`
    output_kind: Literal["static", "standalone", "server"] = "static"  # what the built `output` is
    base_path: str | None = None  # the prefix the frontend's pages are built under
    port: int | None = None
    routes: list[Route] = []

    @property
    def output_path(self) -> str:
        """The built directory relative to the project root."""
        import posixpath

        return posixpath.normpath(posixpath.join(self.dir, self.output))


class Chart(_Model):
    name: str
    chart: str
    repo: str | None = None
    version: str | None = None
    values: dict[str, Any] = {}


class Binding(_Model):
    binder: Literal["hosted", "cluster", "bucket"]
    bucket: str | None = None


class Target(_Model):
    type: TargetType
    context: str | None = None
    namespace: str | None = None
    ingress_class: str | None = None
    project_name: str | None = None
    secrets: Literal["dotenv", "external"] = "dotenv"  # K8sCluster: where Secret values come from


class ControlPlane(_Model):
    endpoint: str | None = None
    token_env: str = "FRAMEWORK_CONTROL_PLANE_TOKEN"
    registry_host: str | None = None


class EnvironmentSpec(_Model):
    """One `framework.Environment`, evaluated."""

    name: str
    kind: EnvironmentKind
    target: Target | None = None
    control_plane: ControlPlane | None = None
    workloads: list[Workload] = []
    frontends: list[Frontend] = []
    charts: list[Chart] = []
    bindings: dict[str, Binding] = Field(default_factory=dict)

    @property
    def runtime(self) -> Runtime:
        """`process`, `k8s`, `compose`, or `hosted` (converged by the control plane)."""
        if self.kind == "hosted":
            return "hosted"
        return self.target.type if self.target else "process"

    @property
    def target_type(self) -> Runtime | None:
        """The declared target's type, `hosted` for a hosted environment without one, else None."""
        if self.target is not None:
            return self.target.type
        return "hosted" if self.kind == "hosted" else None

    @property
    def on_control_plane(self) -> bool:
        """Hosted, or declaring a control plane: its ledger and convergence live there
        (docs/reference-hosted.md#design)."""
        return self.kind == "hosted" or self.control_plane is not None

    def workload(self, name: str) -> Workload | None:
        return next((w for w in self.workloads if w.name == name), None)


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
    """`env list`, typed (engine.environments.listing.list_environments)."""

    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import

    project: str
    root: str
    environments: list[EnvironmentSummary]

    @property
    def failed(self) -> list[EnvironmentSummary]:
        return [e for e in self.environments if e.error]
