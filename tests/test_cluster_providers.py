"""Cluster providers without a cluster (docs/reference-cluster.md#providers): the real k3d binary validates
the k3d config `cluster up` generates and refuses a broken one with its own error; `cluster up --provider
k3d` where k3d cannot create a cluster relays k3d's error; the provider choice rule's last step (exit 1
with a hint); `cluster info` and `cluster urls` with ingress disabled answer without any contact.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from deploy_fixtures import Demo, make_demo  # noqa: E402
from k8s_cluster import BIN  # noqa: E402

K3D_FILE = """apiVersion: k3d.io/v1alpha5
kind: Simple
metadata:
  name: shop
servers: 1
agents: 2
ports:
  - port: 9090:80
    nodeFilters: [loadbalancer]
"""
NO_INGRESS = """apiVersion: k3d.io/v1alpha5
kind: Simple
metadata:
  name: quiet
options:
  k3s:
    extraArgs:
      - arg: --disable=traefik
        nodeFilters: ["server:*"]
"""


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Demo:
    """The demo, its environment with no Docker daemon (a socket path nothing listens on) and kubectl on PATH."""
    d = make_demo(tmp_path_factory.mktemp("providers"))
    d.env.update(PATH=f"{BIN}{os.pathsep}{d.env['PATH']}", FRAMEWORK_K8S_BIN=str(BIN),
                 DOCKER_HOST=f"unix://{d.home}/no-docker.sock")
    return d


def test_real_k3d_validates_the_generated_config_and_refuses_a_broken_one(demo: Demo) -> None:
    """docs/reference-cluster.md#configuration: the k3d config generated from an environment's KCL (name from
    its k3d-<name> context, ingress published on 8080 because a workload has routes) passes the real k3d's
    schema check (`k3d config migrate`); a file k3d refuses is exit 1 with k3d's own message relayed."""
    from engine.cluster.config import k3d_document, load_config
    from engine.cluster.providers import ClusterError, K3d
    from engine.project import find_project

    k3d = K3d()
    assert k3d.tool() is not None, "k3d is missing: `make cluster-tools` (run by `make test`) installs it"
    project = find_project(demo.root)
    cfg = load_config(project, "cluster")
    assert (cfg.name, cfg.context, cfg.ingress.enabled, cfg.ingress.http_port) == ("demo", "k3d-demo", True, 8080)
    path = k3d.validate(cfg, demo.home / "k3d")
    assert path.is_file() and "8080:80" in path.read_text()
    assert k3d_document(cfg)["ports"] == [{"port": "8080:80", "nodeFilters": ["loadbalancer"]}]

    broken = demo.home / "broken.yaml"
    broken.write_text(K3D_FILE.replace("agents: 2", "agents: two"))
    with pytest.raises(ClusterError) as refused:
        k3d.validate(load_config(project, config_file=str(broken)), demo.home / "k3d")
    assert "Schema Validation failed" in (refused.value.hint or "") and "agents" in (refused.value.hint or "")
    bad = demo.run("cluster", "up", "--config", str(broken), "--provider", "k3d")
    assert bad.returncode == 1 and "k3d refused the cluster config" in bad.stderr
    assert "Schema Validation failed" in bad.stderr and "Traceback" not in bad.stderr


def test_k3d_up_without_docker_relays_k3ds_own_error(demo: Demo) -> None:
    """docs/reference-cluster.md#what-this-machine-cannot-do: `cluster up --provider k3d` where k3d cannot
    create the cluster (no Docker daemon answers, so no node image either) fails with k3d's own error,
    relayed as the hint; exit 1, code cluster_failed, no record written, no traceback."""
    code_file = demo.root / "deploy" / "k3d.yaml"
    code_file.write_text(K3D_FILE)
    try:
        proc = demo.run("cluster", "up", "--provider", "k3d", "--json", timeout=120)
    finally:
        code_file.unlink()
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1 and doc["error"]["code"] == "cluster_failed", doc
    assert doc["error"]["message"] == "k3d could not create cluster 'shop'"
    assert doc["error"]["hint"].startswith("k3d: ") and "Docker daemon" in doc["error"]["hint"]
    assert "Traceback" not in proc.stderr and not (demo.root / ".framework" / "clusters" / "shop.json").exists()


def test_no_provider_is_exit_1_with_how_to_get_one(demo: Demo) -> None:
    """docs/reference-cluster.md#provider-choice: auto picks k3d only where a Docker daemon answers and kwok
    only where kwokctl and the Kubernetes binaries are; with neither, exit 1 `no_cluster_provider` naming
    what each misses and the command that installs one; a bad --provider is refused as input."""
    env = {**demo.env, "FRAMEWORK_K8S_BIN": str(demo.home / "no-k8s-binaries")}
    demo.env, saved = env, demo.env
    try:
        proc = demo.run("cluster", "up", "--json")
        wrong = demo.run("cluster", "up", "--provider", "minikube")
    finally:
        demo.env = saved
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1 and doc["error"]["code"] == "no_cluster_provider", doc
    assert "k3d: no Docker daemon answers" in doc["error"]["message"]
    assert "kwok: the Kubernetes binaries are missing" in doc["error"]["message"]
    assert "make cluster-tools" in doc["error"]["hint"]
    assert wrong.returncode == 1 and "--provider 'minikube': choose k3d or kwok" in wrong.stderr


def test_info_and_urls_without_ingress_need_no_cluster(demo: Demo) -> None:
    """docs/reference-cluster.md#commands: `cluster info` is static (the declaration from a k3d file: name,
    servers, agents, the ingress port, the context k3d-<name>; `state: not contacted`); `cluster urls` with
    ingress disabled prints a notice and exits 0; an environment whose context is not k3d-<name> is refused."""
    cfg = demo.home / "shop.yaml"
    cfg.write_text(K3D_FILE)
    code, info = demo.json("cluster", "info", "--config", str(cfg))
    assert code == 0 and info["state"] == "not contacted" and info["context"] == "k3d-shop"
    assert (info["servers"], info["agents"], info["ingress"]) == (1, 2, {"enabled": True, "http_port": 9090})
    quiet = demo.home / "quiet.yaml"
    quiet.write_text(NO_INGRESS)
    code, urls = demo.json("cluster", "urls", "--config", str(quiet))
    assert code == 0 and urls["ingress_enabled"] is False and urls["urls"] == []
    assert urls["notice"].startswith("ingress is disabled for cluster quiet")
    text = demo.run("cluster", "urls", "--config", str(quiet))
    assert text.returncode == 0 and "ingress is disabled" in text.stdout
    kcl = demo.root / "deploy" / "kcl" / "cluster" / "main.k"
    kcl.write_text(kcl.read_text().replace('context = "k3d-demo"', 'context = "remote-demo"'))
    remote = demo.run("cluster", "up", "cluster")
    assert remote.returncode == 1 and "not a local cluster's (k3d-<name>)" in remote.stderr
    kcl.write_text(kcl.read_text().replace('context = "remote-demo"', 'context = "k3d-demo"'))
