"""The evaluated environment as typed models (mirrors assets/kcl/framework/environment.k).

KCL's `check:` blocks already validated the document; these models give the renderers typed
access and tolerate fields added to the KCL package later (extra fields are ignored).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Port(_Model):
    name: str = "http"
    port: int


class Build(_Model):
    type: Literal["go", "docker", "shell", "remote"]
    context: str | None = None
    main: str | None = None
    dockerfile: str | None = None
    command: str | None = None
    inputs: list[str] = []
    artifacts: list[str] = []


class HealthCheck(_Model):
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

    def port_named(self, name: str | None) -> Port | None:
        if not self.ports:
            return None
        if name is None:
            return self.ports[0]
        return next((p for p in self.ports if p.name == name), None)


class Frontend(_Model):
    name: str
    dir: str
    build: str | None = None
    dev: list[str] | None = None
    output: str = "dist"
    port: int | None = None
    routes: list[Route] = []


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
    type: Literal["process", "k8s", "compose"]
    context: str | None = None
    namespace: str | None = None
    ingress_class: str | None = None
    project_name: str | None = None


class ControlPlane(_Model):
    endpoint: str | None = None
    token_env: str = "FRAMEWORK_CONTROL_PLANE_TOKEN"
    registry_host: str | None = None


class EnvironmentSpec(_Model):
    """One `framework.Environment`, evaluated."""

    name: str
    kind: Literal["local", "self_managed", "hosted"]
    target: Target | None = None
    control_plane: ControlPlane | None = None
    workloads: list[Workload] = []
    frontends: list[Frontend] = []
    charts: list[Chart] = []
    bindings: dict[str, Binding] = Field(default_factory=dict)

    @property
    def runtime(self) -> str:
        """`process`, `k8s`, `compose`, or `hosted` (converged by the control plane)."""
        if self.kind == "hosted":
            return "hosted"
        return self.target.type if self.target else "process"
