"""The k8s runtime against a real API server (etcd + kube-apiserver + controllers + scheduler, KWOK
simulating the node): docs/reference-k8s.md#env-deploy-env-version-on-a-k8scluster (render, apply,
wait rollouts), the deploy rules on a cluster (compare-and-set, re-deploying the running release
appends nothing, preflight, the declared context only), the rollout outcomes per resource and the
deploy exit codes 0, 1, 6, 8,
and Status (verify state per image read from the live cluster)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import cli_fork
from deploy_fixtures import FRAMEWORK_BIN  # noqa: E402
from k8s_fixtures import API, WEB, digest, kdemo_fixture  # noqa: E402,F401

from tests.waiting import until


def images(kd, name: str) -> list[str]:  # type: ignore[no-untyped-def]
    dep = json.loads(kd.kubectl("get", "deployment", name, "-n", kd.ns, "-o", "json"))
    return [c["image"] for c in dep["spec"]["template"]["spec"]["containers"]]


def test_deploy_applies_server_side_and_waits_then_unchanged_redeploy_appends_nothing(kdemo):
    """Deploy targets: K8sCluster applies server-side (field manager `framework`) to the declared context
    and waits each Deployment's rollout: outcome `ready` per resource, exit 0. Re-deploying the running
    release (the environment transition `release equals current`): a redeploy appends nothing and still
    applies and waits. Status reads the live cluster: every image `match`; `--wait` reports
    it stayed up past the stability window."""
    kd = kdemo
    kd.release("v1", {"api": (API, digest("api-1")), "web": (WEB, digest("web-1"))})
    code, doc = kd.json("env", "deploy", "cluster", "v1", "--yes", "--timeout", "90")
    assert code == 0, doc
    assert doc["appended"] and doc["applied"] and doc["rollout"]["phase"] == "ready"
    res = {r["name"]: r for r in doc["rollout"]["resources"]}
    assert res["api"]["outcome"] == "ready" and res["api"]["kind"] == "Deployment"
    assert res["api"]["ready_replicas"] == 2 and res["web"]["ready_replicas"] == 1
    assert images(kd, "api") == [f"{API}@{digest('api-1')}"]
    dep = json.loads(kd.kubectl("get", "deployment", "api", "-n", kd.ns, "-o", "json", "--show-managed-fields"))
    assert "framework" in {m["manager"] for m in dep["metadata"]["managedFields"]}
    assert dep["metadata"]["labels"].get("applyset.kubernetes.io/part-of")
    code, again = kd.json("env", "deploy", "cluster", "v1", "--yes", "--timeout", "90")
    assert code == 0, again
    assert not again["appended"] and again["applied"] and again["rollout"]["phase"] == "ready"
    code, shown = kd.json("ledger", "show", "cluster")
    assert [p["release"] for p in shown["promotions"]] == ["v1"]
    code, st = kd.json("env", "status", "cluster")
    assert code == 0, st
    env = st["environments"][0]
    assert {i["name"]: i["state"] for i in env["images"]} == {"api": "match", "web": "match"}
    assert {w["name"]: w["phase"] for w in env["workloads"]} == {"api": "ready", "web": "ready"}
    assert env["health"] == "healthy"
    code, st = kd.json("env", "status", "cluster", "--wait", "--timeout", "60", "--stability-window", "0.5")
    assert code == 0 and st["environments"][0]["wait"]["outcome"] == "stayed_up", st


def test_image_change_rolls_out_a_new_promotion_and_removed_workload_is_pruned(kdemo):
    """Deploy: a changed image is a new promotion whose rollout replaces the pods (status `match` on
    the new digest); a workload removed from the KCL is a stop-class finding, and once acknowledged its
    objects are pruned by the deploy (ApplySet prune)."""
    kd = kdemo
    kd.release("v1", {"api": (API, digest("api-1")), "web": (WEB, digest("web-1"))})
    kd.release("v2", {"api": (API, digest("api-2")), "web": (WEB, digest("web-1"))})
    assert kd.json("env", "deploy", "cluster", "v1", "--yes", "--timeout", "90")[0] == 0
    code, doc = kd.json("env", "deploy", "cluster", "v2", "--yes", "--timeout", "90")
    assert code == 0, doc
    changes = {i["name"]: i["change"] for i in doc["deploy_plan"]["images"]}
    assert doc["appended"] and changes == {"api": "changed", "web": "unchanged"}
    assert images(kd, "api") == [f"{API}@{digest('api-2')}"]
    code, st = kd.json("env", "status", "cluster")
    assert code == 0 and st["environments"][0]["images"][0]["running_digest"] == digest("api-2")
    # the web workload leaves the KCL: its Deployment, Service, ConfigMap and Ingress are pruned
    text = kd.kcl().read_text()
    start = text.index("        framework.Workload {\n            name = \"web\"")
    kd.kcl().write_text(text[:start] + "    ]\n}\n")
    kd.release("v3", {"api": (API, digest("api-2"))})
    code, doc = kd.json("env", "deploy", "cluster", "v3", "--yes", "--timeout", "90")
    assert code == 1 and doc["error"]["code"] == "destructive_unacknowledged"  # removal is stop-class
    assert images(kd, "web")  # nothing pruned by the refused deploy
    code, doc = kd.json("env", "deploy", "cluster", "v3", "--yes", "--timeout", "90",
                        "--acknowledge-destructive", "workload_removed")
    assert code == 0, doc
    names = {(o["kind"], o["metadata"]["name"]) for o in kd.get("deployments,services,configmaps,ingresses")["items"]}
    assert ("Deployment", "api") in names and ("Service", "api") in names
    assert not {n for n in names if n[1].startswith("web")}, names


def test_never_ready_pod_times_out_with_exit_8(kdemo):
    """Exit 8: the wait budget expired while the rollout was progressing; the resource's outcome is
    `timed_out` (its pods run but never become ready)."""
    kd = kdemo
    kd.edit_kcl(f'image = "{API}"', 'image = "registry.example.test/demo/never-ready"')
    kd.release("v1", {"api": ("registry.example.test/demo/never-ready", digest("nr")),
                      "web": (WEB, digest("web-1"))})
    code, doc = kd.json("env", "deploy", "cluster", "v1", "--yes", "--timeout", "10")
    assert code == 8, doc
    assert doc["error"]["code"] == "wait_timed_out" and doc["rollout"]["phase"] == "timed_out"
    res = {r["name"]: r for r in doc["rollout"]["resources"]}
    assert res["api"]["outcome"] == "timed_out" and res["api"]["phase"] == "progressing"
    assert res["web"]["outcome"] == "ready"
    code, shown = kd.json("ledger", "show", "cluster")
    assert shown["applies"][0]["outcome"] == "timed_out"


def test_crash_looping_pod_is_degraded_exit_1(kdemo):
    """Exit 1 DEGRADED: a crash-looping container fails the rollout fast (outcome `failed`), without
    waiting out the budget (a rollout that waited it out ends `timed_out` with exit 8, not `failed` with exit 1:
    the outcome is the proof, no clock); env status reports the workload DEGRADED and exits 1."""
    kd = kdemo
    kd.edit_kcl(f'image = "{API}"', 'image = "registry.example.test/demo/crashloop"')
    kd.release("v1", {"api": ("registry.example.test/demo/crashloop", digest("cl")),
                      "web": (WEB, digest("web-1"))})
    code, doc = kd.json("env", "deploy", "cluster", "v1", "--yes", "--timeout", "120")
    assert code == 1, doc
    assert doc["error"]["code"] == "degraded" and doc["rollout"]["phase"] == "DEGRADED"
    res = {r["name"]: r for r in doc["rollout"]["resources"]}
    assert res["api"]["outcome"] == "failed" and "CrashLoopBackOff" in res["api"]["message"]
    code, st = kd.json("env", "status", "cluster")
    assert code == 1
    assert {w["name"]: w["phase"] for w in st["environments"][0]["workloads"]}["api"] == "DEGRADED"


def test_missing_context_is_refused_and_nothing_is_written(kdemo):
    """The declared context only: applies target exactly the declared context, no override; a context missing from the
    kubeconfig fails clearly, and no promotion, apply or object is written."""
    kd = kdemo
    kd.edit_kcl('context = "k3d-demo"', 'context = "k3d-absent"')
    kd.release("v1", {"api": (API, digest("api-1")), "web": (WEB, digest("web-1"))})
    code, doc = kd.json("env", "deploy", "cluster", "v1", "--yes")
    assert code == 1 and doc["error"]["code"] == "runtime_unavailable"
    assert "k3d-absent" in doc["error"]["message"] and "k3d-demo" in doc["error"]["hint"]
    code, shown = kd.json("ledger", "show", "cluster")
    assert shown["promotions"] == [] and shown["applies"] == []
    out = kd.kubectl("get", "namespace", "-o", "name")
    assert f"namespace/{kd.ns}" not in out


def test_preflight_names_the_missing_secret_key_on_a_remote_cluster(kdemo):
    """Preflight: before the first apply, a remote cluster must hold every secret key the objects reference
    and every image must resolve; it runs under --dry-run, names the object and the key, and
    --skip-preflight bypasses it."""
    kd = kdemo
    kd.edit_kcl('context = "k3d-demo"', 'context = "remote-demo"')
    kd.edit_kcl("secrets = []", 'secrets = ["DATABASE_URL"]')
    kd.kubectl("create", "namespace", kd.ns)
    kd.kubectl("create", "secret", "generic", "api-secrets", "-n", kd.ns, "--from-literal=OTHER=x")
    kd.release("v1", {"api": (API, digest("api-1")), "web": (WEB, digest("web-1"))})
    code, doc = kd.json("env", "deploy", "cluster", "v1", "--dry-run")
    assert code == 1 and doc["error"]["code"] == "preflight_failed", doc
    findings = doc["preflight"]["findings"]
    secret = [f for f in findings if f["kind"] == "secret"]
    assert secret == [{"object": "Deployment/api", "kind": "secret", "secret": "api-secrets", "key": "DATABASE_URL",
                       "message": f"Secret {kd.ns}/api-secrets has no key DATABASE_URL"}]
    assert {f["object"] for f in findings if f["kind"] == "image"} == {"Deployment/api", "Deployment/web"}
    assert "Deployment/api" in doc["error"]["message"]
    code, doc = kd.json("env", "deploy", "cluster", "v1", "--dry-run", "--skip-preflight")
    assert code == 0 and doc["preflight"] is None, doc
    code, shown = kd.json("ledger", "show", "cluster")
    assert shown["promotions"] == []


def test_supersede_of_an_in_flight_rollout_exits_6(kdemo):
    """Exit 6: a newer promotion (--supersede) replaces a rollout still waiting; the replaced deploy
    ends SUPERSEDED, the new one rolls out ready."""
    kd = kdemo
    kd.edit_kcl(f'image = "{API}"', 'image = "registry.example.test/demo/never-ready"')
    kd.release("v1", {"api": ("registry.example.test/demo/never-ready", digest("nr")),
                      "web": (WEB, digest("web-1"))})
    first = cli_fork.popen([FRAMEWORK_BIN, "env", "deploy", "cluster", "v1", "--yes", "--json", "--timeout", "120"],
                             cwd=kd.root, env=kd.demo.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        def in_flight() -> bool:  # applied and waiting (not merely recorded: kubectl may not have applied yet)
            shown = kd.json("ledger", "show", "cluster")[1]
            first_apply = shown["applies"][0] if shown["applies"] else None
            return (first_apply is not None and first_apply["finished_at"] is None
                    and any(r.get("phase") == "progressing" for r in first_apply["resources"]))
        until(in_flight, timeout=60, what="the first rollout applied and waiting")
        kd.edit_kcl('image = "registry.example.test/demo/never-ready"', f'image = "{API}"')
        kd.release("v2", {"api": (API, digest("api-2")), "web": (WEB, digest("web-1"))})
        code, doc = kd.json("env", "deploy", "cluster", "v2", "--yes")
        assert code == 4 and doc["error"]["code"] == "rollout_in_flight", (doc, first.poll())
        code, doc = kd.json("env", "deploy", "cluster", "v2", "--yes", "--supersede", "--timeout", "90")
        assert code == 0, doc
        out, err = first.communicate(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 6, (out, err)
    assert json.loads(out)["error"]["code"] == "superseded"


def test_status_reports_drift_after_a_hand_edit(kdemo):
    """Status: the digest the pods run against the promotion's frozen one; someone editing the
    Deployment's image by hand is `drift` (exit 1), a tag-only image `untagged`, a deleted Deployment
    `missing`; the next deploy
    takes the field back (server-side apply, --force-conflicts) and status is `match` again."""
    kd = kdemo
    kd.release("v1", {"api": (API, digest("api-1")), "web": (WEB, digest("web-1"))})
    assert kd.json("env", "deploy", "cluster", "v1", "--yes", "--timeout", "90")[0] == 0
    kd.kubectl("set", "image", "deployment/api", f"api={API}@{digest('hand')}", "-n", kd.ns)

    def state() -> str | None:
        code, st = kd.json("env", "status", "cluster")
        states = {i["name"]: i["state"] for i in st["environments"][0]["images"]}
        return states["api"] if code == 1 and states["web"] == "match" and states["api"] == "drift" else None

    assert until(state, timeout=60, what="drift") == "drift"
    kd.kubectl("set", "image", "deployment/web", f"web={WEB}:latest", "-n", kd.ns)

    def untagged() -> bool:
        st = kd.json("env", "status", "cluster")[1]
        return {i["name"]: i["state"] for i in st["environments"][0]["images"]}["web"] == "untagged"

    until(untagged, timeout=60, what="untagged")
    kd.kubectl("delete", "deployment", "web", "-n", kd.ns, "--wait=true")
    code, st = kd.json("env", "status", "cluster")
    env = st["environments"][0]
    assert code == 1 and {i["name"]: i["state"] for i in env["images"]}["web"] == "missing"
    assert {w["name"]: w["phase"] for w in env["workloads"]}["web"] == "missing" and env["health"] == "unhealthy"
    code, doc = kd.json("env", "deploy", "cluster", "v1", "--yes", "--timeout", "90")
    assert code == 0 and not doc["appended"], doc
    code, st = kd.json("env", "status", "cluster")
    assert code == 0 and {i["state"] for i in st["environments"][0]["images"]} == {"match"}


def test_confirmation_compare_and_set_gates_and_partial_apply_are_the_engines_own(kdemo):
    """One deploy engine, two runtimes: on a K8sCluster, no terminal and no --yes exits 5 having written
    nothing (no terminal, no --yes: exit 5); a stale --expect-current exits 3 (compare-and-set); --gate
    freezes evidence onto the promotion; --no-wait records `not_waited`; `--target <app>` applies that
    workload's objects only and prunes nothing."""
    kd = kdemo
    kd.release("v1", {"api": (API, digest("api-1")), "web": (WEB, digest("web-1"))})
    code, doc = kd.json("env", "deploy", "cluster", "v1", "--explain")
    assert code == 0 and any("context 'k3d-demo'" in step for step in doc["explain"]), doc
    code, doc = kd.json("env", "deploy", "cluster", "v1")
    assert code == 5 and doc["error"]["code"] == "plan_unconfirmed"
    assert f"namespace/{kd.ns}" not in kd.kubectl("get", "namespace", "-o", "name")
    code, doc = kd.json("env", "deploy", "cluster", "v1", "--yes", "--expect-current", "prm_stale")
    assert code == 3 and doc["error"]["code"] == "promotion_conflict"
    gate = kd.root.parent / "gate.json"
    gate.write_text(json.dumps({"name": "smoke", "status": "passed", "summary": "ok", "run_id": "ci.1"}))
    code, doc = kd.json("env", "deploy", "cluster", "v1", "--yes", "--no-wait", "--gate", str(gate))
    assert code == 0 and doc["rollout"]["phase"] == "not_waited", doc
    assert {r["outcome"] for r in doc["rollout"]["resources"]} == {"not_waited"}
    assert [g["name"] for g in doc["promotion"]["gates"]] == ["smoke"]
    kd.release("v2", {"api": (API, digest("api-2")), "web": (WEB, digest("web-2"))})
    code, doc = kd.json("env", "deploy", "cluster", "v2", "--yes", "--target", "api", "--timeout", "90")
    assert code == 0 and [r["name"] for r in doc["rollout"]["resources"]] == ["api"], doc
    assert images(kd, "api") == [f"{API}@{digest('api-2')}"]
    assert images(kd, "web") == [f"{WEB}@{digest('web-1')}"]  # not selected: untouched, not pruned
    # docs/reference-deploy.md#--target-partial-deploys: the promotion says what it covered, and freezes
    # for web the digest that runs
    assert doc["promotion"]["targets"] == ["api"]
    assert doc["promotion"]["images"]["web"]["digest"] == digest("web-1")
