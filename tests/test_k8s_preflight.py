"""The deploy preflight (remote clusters; docs/reference-k8s.md#env-deploy-env-version-on-a-k8scluster) with
every piece real: the API server of the session, and a Docker registry (Debian's docker-registry) holding the
release's images, open or password-protected."""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from deploy_fixtures import free_port  # noqa: E402
from k8s_fixtures import digest, kdemo_fixture  # noqa: E402,F401
from registry_fixtures import run_registry, run_token_registry  # noqa: E402
from test_registry_login_ref import lan_address  # noqa: E402
from test_release_verify import (
    push_image,  # noqa: E402
    registry_fixture,  # noqa: E402,F401
)


def test_preflight_passes_when_keys_and_images_are_there_and_names_an_image_that_is_not(kdemo, registry):
    """Preflight: with every secret key provisioned and every image's manifest in its registry, the
    preflight of a remote cluster finds nothing and the deploy applies; an image digest the registry
    does not hold is a finding naming the object and the image, before anything is applied."""
    kd = kdemo
    host, _proc = registry
    api, web = push_image(host, "demo/api"), push_image(host, "demo/web")
    kd.edit_kcl('image = "registry.example.test/demo/api"', f'image = "{host}/demo/api"')
    kd.edit_kcl('image = "registry.example.test/demo/web"', f'image = "{host}/demo/web"')
    kd.edit_kcl('context = "k3d-demo"', 'context = "remote-demo"')
    kd.edit_kcl("secrets = []", 'secrets = ["DATABASE_URL"]')
    kd.kubectl("create", "namespace", kd.ns)
    kd.kubectl("create", "secret", "generic", "api-secrets", "-n", kd.ns, "--from-literal=DATABASE_URL=x")
    kd.release("v1", {"api": (f"{host}/demo/api", api), "web": (f"{host}/demo/web", web)})
    code, doc = kd.json("env", "deploy", "cluster", "v1", "--dry-run")
    assert code == 0, doc
    assert doc["preflight"]["findings"] == [] and doc["preflight"]["checks"] == {"secret_keys": 1, "images": 2}
    code, doc = kd.json("env", "deploy", "cluster", "v1", "--yes", "--timeout", "90")
    assert code == 0 and doc["preflight"]["findings"] == [] and doc["rollout"]["phase"] == "ready", doc
    kd.release("v2", {"api": (f"{host}/demo/api", digest("never-pushed")), "web": (f"{host}/demo/web", web)})
    code, doc = kd.json("env", "deploy", "cluster", "v2", "--yes")
    assert code == 1 and doc["error"]["code"] == "preflight_failed", doc
    (finding,) = doc["preflight"]["findings"]
    assert finding["object"] == "Deployment/api" and finding["kind"] == "image"
    assert finding["image"] == f"{host}/demo/api@{digest('never-pushed')}" and "FAILED" in finding["message"]
    assert not doc["appended"]
    code, shown = kd.json("ledger", "show", "cluster")
    assert [p["release"] for p in shown["promotions"]] == ["v1"]


