"""A local cluster's declared configuration (docs/reference-cluster.md#configuration): read from
`--config <file>`, the environment's KCL, or `deploy/k3d.yaml`, without contacting anything
(`cluster info` prints it).

Whatever the provider, the cluster is named `<name>` and its kubeconfig context is `k3d-<name>`:
the lifecycle commands pin that context (docs/reference-cluster.md#context), so an environment
whose `K8sCluster.context` is `k3d-demo` deploys to the cluster `cluster up` made as `demo`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from engine.errors import InvalidInput
from engine.project import Project

CONTEXT_PREFIX = "k3d-"
DEFAULT_FILE = "deploy/k3d.yaml"
K3D_API_VERSION = "k3d.io/v1alpha5"
DEFAULT_HTTP_PORT = 8080
# k3d's own limit (a cluster name is a DNS label and prefixes container names): at most 32 characters.
_NAME = re.compile(r"[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?")
ProviderName = Literal["k3d", "kwok"]
ProviderChoice = Literal["auto", "k3d", "kwok"]


class Ingress(BaseModel):
    enabled: bool = True
    http_port: int | None = DEFAULT_HTTP_PORT  # host port the load balancer's :80 is published on (k3d)


class ClusterConfig(BaseModel):
    """What `cluster up` creates. `source` says where it was read from."""

    name: str
    provider: ProviderChoice = "auto"
    servers: int = 1
    agents: int = 0
    ingress: Ingress = Ingress()
    source: str
    env: str | None = None
    k3d: dict[str, Any] | None = None  # the k3d config document as written (a `--config`/deploy/k3d.yaml file)

    @property
    def context(self) -> str:
        return f"{CONTEXT_PREFIX}{self.name}"


def check_name(name: str) -> str:
    if not _NAME.fullmatch(name):
        raise InvalidInput(f"{name[:80]!r} is not a cluster name: lowercase letters, digits and '-', at most 32, "
                           "starting and ending with a letter or digit")
    return name


def name_from_context(context: str) -> str | None:
    return context[len(CONTEXT_PREFIX):] if context.startswith(CONTEXT_PREFIX) else None


def default_name(project: Project) -> str:
    """The project's name as a cluster name (lowercased, other characters as '-')."""
    name = re.sub(r"[^a-z0-9-]+", "-", project.name.lower()).strip("-")[:32].strip("-")
    return name or "dev"


def _count(value: Any, default: int) -> int:
    """A node count as declared; anything else is k3d's to refuse (the file is handed to it as written)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


def _from_file(path: Path, shown: str) -> ClusterConfig:
    import yaml

    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InvalidInput(f"cannot read {shown}: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise InvalidInput(f"{shown} is not YAML: {str(exc).splitlines()[0]}") from exc
    k3d_api = isinstance(doc, dict) and str(doc.get("apiVersion", "")).startswith("k3d.io/")
    if not isinstance(doc, dict) or doc.get("kind") != "Simple" or not k3d_api:
        raise InvalidInput(f"{shown} is not a k3d config (apiVersion k3d.io/..., kind Simple)",
                           hint="see https://k3d.io/stable/usage/configfile/")
    name = check_name(str((doc.get("metadata") or {}).get("name") or ""))
    http_port = None
    for port in doc.get("ports") or []:  # "8080:80" published on the load balancer = the ingress port
        spec = str((port or {}).get("port", "")) if isinstance(port, dict) else ""
        host, _, inner = spec.rpartition(":")
        if inner.split("/")[0] == "80" and host.rsplit(":", 1)[-1].isdigit():
            http_port = int(host.rsplit(":", 1)[-1])
    args = [str(a.get("arg", "")) for a in (((doc.get("options") or {}).get("k3s") or {}).get("extraArgs") or [])
            if isinstance(a, dict)]
    traefik_off = any(a.replace(" ", "=") in ("--disable=traefik", "--no-deploy=traefik") for a in args)
    provider = ((doc.get("x-framework") or {}).get("provider") if isinstance(doc.get("x-framework"), dict) else None)
    return ClusterConfig(name=name, servers=_count(doc.get("servers"), 1), agents=_count(doc.get("agents"), 0),
                         ingress=Ingress(enabled=not traefik_off, http_port=http_port if not traefik_off else None),
                         provider=provider if provider in ("auto", "k3d", "kwok") else "auto", source=shown, k3d=doc)


def _from_env(project: Project, env: str) -> ClusterConfig:
    from engine.environments.evaluate import evaluate_environment

    spec = evaluate_environment(project, env)
    target = spec.target
    if target is None or target.type != "k8s" or not target.context:
        raise InvalidInput(f"environment {env!r} does not deploy to a Kubernetes cluster (framework.K8sCluster)",
                           hint="`cluster up` without an environment creates the project's cluster")
    name = name_from_context(target.context)
    if name is None:
        raise InvalidInput(f"environment {env!r} targets context {target.context!r}, not a local cluster's "
                           f"({CONTEXT_PREFIX}<name>)", hint="`cluster up` creates local clusters only")
    routed = any(w.routes for w in spec.workloads)
    return ClusterConfig(name=check_name(name), provider=target.local_cluster or "auto",
                         ingress=Ingress(enabled=routed, http_port=DEFAULT_HTTP_PORT if routed else None),
                         source=f"deploy/kcl/{env}/main.k", env=env)


def load_config(project: Project, env: str | None = None, config_file: str | None = None) -> ClusterConfig:
    """The declared cluster: `--config <file>`, else the environment's KCL, else deploy/k3d.yaml, else
    the project's defaults (one server, named after the project, ingress on :8080)."""
    if config_file is not None:
        path = Path(config_file)
        cfg = _from_file(path if path.is_absolute() else Path.cwd() / path, config_file)
        return cfg.model_copy(update={"env": env}) if env else cfg
    if env is not None:
        return _from_env(project, env)
    path = project.root / DEFAULT_FILE
    if path.is_file():
        return _from_file(path, DEFAULT_FILE)
    return ClusterConfig(name=default_name(project), source="defaults (no deploy/k3d.yaml)")


def k3d_document(cfg: ClusterConfig) -> dict[str, Any]:
    """The k3d config `cluster up` hands to `k3d cluster create --config` (the file's own document when
    one was given; else generated from the declaration)."""
    if cfg.k3d is not None:
        return {k: v for k, v in cfg.k3d.items() if k != "x-framework"}
    options: dict[str, Any] = {"kubeconfig": {"updateDefaultKubeconfig": True, "switchCurrentContext": False}}
    doc: dict[str, Any] = {"apiVersion": K3D_API_VERSION, "kind": "Simple", "metadata": {"name": cfg.name},
                           "servers": cfg.servers, "agents": cfg.agents, "options": options}
    if cfg.ingress.enabled and cfg.ingress.http_port:
        doc["ports"] = [{"port": f"{cfg.ingress.http_port}:80", "nodeFilters": ["loadbalancer"]}]
    if not cfg.ingress.enabled:
        options["k3s"] = {"extraArgs": [{"arg": "--disable=traefik", "nodeFilters": ["server:*"]}]}
    return doc
