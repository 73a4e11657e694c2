"""`framework env secrets sync <env>` against a real API server (docs/reference-k8s.md#env-secrets-sync-env:
renders and applies cluster secrets from a dotenv provider to local clusters only; no-op for external secret
providers), and Status exit 2 when the declared cluster cannot be reached."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from k8s_fixtures import API, WEB, digest, kdemo_fixture  # noqa: E402,F401

VALUE = "postgres://app:s3cr3t-value@db.internal/app"


def test_secrets_sync_applies_dotenv_values_to_a_local_cluster_and_never_prints_them(kdemo):
    """env secrets sync: the dotenv provider's values become the keys of `<workload>-secrets` (what the
    render's secretKeyRefs read) on a local (k3d-) cluster; the output names Secrets and keys, never a
    value; a declared key missing from the dotenv file applies nothing."""
    kd = kdemo
    kd.edit_kcl("secrets = []", 'secrets = ["DATABASE_URL"]')
    dotenv = kd.root / "deploy" / "secrets" / "cluster.env"
    dotenv.parent.mkdir(parents=True)
    dotenv.write_text("# cluster secrets\nOTHER=1\n")
    code, doc = kd.json("env", "secrets", "sync", "cluster")
    assert code == 1 and "api: DATABASE_URL" in doc["error"]["message"], doc
    assert f"namespace/{kd.ns}" not in kd.kubectl("get", "namespace", "-o", "name")
    dotenv.write_text(f'# cluster secrets\nexport DATABASE_URL="{VALUE}"\n')
    proc = kd.run("env", "secrets", "sync", "cluster")
    assert proc.returncode == 0, proc.stderr
    assert VALUE not in proc.stdout + proc.stderr and "s3cr3t" not in proc.stdout + proc.stderr
    assert f"Secret {kd.ns}/api-secrets: DATABASE_URL" in proc.stdout
    code, doc = kd.json("env", "secrets", "sync", "cluster")
    assert code == 0 and doc["secrets"] == [{"name": "api-secrets", "keys": ["DATABASE_URL"]}]
    assert VALUE not in json.dumps(doc)
    secret = json.loads(kd.kubectl("get", "secret", "api-secrets", "-n", kd.ns, "-o", "json"))
    assert base64.b64decode(secret["data"]["DATABASE_URL"]).decode() == VALUE


def test_secrets_sync_is_refused_for_remote_clusters_and_a_no_op_for_external_providers(kdemo):
    """env secrets sync: local clusters only (a remote context is refused, exit 1, nothing applied);
    an external secret provider is a no-op with a message (exit 0)."""
    kd = kdemo
    kd.edit_kcl("secrets = []", 'secrets = ["DATABASE_URL"]')
    (kd.root / "deploy" / "secrets").mkdir(parents=True)
    (kd.root / "deploy" / "secrets" / "cluster.env").write_text(f"DATABASE_URL={VALUE}\n")
    kd.edit_kcl('context = "k3d-demo"', 'context = "remote-demo"')
    code, doc = kd.json("env", "secrets", "sync", "cluster")
    assert code == 1 and "local clusters only" in doc["error"]["message"], doc
    assert f"namespace/{kd.ns}" not in kd.kubectl("get", "namespace", "-o", "name")
    kd.edit_kcl('context = "remote-demo"', 'context = "remote-demo", secrets = "external"')
    code, doc = kd.json("env", "secrets", "sync", "cluster")
    assert code == 0 and doc["provider"] == "external" and not doc["applied"]
    assert "external" in doc["message"]


def test_status_of_an_unreachable_cluster_is_undetermined_exit_2(kdemo):
    """Status exit 2 (could not determine): the declared cluster does not answer; every image is
    `unreachable`."""
    kd = kdemo
    kd.release("v1", {"api": (API, digest("api-1")), "web": (WEB, digest("web-1"))})
    assert kd.json("env", "deploy", "cluster", "v1", "--yes", "--no-wait")[0] == 0
    dead = kd.root.parent / "dead.kubeconfig"
    dead.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "d", "cluster": {"server": "https://127.0.0.1:9", "insecure-skip-tls-verify": True}}],
        "users": [{"name": "u", "user": {"token": "x"}}],
        "contexts": [{"name": "k3d-demo", "context": {"cluster": "d", "user": "u"}}],
    }))
    kd.demo.env["KUBECONFIG"] = str(dead)
    code, doc = kd.json("env", "status", "cluster")
    assert code == 2, doc
    env = doc["environments"][0]
    assert {i["state"] for i in env["images"]} == {"unreachable"}
