"""Kubernetes manifests of a K8sCluster (or hosted) environment (docs/reference-env.md#rendering).

Secrets are referenced by name only (`secretKeyRef` into `<workload>-secrets`): values never
appear in a render. Every object carries the environment's labels so applies can prune by them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine.environments.model import EnvironmentSpec, Workload
from engine.errors import EngineError

LABEL_NAME = "app.kubernetes.io/name"
LABEL_PART_OF = "app.kubernetes.io/part-of"
LABEL_ENV = "framework.dev/env"


class RenderError(EngineError):
    """The environment evaluates but cannot be rendered for its runtime."""

    code = "render_error"


def image_reference(workload: Workload, image_tag: str, digests: dict[str, str]) -> str | None:
    """`image@digest` when the release pinned one, else `image:tag` unless the image has a tag."""
    if not workload.image:
        return None
    image = workload.image
    digest = digests.get(workload.name)
    if "@" in image:
        return image
    if digest:
        return f"{image}@{digest}"
    last = image.rsplit("/", 1)[-1]
    return image if ":" in last else f"{image}:{image_tag}"


def secret_name(workload: Workload) -> str:
    return f"{workload.name}-secrets"


def _labels(project: str, env: str, name: str) -> dict[str, str]:
    return {LABEL_NAME: name, LABEL_PART_OF: project, LABEL_ENV: env}


def _meta(name: str, namespace: str, labels: dict[str, str]) -> dict[str, Any]:
    return {"name": name, "namespace": namespace, "labels": labels}


def _container(w: Workload, image: str) -> dict[str, Any]:
    container: dict[str, Any] = {"name": w.name, "image": image}
    if w.run:
        container["command"] = list(w.run)
    if w.ports:
        container["ports"] = [{"name": p.name, "containerPort": p.port, "protocol": "TCP"} for p in w.ports]
    env: list[dict[str, Any]] = []
    if w.ports:
        env.append({"name": "PORT", "value": str(w.ports[0].port)})
    env += [{"name": s, "valueFrom": {"secretKeyRef": {"name": secret_name(w), "key": s}}} for s in w.secrets]
    if env:
        container["env"] = env
    if w.env:
        container["envFrom"] = [{"configMapRef": {"name": f"{w.name}-env"}}]
    if w.health:
        port = w.port_named(w.health.port)
        if port is not None:
            probe = {
                "httpGet": {"path": w.health.path, "port": port.name},
                "initialDelaySeconds": w.health.initial_delay_seconds,
                "periodSeconds": w.health.period_seconds,
            }
            container["readinessProbe"] = probe
            container["livenessProbe"] = json.loads(json.dumps(probe))
    return container


def workload_manifests(w: Workload, root: Path | None) -> list[dict[str, Any]]:
    """A workload's `manifests` (an operator's CRDs and RBAC, docs/reference-authoring.md#operators-and-crds):
    each entry is one object, or a path or glob relative to the project root whose YAML documents are
    taken as they are."""
    out: list[dict[str, Any]] = []
    for entry in w.manifests:
        docs: list[Any] = [entry]
        if isinstance(entry, str):
            import yaml  # only for manifest files: a deploy of workloads declaring none parses no YAML

            if root is None:
                raise RenderError(f"workload {w.name!r}: manifest file {entry!r} needs the project's root")
            base = root.resolve()
            files = sorted(p for p in base.glob(entry) if p.is_file()) if not Path(entry).is_absolute() else []
            if not files or any(base not in p.resolve().parents for p in files):
                raise RenderError(f"workload {w.name!r}: manifests {entry!r} matches no file inside the project",
                                  hint="a path or glob relative to the project root, e.g. "
                                       "deploy/operators/<name>/*/*.yaml")
            try:
                docs = [d for p in files for d in yaml.safe_load_all(p.read_text(encoding="utf-8")) if d is not None]
            except yaml.YAMLError as exc:
                raise RenderError(f"workload {w.name!r}: manifests {entry!r}: not YAML ({exc})") from None
        for doc in docs:
            meta = doc.get("metadata") if isinstance(doc, dict) else None
            if not (isinstance(meta, dict) and meta.get("name") and doc.get("apiVersion") and doc.get("kind")):
                raise RenderError(f"workload {w.name!r}: each manifest needs apiVersion, kind and metadata.name")
            out.append(doc)
    return out


def render_manifests(
    spec: EnvironmentSpec, *, project: str, namespace: str, image_tag: str, digests: dict[str, str],
    root: Path | None = None,
) -> list[tuple[str | None, dict[str, Any]]]:
    """(owning workload or None, manifest) pairs, in apply order."""
    ns = (spec.target.namespace if spec.target and spec.target.namespace else None) or namespace
    out: list[tuple[str | None, dict[str, Any]]] = [
        (
            None,
            {
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": ns, "labels": {LABEL_PART_OF: project, LABEL_ENV: spec.name}},
            },
        ),
    ]
    for w in spec.workloads:
        image = image_reference(w, image_tag, digests)
        if image is None:
            raise RenderError(
                f"workload {w.name!r} declares no image; a {spec.runtime} environment runs images",
                hint=f'set image = "<registry>/<repo>" on workload {w.name!r}',
            )
        labels = _labels(project, spec.name, w.name)
        out += [(w.name, m) for m in workload_manifests(w, root)]  # CRDs and RBAC before the pods needing them
        if w.env:
            out.append(
                (
                    w.name,
                    {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "metadata": _meta(f"{w.name}-env", ns, labels),
                        "data": dict(sorted(w.env.items())),
                    },
                )
            )
        out.append(
            (
                w.name,
                {
                    "apiVersion": "apps/v1",
                    "kind": "Deployment",
                    "metadata": _meta(w.name, ns, labels),
                    "spec": {
                        "replicas": w.replicas,
                        "selector": {"matchLabels": {LABEL_NAME: w.name}},
                        "template": {
                            "metadata": {"labels": labels},
                            "spec": {"containers": [_container(w, image)]},
                        },
                    },
                },
            )
        )
        if w.ports:
            out.append(
                (
                    w.name,
                    {
                        "apiVersion": "v1",
                        "kind": "Service",
                        "metadata": _meta(w.name, ns, labels),
                        "spec": {
                            "selector": {LABEL_NAME: w.name},
                            "ports": [
                                {"name": p.name, "port": p.port, "targetPort": p.name, "protocol": "TCP"}
                                for p in w.ports
                            ],
                        },
                    },
                )
            )
        if w.routes:
            out.append((w.name, _ingress(spec, w, ns, labels)))
    return out


def _ingress(spec: EnvironmentSpec, w: Workload, ns: str, labels: dict[str, str]) -> dict[str, Any]:
    if not w.ports:
        raise RenderError(f"workload {w.name!r} declares routes but no port to route to")
    hosts: dict[str, list[dict[str, Any]]] = {}
    for route in w.routes:
        port = w.port_named(route.port)
        if port is None:
            raise RenderError(
                f"workload {w.name!r}: route {route.host}{route.path} names unknown port {route.port!r}"
            )
        hosts.setdefault(route.host, []).append(
            {
                "path": route.path,
                "pathType": "Prefix",
                "backend": {"service": {"name": w.name, "port": {"name": port.name}}},
            }
        )
    body: dict[str, Any] = {"rules": [{"host": h, "http": {"paths": paths}} for h, paths in hosts.items()]}
    if spec.target and spec.target.ingress_class:
        body["ingressClassName"] = spec.target.ingress_class
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": _meta(w.name, ns, labels),
        "spec": body,
    }
