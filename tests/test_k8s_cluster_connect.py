"""`framework cluster connect|disconnect` against the real kube-apiserver of the k8s tests (tests/k8s_cluster.py)
and a real `platform server` as the control plane (docs/reference-cluster.md#cluster-connect-and-disconnect).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx
from k8s_cluster import BIN
from k8s_fixtures import API, WEB, digest, kdemo_fixture  # noqa: F401

from tests.hosted_fixtures import hosted_env, mint, plane, run_json, seed_org, server_factory, with_token  # noqa: F401
from tests.waiting import until


def _kubectl(kubeconfig: Path, context: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(BIN / "kubectl"), "--kubeconfig", str(kubeconfig), "--context", context, *args],
                          capture_output=True, text=True, timeout=60)


def test_connect_stores_a_working_deploy_credential_and_disconnect_revokes_it_first(kdemo, plane, tmp_path):  # type: ignore[no-untyped-def] # noqa: F811
    """docs/reference-cluster.md#cluster-connect-and-disconnect: connect creates a deploy service account on the
    cluster and stores its token on the control plane only (not in the checkout, never listed); the token
    deploys an environment; re-running connect updates the record; disconnect is refused while a live
    environment targets the cluster; then the control plane revokes the credential first (the token is
    refused, the account gone before the rest is deleted), what connect created is deleted, the record goes."""
    kd, srv = kdemo, plane
    seed_org(srv, "acme")
    org_token = mint(srv, "acme")
    hosted_env(kd.demo, srv.url, name="cloud")
    env = with_token(kd.demo, org_token)
    admin_kubeconfig = Path(kd.demo.env["KUBECONFIG"])

    code, doc = run_json(kd.demo, env, "cluster", "connect", "lab", "--context", "remote-demo", "--env", "cloud",
                         "--auth", "token")
    assert code == 0 and doc["updated"] is False and doc["credential"] == "stored", doc
    assert doc["service_account"] == "framework-lab" and doc["auth"] == "token"
    assert _kubectl(admin_kubeconfig, "remote-demo", "get", "serviceaccount", "framework-lab", "-n",
                    "framework-system").returncode == 0
    listed = httpx.get(f"{srv.url}/v1/clusters", headers={"Authorization": f"Bearer {org_token}"}, timeout=30).json()
    assert [c["name"] for c in listed["clusters"]] == ["lab"] and "token" not in listed["clusters"][0]
    config = httpx.get(f"{srv.url}/v1/clusters/lab/kubeconfig", headers={"Authorization": f"Bearer {org_token}"},
                       timeout=30).json()
    secret = config["users"][0]["user"]["token"]
    assert len(secret) > 100
    for path in kd.root.rglob("*"):  # the token lives on the control plane, never in the checkout
        if path.is_file() and ".git" not in path.parts:
            assert secret not in path.read_text(errors="replace"), path

    # the stored token deploys the cluster environment (a context that is the same server, seen as remote)
    sa_kubeconfig = tmp_path / "sa.kubeconfig"
    sa_kubeconfig.write_text(json.dumps(config))
    kd.edit_kcl('context = "k3d-demo"', 'context = "remote-demo"')
    kd.release("v1", {"api": (API, digest("api-1")), "web": (WEB, digest("web-1"))})
    code, deployed = run_json(kd.demo, {**env, "KUBECONFIG": str(sa_kubeconfig)}, "env", "deploy", "cluster", "v1",
                              "--yes", "--skip-preflight", "--timeout", "90", timeout=180)
    assert code == 0 and deployed["rollout"]["phase"] == "ready", deployed

    code, again = run_json(kd.demo, env, "cluster", "connect", "lab", "--context", "remote-demo", "--env", "cloud")
    assert code == 0 and again["updated"] is True

    code, refused = run_json(kd.demo, env, "cluster", "disconnect", "lab", "--env", "cloud")
    assert code == 1 and refused["error"]["code"] == "conflict", refused
    assert "environment 'cluster' is live on cluster 'lab'" in refused["error"]["message"]
    newest = httpx.get(f"{srv.url}/v1/clusters/lab/kubeconfig", headers={"Authorization": f"Bearer {org_token}"},
                       timeout=30).json()["users"][0]["user"]["token"]
    assert _kubectl(sa_kubeconfig, "remote-demo", "get", "deployments", "-n", kd.ns).returncode == 0

    kd.edit_kcl('context = "remote-demo"', 'context = "k3d-demo"')  # the environment no longer targets it
    code, gone = run_json(kd.demo, env, "cluster", "disconnect", "lab", "--env", "cloud")
    assert code == 0 and gone["revoked"] is True, gone
    # revoked first: the control plane deleted the account itself, so the deletes that followed did not
    assert "serviceaccount/framework-lab" not in gone["deleted"]
    assert {"clusterrole.rbac.authorization.k8s.io/framework-deploy-lab",
            "role.rbac.authorization.k8s.io/framework-revoke-lab"} <= set(gone["deleted"])
    sa_kubeconfig.write_text(json.dumps({**config, "users": [{"name": "framework-lab", "user": {"token": newest}}]}))
    assert _kubectl(admin_kubeconfig, "remote-demo", "get", "serviceaccount", "framework-lab", "-n",
                    "framework-system").returncode != 0

    def refused_token() -> bool:  # the API server caches a token's authentication for up to 10 s
        denied = _kubectl(sa_kubeconfig, "remote-demo", "get", "deployments", "-n", kd.ns)
        return denied.returncode != 0 and "Unauthorized" in denied.stderr + denied.stdout

    until(refused_token, 30, what="the revoked token to be refused (401)", interval=1.0)
    assert _kubectl(admin_kubeconfig, "remote-demo", "get", "clusterrole", "framework-deploy-lab").returncode != 0
    listed = httpx.get(f"{srv.url}/v1/clusters", headers={"Authorization": f"Bearer {org_token}"}, timeout=30).json()
    assert listed["clusters"] == []


def test_gcp_auth_is_refused_clearly_without_google_credentials(kdemo):  # type: ignore[no-untyped-def]
    """docs/reference-cluster.md#cluster-connect-and-disconnect: `--auth auto` picks gcp for a GKE context and
    `--auth gcp` is refused (exit 1, gcp_auth_unavailable, the token alternative named) before anything is
    created or any control plane is asked; this machine has no Google credentials, so gcp is tested only as
    far as its refusal."""
    kd = kdemo
    env = kd.demo.env
    for args in (("--context", "gke_acme_europe-west1_prod"), ("--context", "remote-demo", "--auth", "gcp")):
        code, doc = run_json(kd.demo, env, "cluster", "connect", "prod", *args, "--env", "cloud")
        assert code == 1 and doc["error"]["code"] == "gcp_auth_unavailable" and "--auth token" in doc["error"]["hint"]
    assert _kubectl(Path(kd.demo.env["KUBECONFIG"]), "remote-demo", "get", "serviceaccount", "framework-prod", "-n",
                    "framework-system").returncode != 0
    code, bad = run_json(kd.demo, env, "cluster", "connect", "prod", "--context", "remote-demo", "--env", "cloud",
                         "--auth", "password")
    assert code == 1 and "choose auto, gcp or token" in bad["error"]["message"]


