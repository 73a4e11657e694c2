"""The k8s runtime as the deploy engine calls it: the release's rendered objects, applied to the
declared context, then the rollout wait (engine/runtime/k8s_rollout.py).

The deploy engine (engine/deploy/apply.py) is one for both runtimes: it opens the apply, hands
each runtime `rollout(options, on_phase, superseded)`, and closes the apply with the outcome.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.environments.model import EnvironmentSpec
from engine.errors import EngineError
from engine.project import Project
from engine.runtime.k8s import Kube, applyset_name, check_k8s, split_namespaces
from engine.runtime.k8s_rollout import resource_name, wait_rollout, workload_objects
from engine.runtime.process import Phase, Resource, RolloutEnd, RolloutOptions


def oci_digests(images: dict[str, Any]) -> dict[str, str]:
    """The frozen per-image digests a render pins (`image@digest`)."""
    return {n: i["digest"] for n, i in images.items() if i.get("kind") == "oci" and i.get("digest")}


def render_release(project: Project, env: str, images: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """(namespace, manifests in apply order) of `env` with the release's digests pinned; each manifest
    carries its owning workload (or None) under the `__workload__` key, which K8sRuntime strips."""
    from engine.environments.render.pipeline import render_environment

    rendered = render_environment(project, env, image_digests=oci_digests(images), fail_on_write=True)
    namespaces = [o.name for o in rendered.objects if o.kind == "Namespace"]
    namespace = namespaces[0] if namespaces else rendered.derived["namespace"]
    return namespace, [dict(o.document, **{"__workload__": o.workload}) for o in rendered.objects]


class K8sRuntime:
    def __init__(self, kube: Kube, env: str, namespace: str, manifests: list[dict[str, Any]], *,
                 targets: list[str] | None = None) -> None:
        self.kube, self.env, self.namespace = kube, env, namespace
        selected = [m for m in manifests if not targets or m.get("__workload__") in targets
                    or (m.get("kind") == "Namespace")]
        self.manifests = [{k: v for k, v in m.items() if k != "__workload__"} for m in selected]
        self.prune = not targets  # a partial apply never prunes what it did not select

    @classmethod
    def for_deploy(cls, project: Project, env: str, spec: EnvironmentSpec, images: dict[str, Any],
                   targets: list[str]) -> K8sRuntime:
        assert spec.target is not None
        kube = check_k8s(spec.target)
        namespace, manifests = render_release(project, env, images)
        return cls(kube, env, namespace, manifests, targets=targets)

    @property
    def names(self) -> list[str]:
        return [resource_name(o) for o in workload_objects(self.manifests)]

    def rollout(
        self,
        options: RolloutOptions,
        *,
        on_phase: Callable[[str, Phase], None] | None = None,
        superseded: Callable[[], bool] | None = None,
    ) -> tuple[RolloutEnd, list[Resource]]:
        namespaces, rest = split_namespaces(self.manifests)
        declared = workload_objects(rest)
        prune_set = applyset_name(self.env) if self.prune else None
        try:
            applied = self.kube.apply(rest, prune_set=prune_set, namespace=self.namespace)
        except EngineError as exc:
            if "not found" not in exc.message or "namespaces" not in exc.message:
                raise
            # the first deploy: create the namespaces (never pruned), then the objects
            self.kube.apply(namespaces, prune_set=None, namespace=self.namespace)
            applied = self.kube.apply(rest, prune_set=prune_set, namespace=self.namespace)
        return wait_rollout(self.kube, self.namespace, declared, applied, options,
                            on_phase=on_phase, superseded=superseded)