def test_preflight_reads_a_password_protected_registry_with_the_registry_login_credential(kdemo, tmp_path):
    """Preflight with `registry login` (docs/reference-k8s.md#env-deploy-env-version-on-a-k8scluster):
    every image must resolve in its registry, anonymously or with the credential `registry login` stored
    (docker's config.json). Against a real docker-registry with an htpasswd user on this machine's
    non-loopback address: without a credential each image is a finding naming the object and the image,
    saying the registry refused anonymous access (exit 1, nothing applied or appended); a wrong stored
    credential is refused as such; after the real `framework registry login` the same preflight passes
    and the deploy applies, while `release verify` still reads anonymously (its reads are always
    anonymous). The credential is never printed."""
    kd = kdemo
    host = f"{lan_address()}:{free_port()}"
    kd.demo.env["FRAMEWORK_INSECURE_REGISTRIES"] = host  # plain HTTP in the test, as for loopback
    (tmp_path / "reg").mkdir()
    with run_registry(tmp_path / "reg", host, {"ci": "s3cret"}):
        api = push_image(host, "demo/api", auth=("ci", "s3cret"))
        web = push_image(host, "demo/web", auth=("ci", "s3cret"))
        kd.edit_kcl('image = "registry.example.test/demo/api"', f'image = "{host}/demo/api"')
        kd.edit_kcl('image = "registry.example.test/demo/web"', f'image = "{host}/demo/web"')
        kd.edit_kcl('context = "k3d-demo"', 'context = "remote-demo"')
        kd.release("v1", {"api": (f"{host}/demo/api", api), "web": (f"{host}/demo/web", web)})
        outputs = []

        code, doc = kd.json("env", "deploy", "cluster", "v1", "--yes")
        assert code == 1 and doc["error"]["code"] == "preflight_failed", doc
        found = sorted((f["object"], f["image"]) for f in doc["preflight"]["findings"])
        assert found == [("Deployment/api", f"{host}/demo/api@{api}"), ("Deployment/web", f"{host}/demo/web@{web}")]
        for f in doc["preflight"]["findings"]:
            assert f"registry {host} refused anonymous access (401)" in f["message"], f
            assert "framework registry login cluster" in f["message"]
        assert not doc["appended"]
        assert kd.kubectl("get", "deployments", "-n", kd.ns, "-o", "name").strip() == ""

        docker = Path(kd.demo.env["HOME"]) / ".docker"
        docker.mkdir()
        (docker / "config.json").write_text(json.dumps(
            {"auths": {host: {"auth": base64.b64encode(b"ci:wrong-pass").decode()}}}))
        code, doc = kd.json("env", "deploy", "cluster", "v1", "--dry-run")
        assert code == 1 and len(doc["preflight"]["findings"]) == 2, doc
        assert all("refused the stored `registry login` credential (401)" in f["message"]
                   for f in doc["preflight"]["findings"])
        outputs.append(json.dumps(doc))

        proc = kd.run("registry", "login", "cluster", "--username", "ci", "--password-stdin", input="s3cret\n")
        assert proc.returncode == 0, proc.stderr
        outputs.append(proc.stdout + proc.stderr)
        code, doc = kd.json("env", "deploy", "cluster", "v1", "--dry-run")
        assert code == 0 and doc["preflight"]["findings"] == [], doc
        assert doc["preflight"]["checks"]["images"] == 2
        outputs.append(json.dumps(doc))
        code, doc = kd.json("env", "deploy", "cluster", "v1", "--yes", "--timeout", "90")
        assert code == 0 and doc["preflight"]["findings"] == [] and doc["rollout"]["phase"] == "ready", doc
        outputs.append(json.dumps(doc))
        code, doc = kd.json("release", "verify", "v1")  # `release verify` reads anonymously, still
        assert code == 2 and {c["outcome"] for c in doc["checks"]} == {"UNREACHABLE"}, doc
        assert all(f"registry {host} refused anonymous access (401)" in c["detail"] for c in doc["checks"])
        deployed = kd.get("deployment/api")
        assert deployed["spec"]["template"]["spec"]["containers"][0]["image"] == f"{host}/demo/api@{api}"
        assert not any("s3cret" in o or "wrong-pass" in o for o in outputs)


def test_preflight_answers_a_bearer_challenge_with_a_token_fetched_with_the_stored_credential(kdemo, tmp_path):
    """Preflight with `registry login`, token-auth registries (as Docker Hub and most hosted ones):
    a real docker-registry answering `Bearer realm=...` (its token service a named fake that checks
    Basic auth and signs the JWT the registry verifies). Anonymously the realm refuses a token: the
    images are findings (refused anonymous access); after `framework registry login` (which itself
    follows the challenge) the preflight fetches the token from the realm with the stored credential
    and finds nothing."""
    kd = kdemo
    host = f"{lan_address()}:{free_port()}"
    kd.demo.env["FRAMEWORK_INSECURE_REGISTRIES"] = host
    with run_registry(tmp_path, host):  # same storage: the images are there before token auth is on
        api, web = push_image(host, "demo/api"), push_image(host, "demo/web")
    kd.edit_kcl('image = "registry.example.test/demo/api"', f'image = "{host}/demo/api"')
    kd.edit_kcl('image = "registry.example.test/demo/web"', f'image = "{host}/demo/web"')
    kd.edit_kcl('context = "k3d-demo"', 'context = "remote-demo"')
    kd.release("v1", {"api": (f"{host}/demo/api", api), "web": (f"{host}/demo/web", web)})
    with run_token_registry(tmp_path, host, {"ci": "s3cret"}):
        code, doc = kd.json("env", "deploy", "cluster", "v1", "--dry-run")
        assert code == 1 and doc["error"]["code"] == "preflight_failed", doc
        assert sorted(f["object"] for f in doc["preflight"]["findings"]) == ["Deployment/api", "Deployment/web"]
        assert all(f"registry {host} refused anonymous access (401)" in f["message"]
                   for f in doc["preflight"]["findings"])
        proc = kd.run("registry", "login", "cluster", "--username", "ci", "--password-stdin", input="s3cret\n")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        code, doc = kd.json("env", "deploy", "cluster", "v1", "--dry-run")
        assert code == 0 and doc["preflight"]["findings"] == [] and doc["preflight"]["checks"]["images"] == 2, doc
        assert "s3cret" not in json.dumps(doc) + proc.stdout + proc.stderr
