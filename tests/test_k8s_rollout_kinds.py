"""The k8s runtime's rollout wait for every workload kind it waits on
(docs/reference-k8s.md#env-deploy-env-version-on-a-k8scluster: wait rollouts; rollout outcome per
resource), against the real API server: a StatefulSet, a DaemonSet
and a Job roll out `ready`; a Job whose pod crash-loops is `failed` (DEGRADED); `--no-wait` records
`not_waited`. The environment's render makes Deployments (tests/test_k8s_deploy.py); charts can
bring the other kinds, applied here as the runtime applies any rendered object."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from engine.runtime.k8s import Kube  # noqa: E402
from engine.runtime.k8s_runtime import K8sRuntime  # noqa: E402
from engine.runtime.process import RolloutOptions  # noqa: E402


def _pod(image: str, labels: dict[str, str], restart: str = "Always") -> dict[str, Any]:
    return {"metadata": {"labels": labels},
            "spec": {"restartPolicy": restart, "containers": [{"name": "main", "image": image}]}}


def _objects(ns: str, job_image: str) -> list[dict[str, Any]]:
    img = "registry.example.test/kinds/app@sha256:" + "a" * 64
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db", "namespace": ns},
         "spec": {"serviceName": "db", "replicas": 2, "selector": {"matchLabels": {"app": "db"}},
                  "template": _pod(img, {"app": "db"})}},
        {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": ns},
         "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": _pod(img, {"app": "agent"})}},
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "migrate", "namespace": ns},
         "spec": {"backoffLimit": 0, "template": _pod(job_image, {"app": "migrate"}, restart="Never")}},
    ]


@pytest.fixture(name="kube")
def kube_fixture(k8s, monkeypatch: pytest.MonkeyPatch) -> Kube:  # type: ignore[no-untyped-def]
    for key, value in k8s.env().items():
        monkeypatch.setenv(key, value)
    return Kube("k3d-demo")


def test_statefulset_daemonset_and_job_roll_out_ready(kube: Kube) -> None:
    """Wait rollouts: StatefulSet (all replicas ready at the update revision), DaemonSet (scheduled on
    every node, available) and Job (Complete) each end `ready`."""
    ns = f"k-{uuid.uuid4().hex[:8]}"
    runtime = K8sRuntime(kube, "kinds", ns, _objects(ns, "registry.example.test/kinds/job:1"))
    phase, resources = runtime.rollout(RolloutOptions(timeout=90, stability_window=0.2))
    by_kind = {r.kind: r for r in resources}
    assert phase == "ready", resources
    assert set(by_kind) == {"StatefulSet", "DaemonSet", "Job"}
    assert all(r.outcome == "ready" for r in resources)
    assert (by_kind["StatefulSet"].ready_replicas, by_kind["StatefulSet"].replicas) == (2, 2)
    assert by_kind["Job"].message == "job complete"


def test_crash_looping_job_is_failed_and_no_wait_is_not_waited(kube: Kube) -> None:
    """Rollout outcome per resource: a Job whose pod crash-loops is `failed` (the rollout DEGRADED);
    without waiting every resource is `not_waited`."""
    ns = f"k-{uuid.uuid4().hex[:8]}"
    runtime = K8sRuntime(kube, "kinds", ns, _objects(ns, "registry.example.test/kinds/crashloop:1"))
    phase, resources = runtime.rollout(RolloutOptions(timeout=90, stability_window=0.2))
    assert phase == "DEGRADED", resources
    job = next(r for r in resources if r.kind == "Job")
    assert job.outcome == "failed" and "CrashLoopBackOff" in job.message
    ns2 = f"k-{uuid.uuid4().hex[:8]}"
    phase, resources = K8sRuntime(kube, "kinds", ns2, _objects(ns2, "x/job:1")).rollout(RolloutOptions(wait=False))
    assert phase == "not_waited" and {r.outcome for r in resources} == {"not_waited"}
