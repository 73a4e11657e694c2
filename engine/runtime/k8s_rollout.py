"""Rollout of a K8sCluster environment: apply, then wait per Deployment, StatefulSet, DaemonSet and
Job within the wait budget (docs/reference-k8s.md#env-deploy-env-version-on-a-k8scluster: phases `pending`,
`progressing`, `stabilizing`, `DEGRADED`, `SUPERSEDED`; outcome per resource `ready`, `failed`, `timed_out`,
`not_waited`).

A resource is `pending` until its controller observed the applied generation, `progressing` while
updated or available replicas are short (kubectl's own rollout-status rules), `stabilizing` once
complete and until it stayed so for the stability window (a resource the apply did not change and
that was already complete is ready at once), `DEGRADED` when a pod of it crash-loops, cannot pull
its image or start its container, its Deployment exceeded its progress deadline, or its Job failed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from engine.runtime.k8s import WORKLOAD_KINDS, Kube
from engine.runtime.process import Phase, Resource, RolloutEnd, RolloutOptions, verdict

POLL = 0.25
# container waiting reasons that do not heal by waiting
FATAL_WAITING = ("CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "InvalidImageName",
                 "CreateContainerConfigError", "CreateContainerError", "RunContainerError")
GET_KINDS = "deployments.apps,statefulsets.apps,daemonsets.apps,jobs.batch,pods"


def _selected_pods(obj: dict[str, Any], pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    sel = ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    ns = obj["metadata"].get("namespace")
    if not sel:
        return []
    return [
        p for p in pods
        if p["metadata"].get("namespace") == ns
        and all((p["metadata"].get("labels") or {}).get(k) == v for k, v in sel.items())
        and not p["metadata"].get("deletionTimestamp")
    ]


def pod_problem(pod: dict[str, Any], crash_limit: int) -> str | None:
    """Why a pod will not become ready by waiting (crash loop, image pull, config), or None."""
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        waiting = (cs.get("state") or {}).get("waiting") or {}
        reason = waiting.get("reason")
        if reason in FATAL_WAITING:
            msg = waiting.get("message") or ""
            return f"pod {pod['metadata']['name']}: {cs.get('name')} {reason}" + (f": {msg}" if msg else "")
        if int(cs.get("restartCount") or 0) >= crash_limit and not cs.get("ready"):
            return f"pod {pod['metadata']['name']}: {cs.get('name')} restarted {cs['restartCount']} times"
    if (pod.get("status") or {}).get("phase") == "Failed" and (pod.get("spec") or {}).get("restartPolicy") != "Never":
        return f"pod {pod['metadata']['name']} failed: {(pod.get('status') or {}).get('reason') or 'Failed'}"
    return None


def restarts_of(pods: list[dict[str, Any]]) -> int:
    return sum(int(cs.get("restartCount") or 0) for p in pods
               for cs in (p.get("status") or {}).get("containerStatuses") or [])


def classify(obj: dict[str, Any], pods: list[dict[str, Any]], crash_limit: int = 3) -> tuple[str, str, int, int]:
    """(state, message, ready replicas, desired replicas); state is pending, progressing, complete or
    DEGRADED."""
    kind, spec, status = obj["kind"], obj.get("spec") or {}, obj.get("status") or {}
    gen, observed = obj["metadata"].get("generation", 0), status.get("observedGeneration", 0)
    mine = _selected_pods(obj, pods)
    if kind == "Job":
        done, failed = int(status.get("succeeded") or 0), int(status.get("failed") or 0)
        want = int(spec.get("completions") or 1)
        for c in status.get("conditions") or []:
            if c.get("type") == "Failed" and c.get("status") == "True":
                return "DEGRADED", f"job failed: {c.get('reason') or ''} {c.get('message') or ''}".strip(), done, want
            if c.get("type") == "Complete" and c.get("status") == "True":
                return "complete", "job complete", done, want
        problem = next((p for p in map(lambda p: pod_problem(p, crash_limit), mine) if p), None)
        if problem:
            return "DEGRADED", problem, done, want
        return ("progressing" if (status.get("active") or failed or done) else "pending"), \
            f"{done}/{want} completions", done, want
    if kind == "DaemonSet":
        want = int(status.get("desiredNumberScheduled") or 0)
        updated, avail = int(status.get("updatedNumberScheduled") or 0), int(status.get("numberAvailable") or 0)
    else:
        want = int(spec.get("replicas", 1) if spec.get("replicas") is not None else 1)
        updated = int(status.get("updatedReplicas") or 0)
        avail = int(status.get("availableReplicas" if kind == "Deployment" else "readyReplicas") or 0)
    ready = int(status.get("readyReplicas" if kind != "DaemonSet" else "numberReady") or 0)
    if kind == "Deployment":
        for c in status.get("conditions") or []:
            if c.get("type") == "Progressing" and c.get("reason") == "ProgressDeadlineExceeded":
                return "DEGRADED", f"progress deadline exceeded: {c.get('message') or ''}".strip(), ready, want
    if observed < gen:
        return "pending", "waiting for the controller to observe the new generation", ready, want
    # only the current revision's pods count against it (a crash of an old pod is not this rollout's)
    current = _current_pods(obj, mine)
    problem = next((p for p in (pod_problem(p, crash_limit) for p in current) if p), None)
    if problem:
        return "DEGRADED", problem, ready, want
    total = int(status.get("replicas" if kind != "DaemonSet" else "currentNumberScheduled") or 0)
    if updated < want:
        return "progressing", f"{updated} of {want} updated replicas", ready, want
    if kind == "Deployment" and total > updated:
        return "progressing", f"{total - updated} old replicas pending termination", ready, want
    if avail < updated:
        return "progressing", f"{avail} of {updated} updated replicas available", ready, want
    update_rev = status.get("updateRevision")
    if kind == "StatefulSet" and update_rev and status.get("currentRevision") != update_rev:
        return "progressing", "waiting for the partitioned roll out to finish", ready, want
    return "complete", f"{ready}/{want} ready", ready, want


def _current_pods(obj: dict[str, Any], pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Pods of the object's current revision: a Deployment's newest ReplicaSet hash (its pods carry
    `pod-template-hash`), a StatefulSet's update revision; other kinds: every selected pod."""
    kind = obj["kind"]
    if kind == "StatefulSet":
        rev = (obj.get("status") or {}).get("updateRevision")
        return [p for p in pods
                if not rev or (p["metadata"].get("labels") or {}).get("controller-revision-hash") == rev]
    if kind == "Deployment":
        revs = [p for p in pods if (p["metadata"].get("labels") or {}).get("pod-template-hash")]
        if not revs:
            return pods
        newest = max(revs, key=lambda p: p["metadata"].get("creationTimestamp") or "")
        h = newest["metadata"]["labels"]["pod-template-hash"]
        return [p for p in pods if (p["metadata"].get("labels") or {}).get("pod-template-hash") == h]
    return pods


