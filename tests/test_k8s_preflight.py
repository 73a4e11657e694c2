"""Deploy rule 8 (preflight, remote clusters) with every piece real: the API server of the session,
and a Docker registry (Debian's docker-registry) holding the release's images."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from k8s_fixtures import digest, k8s_fixture, kdemo_fixture  # noqa: E402,F401
from test_release_verify import (
    push_image,  # noqa: E402
    registry_fixture,  # noqa: E402,F401
)


def test_preflight_passes_when_keys_and_images_are_there_and_names_an_image_that_is_not(kdemo, registry):
    """Rule 8: with every secret key provisioned and every image's manifest in its registry, the
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
