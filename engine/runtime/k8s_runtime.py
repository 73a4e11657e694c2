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
from engine.runtime.k8s import Kube, PendingApply, applyset_name, check_k8s, split_namespaces
from engine.runtime.k8s_rollout import resource_name, wait_rollout, workload_objects
from engine.runtime.process import Phase, Resource, RolloutEnd, RolloutOptions, Writing, unguarded


def oci_digests(images: dict[str, Any]) -> dict[str, str]:
    """The frozen per-image digests a render pins (`image@digest`)."""
    return {n: i["digest"] for n, i in images.items() if i.get("kind") == "oci" and i.get("digest")}


def render_release(project: Project, env: str, images: dict[str, Any], namespace: str | None = None
                   ) -> tuple[str, list[dict[str, Any]]]:
    """(namespace, manifests in apply order) of `env` with the release's digests pinned, in `namespace`
    when given (`env deploy --namespace`); each manifest carries its owning workload (or None) under
    the `__workload__` key, which K8sRuntime strips."""
    from engine.environments.render.pipeline import render_environment

    rendered = render_environment(project, env, image_digests=oci_digests(images), fail_on_write=True,
                                  namespace=namespace)
    namespaces = [o.name for o in rendered.objects if o.kind == "Namespace"]
    namespace = namespaces[0] if namespaces else rendered.derived["namespace"]
    return namespace, [dict(o.document, **{"__workload__": o.workload}) for o in rendered.objects]


class K8sRuntime:
    def __init__(self, kube: Kube, env: str, namespace: str, manifests: list[dict[str, Any]], *,
                 targets: list[str] | None = None, pending: PendingApply | None = None) -> None:
        self.kube, self.env, self.namespace, self.pending = kube, env, namespace, pending
        selected = [m for m in manifests if not targets or m.get("__workload__") in targets
                    or (m.get("kind") == "Namespace")]
        self.manifests = [{k: v for k, v in m.items() if k != "__workload__"} for m in selected]
        self.prune = not targets  # a partial apply never prunes what it did not select

    @classmethod
    def for_deploy(cls, project: Project, env: str, spec: EnvironmentSpec, images: dict[str, Any],
                   targets: list[str], pending: PendingApply | None = None) -> K8sRuntime:
        """The runtime of one deploy; `pending` is the kubectl apply the deploy started early
        (engine/deploy/deploy.py), used when it was started for this namespace and prune set."""
        assert spec.target is not None
        if pending is not None and pending.prepared is not None and pending.prepared[0] == (images, targets):
            runtime: K8sRuntime = pending.prepared[1]  # rendered for these images when it was preloaded
            return runtime
        kube = pending.kube if pending is not None else check_k8s(spec.target)
        namespace, manifests = render_release(project, env, images, spec.target.namespace)
        return cls(kube, env, namespace, manifests, targets=targets, pending=pending)

    def preload(self, pending: PendingApply, images: dict[str, Any]) -> PendingApply:
        """Write this apply's objects to the kubectl started early for it, not yet cleared (PendingApply);
        the deploy's apply of the same images then reuses this render. The kubectl to use from now on:
        one started with a stored stream other than these objects (engine/runtime/k8s_early.py) is
        ended, its input still open, and a fresh one is given them."""
        _, rest, prune_set = self._apply_set()
        if rest and pending.matches(prune_set=prune_set, namespace=self.namespace):
            if not pending.preload(rest):
                pending.cancel()
                pending = self.kube.start_apply(prune_set=prune_set, namespace=self.namespace)
                pending.preload(rest)
            pending.prepared = ((images, [] if self.prune else None), self)
            self.pending = pending
        return pending

    def _apply_set(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str | None]:
        """(namespaces, the other objects, the ApplySet pruning them or None)."""
        namespaces, rest = split_namespaces(self.manifests)
        return namespaces, rest, applyset_name(self.env) if self.prune else None

    @property
    def names(self) -> list[str]:
        return [resource_name(o) for o in workload_objects(self.manifests)]

    def _apply(self, pending: PendingApply | None, namespaces: list[dict[str, Any]], rest: list[dict[str, Any]],
               prune_set: str | None, meanwhile: Callable[[], None] | None) -> list[dict[str, Any]]:
        """kubectl applies the objects (the early one when given); the objects as it answered."""
        try:
            if rest:
                pending = pending or self.kube.start_apply(prune_set=prune_set, namespace=self.namespace)
                pending.send(rest)
            if meanwhile is not None:
                try:
                    meanwhile()
                except Exception:  # noqa: BLE001 - done again after the apply, where its error surfaces
                    pass
            return pending.result() if pending is not None else []
        except EngineError as exc:
            if "not found" not in exc.message or "namespaces" not in exc.message:
                raise
            # the first deploy: create the namespaces (never pruned), then the objects
            self.kube.apply(namespaces, prune_set=None, namespace=self.namespace)
            return self.kube.apply(rest, prune_set=prune_set, namespace=self.namespace)

    def rollout(
        self,
        options: RolloutOptions,
        *,
        on_phase: Callable[[str, Phase], None] | None = None,
        superseded: Callable[[], bool] | None = None,
        meanwhile: Callable[[], None] | None = None,
        writing: Writing = unguarded,
    ) -> tuple[RolloutEnd, list[Resource]]:
        """Apply, then wait. `meanwhile` runs while kubectl applies (work the deploy needs after the
        apply whatever its outcome, with no effect of its own: reading the declared shape). The apply,
        to its answer, is one write (`writing`): superseded before it, kubectl ends having applied nothing."""
        namespaces, rest, prune_set = self._apply_set()
        declared = workload_objects(rest)
        pending, self.pending = self.pending, None
        if pending is not None and (not rest or not pending.matches(prune_set=prune_set, namespace=self.namespace,
                                                                     manifests=rest)):
            pending.cancel()
            pending = None
        try:
            with writing() as ok:
                if not ok:
                    return "SUPERSEDED", [Resource(name=resource_name(o), kind=o["kind"], phase="SUPERSEDED",
                                                   outcome="not_waited") for o in declared]
                applied = self._apply(pending, namespaces, rest, prune_set, meanwhile)
                pending = None
        finally:
            if pending is not None:  # not sent: kubectl ends with its input open, having applied nothing
                pending.cancel()
        return wait_rollout(self.kube, self.namespace, declared, applied, options,
                            on_phase=on_phase, superseded=superseded)