def workload_objects(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [o for o in objects if o.get("kind") in WORKLOAD_KINDS]


def resource_name(obj: dict[str, Any]) -> str:
    """A rollout resource is named by its workload (the `app.kubernetes.io/name` label the render
    sets) when it has one, else by kind/name (chart objects)."""
    labels = obj["metadata"].get("labels") or {}
    return labels.get("app.kubernetes.io/name") or f"{obj['kind']}/{obj['metadata']['name']}"


def wait_rollout(
    kube: Kube,
    namespace: str,
    declared: list[dict[str, Any]],
    applied: list[dict[str, Any]],
    options: RolloutOptions,
    *,
    on_phase: Callable[[str, Phase], None] | None = None,
    superseded: Callable[[], bool] | None = None,
) -> tuple[RolloutEnd, list[Resource]]:
    """Wait until every declared workload object is ready, one is DEGRADED, a newer promotion
    landed (SUPERSEDED) or the budget expired (`timed_out`). `applied` holds the objects as the
    apply answered: one its controller had already observed and found complete (the apply changed
    nothing the controller acts on) is ready at once, with no stability window to sit out."""
    res = {(o["kind"], o["metadata"]["name"]): Resource(name=resource_name(o), kind=o["kind"]) for o in declared}
    if not options.wait:
        for r in res.values():
            r.phase, r.outcome = "pending", "not_waited"
        return "not_waited", list(res.values())
    deadline = time.monotonic() + options.timeout
    complete_since: dict[tuple[str, str], float] = {}

    def set_phase(key: tuple[str, str], phase: Phase) -> None:
        if res[key].phase != phase:
            res[key].phase = phase
            if on_phase:
                on_phase(res[key].name, phase)

    answered = {(o.get("kind", ""), (o.get("metadata") or {}).get("name", "")): o for o in applied}
    for key, r in res.items():
        obj = answered.get(key)
        state, message, ready, want = classify(obj, [], options.crash_limit) if obj else ("pending", "", 0, 0)
        if state == "complete":
            r.message, r.ready_replicas, r.replicas, r.outcome = message, ready, want, "ready"
            set_phase(key, "ready")
        elif on_phase:
            on_phase(r.name, "pending")
    while any(r.outcome != "ready" for r in res.values()):
        if superseded is not None and superseded():
            for key, r in res.items():
                if r.outcome not in ("ready", "failed"):
                    r.outcome = "not_waited"
                    set_phase(key, "SUPERSEDED")
            return "SUPERSEDED", list(res.values())
        items = kube.get(GET_KINDS, namespace)
        live = {(o["kind"], o["metadata"]["name"]): o for o in items if o["kind"] in WORKLOAD_KINDS}
        pods = [o for o in items if o["kind"] == "Pod"]
        now = time.monotonic()
        for key, r in res.items():
            if r.outcome in ("ready", "failed"):
                continue
            obj = live.get(key)
            if obj is None:
                r.message = "not found in the cluster yet"
                continue
            state, message, ready, want = classify(obj, pods, options.crash_limit)
            r.message, r.ready_replicas, r.replicas = message, ready, want
            r.restarts = restarts_of(_selected_pods(obj, pods))
            r.instances = [{"pod": p["metadata"]["name"], "phase": (p.get("status") or {}).get("phase")}
                           for p in _selected_pods(obj, pods)]
            if state == "DEGRADED":
                r.outcome = "failed"
                set_phase(key, "DEGRADED")
            elif state == "complete":
                since = complete_since.setdefault(key, now)
                if now - since >= options.stability_window:
                    r.outcome = "ready"
                    set_phase(key, "ready")
                else:
                    set_phase(key, "stabilizing")
            else:
                complete_since.pop(key, None)
                set_phase(key, "progressing" if state == "progressing" else "pending")
        end = verdict(list(res.values()), deadline)
        if end is not None:
            return end, list(res.values())
        time.sleep(POLL)
    return "ready", list(res.values())

