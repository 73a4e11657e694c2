"""`env deploy --namespace` against a real API server (docs/reference-k8s.md, `--namespace`): the
objects of a K8sCluster environment are rendered, applied, pruned (their ApplySet) and waited for in
the given namespace instead of the target's; the apply records it on the ledger, where `env status`
and `env secrets sync` read it. A name Kubernetes would refuse, or the flag on an environment that does not deploy to a
cluster from this machine, is refused (exit 1) before anything is written."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from k8s_fixtures import API, WEB, digest, kdemo_fixture  # noqa: E402,F401


def test_namespace_overrides_render_apply_wait_prune_and_status(kdemo):
    """Deploy flag `--namespace`: every object lands in the given namespace (none in the target's);
    the rollout waits there (outcome `ready`); the ApplySet parent lives there; the ledger's apply
    records it and `env status` reads the live cluster in it (every image `match`, exit 0); `env
    secrets sync` applies the Secrets there."""
    kd = kdemo
    other = f"t-{uuid.uuid4().hex[:10]}"
    kd.release("v1", {"api": (API, digest("api-1")), "web": (WEB, digest("web-1"))})
    code, doc = kd.json("env", "deploy", "cluster", "v1", "--yes", "--namespace", other, "--timeout", "90")
    assert code == 0, doc
    assert doc["rollout"]["phase"] == "ready"
    assert {r["outcome"] for r in doc["rollout"]["resources"]} == {"ready"}
    dep = json.loads(kd.kubectl("get", "deployment", "api", "-n", other, "-o", "json"))
    assert dep["spec"]["template"]["spec"]["containers"][0]["image"] == f"{API}@{digest('api-1')}"
    assert dep["metadata"]["labels"].get("applyset.kubernetes.io/part-of")
    assert json.loads(kd.kubectl("get", "secret", "framework-cluster", "-n", other, "-o", "json"))  # ApplySet parent
    assert kd.kubectl("get", "deployments", "-n", kd.ns, "-o", "name").strip() == ""  # none in the target's
    code, shown = kd.json("ledger", "show", "cluster")
    assert shown["applies"][0]["namespace"] == other
    code, st = kd.json("env", "status", "cluster")
    assert code == 0, st
    env = st["environments"][0]
    assert {i["name"]: i["state"] for i in env["images"]} == {"api": "match", "web": "match"}
    assert {w["name"]: w["phase"] for w in env["workloads"]} == {"api": "ready", "web": "ready"}
    # `env secrets sync` provisions the Secrets where the workloads run: the recorded namespace
    kd.edit_kcl("secrets = []", 'secrets = ["DATABASE_URL"]')
    (kd.root / "deploy" / "secrets").mkdir(parents=True)
    (kd.root / "deploy" / "secrets" / "cluster.env").write_text("DATABASE_URL=postgres://db/app\n")
    code, doc = kd.json("env", "secrets", "sync", "cluster")
    assert code == 0 and doc["namespace"] == other, doc
    assert json.loads(kd.kubectl("get", "secret", "api-secrets", "-n", other, "-o", "json"))["data"]["DATABASE_URL"]


def test_namespace_refused_when_not_a_name_or_not_a_cluster(kdemo):
    """Deploy flag `--namespace`: a name that is not a DNS label, or an environment that does not
    deploy to a Kubernetes cluster (a Process target), is refused with exit 1 and no promotion."""
    kd = kdemo
    kd.release("v1", {"api": (API, digest("api-1")), "web": (WEB, digest("web-1"))})
    code, doc = kd.json("env", "deploy", "cluster", "v1", "--yes", "--namespace", "Not_A_Name")
    assert code == 1 and doc["error"]["code"] == "invalid_input", doc
    assert "--namespace" in doc["error"]["message"]
    code, doc = kd.json("env", "deploy", "dev", "v1", "--yes", "--namespace", "somewhere")
    assert code == 1 and doc["error"]["code"] == "invalid_input", doc
    assert "Kubernetes" in doc["error"]["message"]
    code, shown = kd.json("ledger", "show", "cluster")
    assert shown["promotions"] == []
