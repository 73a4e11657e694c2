"""`env status` of a K8sCluster environment, read from the live cluster
(docs/reference-k8s.md#env-status-env): per image the digests its pods run against the promotion's frozen
one (verify state `match`, `drift`, `missing`, `untagged`, `unreachable`), per workload the rollout phase
and ready replicas, the environment's health, and the tail of the namespace's events (the dashboard's
Rollouts view shows it where a process environment shows its log tail).
"""

from __future__ import annotations

from typing import Any

from engine.environments.model import EnvironmentSpec
from engine.errors import EngineError
from engine.project import Project
from engine.runtime.k8s import WORKLOAD_KINDS, Kube, check_k8s
from engine.runtime.k8s_rollout import GET_KINDS, _selected_pods, classify, resource_name

EVENT_LINES = 12


def namespace_of(project: Project, env: str, spec: EnvironmentSpec, ledger: Any = None) -> str:
    """The namespace the environment runs in: the one its latest apply recorded (`env deploy
    --namespace` overrides the target's) when a ledger is given, else the target's, else the derived
    one."""
    from engine.environments.derived import dns_label

    recorded = ledger.applied_namespace(env) if ledger is not None else None
    if recorded:
        return str(recorded)
    if spec.target is not None and spec.target.namespace:
        return spec.target.namespace
    return dns_label(f"{project.key}-{env}")


def running_digest(pod: dict[str, Any], container: str | None) -> str | None:
    """The digest a pod's container runs: its status imageID when the kubelet reports one, else the
    digest its spec pins; None when it runs a tag only (untagged)."""
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    for cs in statuses:
        if container is None or cs.get("name") == container:
            image_id = cs.get("imageID") or ""
            if "@sha256:" in image_id:
                return image_id.rsplit("@", 1)[1]
    for c in (pod.get("spec") or {}).get("containers") or []:
        if container is None or c.get("name") == container:
            image = c.get("image") or ""
            return image.rsplit("@", 1)[1] if "@" in image else None
    return None


def verify_state(expected: str, digests: list[str | None]) -> str:
    if not digests:
        return "missing"
    if any(d is None for d in digests):
        return "untagged"
    return "match" if all(d == expected for d in digests) else "drift"


def event_lines(events: list[dict[str, Any]], names: set[str] | None = None, lines: int = EVENT_LINES) -> list[str]:
    """The newest events (of objects whose name starts with one of `names`), oldest first."""
    def when(e: dict[str, Any]) -> str:
        return e.get("lastTimestamp") or e.get("eventTime") or (e.get("metadata") or {}).get("creationTimestamp") or ""

    picked = [e for e in events if names is None
              or any((e.get("involvedObject") or {}).get("name", "").startswith(n) for n in names)]
    out = []
    for e in sorted(picked, key=when)[-lines:]:
        obj = e.get("involvedObject") or {}
        out.append(f"{when(e)} {e.get('type', '')} {obj.get('kind', '')}/{obj.get('name', '')} "
                   f"{e.get('reason', '')}: {e.get('message', '')}".strip())
    return out


def observe_cluster(kube: Kube, namespace: str, images: dict[str, Any], crash_limit: int = 3) -> dict[str, Any]:
    """{"images": [...], "workloads": [...], "healthy": bool, "wrong": bool} from one read of the
    namespace's workload objects and pods."""
    items = kube.get(GET_KINDS, namespace)
    objs = {resource_name(o): o for o in items if o["kind"] in WORKLOAD_KINDS}
    pods = [o for o in items if o["kind"] == "Pod"]
    out_images, out_workloads, healthy_all, wrong = [], [], True, False
    for name, img in sorted(images.items()):
        obj = objs.get(name)
        mine = _selected_pods(obj, pods) if obj else []
        digests = [running_digest(p, name) for p in mine]
        state = verify_state(img.get("digest", ""), digests)
        running = sorted({d for d in digests if d})
        out_images.append({"name": name, "expected_digest": img.get("digest"),
                           "running_digest": running[0] if len(running) == 1 else (running or None),
                           "state": state, "instances": [{"pod": p["metadata"]["name"]} for p in mine]})
        wrong |= state != "match"
        if obj is None:
            out_workloads.append({"name": name, "phase": "missing", "healthy": False, "checks": ["not in the cluster"]})
            healthy_all = False
            continue
        kind_state, message, ready, want = classify(obj, pods, crash_limit)
        healthy = kind_state == "complete"
        healthy_all &= healthy
        phase = {"complete": "ready", "DEGRADED": "DEGRADED"}.get(kind_state, kind_state)
        out_workloads.append({"name": name, "kind": obj["kind"], "phase": phase, "healthy": healthy,
                              "ready_replicas": ready, "replicas": want, "checks": [message]})
    return {"images": out_images, "workloads": out_workloads, "healthy": healthy_all, "wrong": wrong}


def k8s_observation(spec: EnvironmentSpec, namespace: str, images: dict[str, Any]) -> dict[str, Any]:
    """observe_cluster on the declared context; unreachable (or context missing) -> {"error": ...}."""
    assert spec.target is not None
    try:
        kube = check_k8s(spec.target)
        kube.timeout = 20.0
        return observe_cluster(kube, namespace, images)
    except EngineError as exc:
        return {"error": exc.message}


def live_view(spec: EnvironmentSpec, namespace: str,
              images: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(observation, the namespace's events) for the dashboard's Rollouts view: one cluster read each."""
    assert spec.target is not None
    try:
        kube = check_k8s(spec.target)
        kube.timeout = 20.0
        return observe_cluster(kube, namespace, images), kube.get("events", namespace)
    except EngineError as exc:
        return {"error": exc.message}, []
