"""`framework cluster ...` with the kwok provider, end to end on one real cluster per module: kwokctl's
binary runtime over the locally built etcd, kube-apiserver, controller-manager, scheduler and
kwok-controller (docs/reference-cluster.md#providers). `cluster up` -> `env deploy cluster` -> `env status`
-> `cluster reload` -> `cluster logs` -> `cluster down`, which leaves no process and no kubeconfig entry.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import cli_fork
from deploy_fixtures import FRAMEWORK_BIN, Demo, make_demo  # noqa: E402
from k8s_cluster import BIN  # noqa: E402
from k8s_fixtures import API, WEB, digest  # noqa: E402

from tests.waiting import until  # noqa: E402


def _release(root: Path, version: str) -> None:
    rel = {
        "version": version, "project": "demo", "created_at": 0,
        "provenance": {"tree": None, "commit": None, "branch": "main", "dirty": False},
        "artifacts": [{"workload": n, "kind": "oci", "coordinate": f"{i}@{digest(n)}", "digest": digest(n)}
                      for n, i in (("api", API), ("web", WEB))],
        "images": {n: {"kind": "oci", "coordinate": i, "digest": digest(n)} for n, i in (("api", API), ("web", WEB))},
    }
    path = root / ".framework" / "releases" / f"{version}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rel))


def _kubeconfig(demo: Demo) -> dict:
    out = subprocess.run([str(BIN / "kubectl"), "config", "view", "-o", "json"], env=demo.env, capture_output=True,
                         text=True, timeout=30, check=True)
    return json.loads(out.stdout)


def _cluster_pids(demo: Demo) -> list[int]:
    """Processes whose command line runs from this test's kwok work directory (the cluster's components)."""
    workdir = str(demo.home / ".kwok")
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if workdir in cmdline:
            found.append(int(proc.name))
    return found


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Demo, dict, dict]]:
    """One kwok cluster for the module (per worker), made by the real `cluster up cluster --wait` (the demo's
    cluster environment: context k3d-demo), with release v1 deployed to it by the real `env deploy cluster`
    (so each test stands alone, whichever worker runs it); it is deleted at the end, also after a failure."""
    demo = make_demo(tmp_path_factory.mktemp("cluster"))
    demo.env.update(PATH=f"{BIN}{os.pathsep}{demo.env['PATH']}", FRAMEWORK_K8S_BIN=str(BIN))  # HOME is the test's
    text = (demo.root / "deploy" / "kcl" / "cluster" / "main.k").read_text()
    (demo.root / "deploy" / "kcl" / "cluster" / "main.k").write_text(
        text.replace('secrets = ["DATABASE_URL"]', "secrets = []"))  # secrets: tests/test_k8s_secrets.py
    try:
        code, doc = demo.json("cluster", "up", "cluster", "--wait", timeout=400)
        assert code == 0, doc
        _release(demo.root, "v1")
        code, deployed = demo.json("env", "deploy", "cluster", "v1", "--yes", "--timeout", "120", timeout=180)
        assert code == 0, deployed
        yield demo, doc, deployed
    finally:  # also after a failed up: nothing it started outlives the module
        demo.run("cluster", "down", "--provider", "kwok", timeout=180)


def test_up_names_the_provider_honestly_and_a_second_up_is_a_no_op(up: tuple[Demo, dict, dict]) -> None:
    """docs/reference-cluster.md#cluster-up: the kwok provider is named with what it is not (simulated
    nodes, no container runs) in every output; the cluster's context is k3d-<name>
    (docs/reference-cluster.md#context) and the user's current context is left as it was; `cluster up`
    on an existing cluster is a no-op success; `cluster status --json` reports components, nodes, ready."""
    demo, doc, _ = up
    assert doc["created"] is True and doc["provider"] == "kwok" and doc["context"] == "k3d-demo"
    assert doc["provider_description"] == "kwok (simulated nodes: pods do not run containers)"
    assert doc["ready"] is True and [n["ready"] for n in doc["nodes"]] == [True]
    assert {c["name"] for c in doc["components"]} >= {"etcd", "kube-apiserver", "kube-scheduler", "kwok-controller"}
    config = _kubeconfig(demo)
    assert [c["name"] for c in config["contexts"]] == ["k3d-demo"] and not config.get("current-context")
    again = demo.run("cluster", "up", "cluster")
    assert again.returncode == 0 and "already up: nothing done" in again.stdout
    assert "kwok (simulated nodes: pods do not run containers)" in again.stdout
    code, st = demo.json("cluster", "status")
    assert code == 0 and st["state"] == "running" and st["source"] == "deploy/kcl/cluster/main.k", st
    assert all(c["state"] == "running" and c["pid"] for c in st["components"])


def test_status_reads_the_nodes_from_the_api_server_without_kubectl(up: tuple[Demo, dict, dict], tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/reference-cluster.md#speed: `cluster status` reads the nodes from the API server itself with the
    context's CA and client certificate (a `kubectl` first on PATH that records being started is never
    started); the same answer from inline `-data` key material and from paths relative to the kubeconfig;
    a context that needs kubectl (an exec plugin) is handed to it; an unreachable server is no answer."""
    import base64

    import yaml

    from engine.cluster import kubeapi

    demo, _, _ = up
    bindir = tmp_path / "bin"
    bindir.mkdir()
    marker = tmp_path / "kubectl-ran"
    (bindir / "kubectl").write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    (bindir / "kubectl").chmod(0o755)
    env = dict(demo.env, PATH=f"{bindir}{os.pathsep}{demo.env['PATH']}")
    out = cli_fork.run([FRAMEWORK_BIN, "cluster", "status", "--json"], cwd=demo.root, env=env, capture_output=True,
                         text=True, timeout=60)
    doc = json.loads(out.stdout)
    assert out.returncode == 0 and doc["state"] == "running" and [n["ready"] for n in doc["nodes"]] == [True], doc
    assert not marker.exists()

    config = _kubeconfig(demo)
    monkeypatch.setenv("HOME", demo.env["HOME"])
    monkeypatch.delenv("KUBECONFIG", raising=False)
    if "KUBECONFIG" in demo.env:
        monkeypatch.setenv("KUBECONFIG", demo.env["KUBECONFIG"])
    names = [n["metadata"]["name"] for n in (kubeapi.get_json("k3d-demo", "/api/v1/nodes") or {})["items"]]
    assert names == [n["name"] for n in doc["nodes"]]

    cluster, user = config["clusters"][0]["cluster"], config["users"][0]["user"]
    ca = Path(cluster["certificate-authority"])

    def b64(path: str | Path) -> str:
        return base64.b64encode(Path(path).read_bytes()).decode()

    inline = {"apiVersion": "v1", "kind": "Config", "contexts": [{"name": "inline", "context": {
        "cluster": "c", "user": "u"}}], "clusters": [{"name": "c", "cluster": {
            "server": cluster["server"],
            "certificate-authority-data": b64(ca),
        }}], "users": [{"name": "u", "user": {
            k + "-data": b64(user[k]) for k in ("client-certificate", "client-key")}}]}
    pki = tmp_path / "pki"
    shutil.copytree(Path(user["client-certificate"]).parent, pki)
    if not (pki / ca.name).exists():
        shutil.copy(ca, pki / ca.name)
    relative = {**inline, "contexts": [{"name": "relative", "context": {"cluster": "r", "user": "ru"}}],
                "clusters": [{"name": "r", "cluster": {"server": cluster["server"],
                                                       "certificate-authority": f"pki/{ca.name}"}}],
                "users": [{"name": "ru", "user": {k: f"pki/{Path(user[k]).name}"
                                                  for k in ("client-certificate", "client-key")}}]}
    needs_kubectl = {**inline, "contexts": [{"name": "plugin", "context": {"cluster": "c", "user": "p"}}],
                     "users": [{"name": "p", "user": {"exec": {"command": "get-token"}}}]}
    closed = {**inline, "contexts": [{"name": "closed", "context": {"cluster": "z", "user": "u"}}],
              "clusters": [{"name": "z", "cluster": {"server": f"http://127.0.0.1:{_closed_port()}"}}]}
    files = []
    for i, doc_ in enumerate((inline, relative, needs_kubectl, closed)):
        files.append(tmp_path / f"kubeconfig-{i}")
        files[-1].write_text(yaml.safe_dump(doc_))
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join(map(str, files)))
    for context in ("inline", "relative"):
        got = kubeapi.get_json(context, "/api/v1/nodes")
        assert got is not None and [n["metadata"]["name"] for n in got["items"]] == names, context
    with pytest.raises(kubeapi.Unsupported):
        kubeapi.get_json("plugin", "/api/v1/nodes")
    with pytest.raises(kubeapi.Unsupported):
        kubeapi.get_json("absent", "/api/v1/nodes")
    assert kubeapi.get_json("closed", "/api/v1/nodes") is None


def _closed_port() -> int:
    import socket

    with socket.socket() as sock:  # bound and closed: nothing listens there afterwards
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_deploy_reload_logs_urls_instances_on_the_cluster(up: tuple[Demo, dict, dict]) -> None:
    """docs/reference-cluster.md#the-dev-loop: `env deploy cluster` applies to the cluster `cluster up`
    made (its context) and `env status` reads it ready; `cluster reload --dry-run` lists the objects and
    applies nothing; `cluster reload --image-tag` re-renders, applies and waits the rollout (no promotion);
    `cluster logs --no-follow` prints KWOK's simulated log per pod; `cluster urls` lists the Ingress
    hosts (not served by kwok, said so); `cluster instances` lists the managed namespace."""
    demo, _, doc = up
    assert doc["rollout"]["phase"] == "ready", doc
    code, st = demo.json("env", "status", "cluster")
    assert code == 0 and st["environments"][0]["health"] == "healthy", st

    code, dry = demo.json("cluster", "reload", "cluster", "--image-tag", "dev-2", "--dry-run")
    assert code == 0 and dry["dry_run"] and "Deployment/api" in dry["objects"] and dry["phase"] is None
    code, rel = demo.json("cluster", "reload", "cluster", "--image-tag", "dev-2", "--timeout", "120", timeout=180)
    assert code == 0 and rel["phase"] == "ready", rel
    assert {r["name"]: r["outcome"] for r in rel["resources"]} == {"api": "ready", "web": "ready"}
    out = subprocess.run([str(BIN / "kubectl"), "--context", "k3d-demo", "get", "deployment", "api", "-n",
                          "demo-cluster", "-o", "jsonpath={.spec.template.spec.containers[0].image}"],
                         env=demo.env, capture_output=True, text=True, timeout=30, check=True)
    assert out.stdout == f"{API}:dev-2"
    code, shown = demo.json("ledger", "show", "cluster")
    assert [p["release"] for p in shown["promotions"]] == ["v1"]  # a reload records no promotion

    def simulated() -> dict | None:
        code, logs = demo.json("cluster", "logs", "--service", "api", "--tail", "5", "--no-follow")
        assert code == 0, logs
        pods = {ln["pod"] for ln in logs["lines"] if "simulated log line" in ln["line"]}
        return logs if len(pods) == 2 else None  # the reload's two new pods, each with KWOK's line

    logs = until(simulated, 60, what="KWOK's simulated log line from both api pods")
    assert all(ln["pod"].startswith("api-") for ln in logs["lines"])
    text = demo.run("cluster", "logs", "--service", "api", "--no-follow")
    assert text.returncode == 0 and "[kwok] simulated log line" in text.stdout
    missing = demo.run("cluster", "logs", "--service", "nope", "--no-follow")
    assert missing.returncode == 1 and "no pods of service 'nope'" in missing.stderr

    code, urls = demo.json("cluster", "urls")
    assert code == 0 and urls["ingress_enabled"] and urls["served"] is False and "kwok" in urls["notice"]
    assert sorted(u["url"] for u in urls["urls"]) == ["http://cluster.demo.example.test:8080/",
                                                       "http://cluster.demo.example.test:8080/api"]
    code, inst = demo.json("cluster", "instances")
    assert code == 0 and [(i["namespace"], i["env"], i["workloads"]) for i in inst["instances"]] == [
        ("demo-cluster", "cluster", 2)]


def test_clusters_view_shows_provider_nodes_namespaces_urls_and_logs(up: tuple[Demo, dict, dict],
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/reference-cluster.md#dashboard: the Clusters view (`c` on Environments) shows the running
    cluster with its provider named with what it runs, its nodes, context and declaration, and for it the
    managed namespace, the ingress URLs with kwok's notice and the logs tail, with the command lines that
    print the same."""
    import asyncio

    from app.dashboard import Dashboard
    from app.settings import deterministic_settings
    from tests.waiting import until_app

    demo, _, _ = up
    for key in ("HOME", "PATH", "FRAMEWORK_K8S_BIN", "FRAMEWORK_LEDGER_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(key, demo.env[key])
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KWOK_WORKDIR", raising=False)

    async def scenario() -> None:
        app = Dashboard(project_dir=demo.root, settings=deterministic_settings(show_volatile=False))
        async with app.run_test(size=(150, 45)) as pilot:
            await until_app(pilot, lambda: getattr(app.screen, "loads", 0) >= 1, timeout=60, what="the environments")
            await pilot.press("c")
            await until_app(pilot, lambda: type(app.screen).__name__ == "ClustersScreen" and app.screen.loads >= 1,
                            timeout=60, what="the clusters view's first load")
            screen = app.screen
            table = screen.query_one("#clusters-table")
            row = table.get_row("demo")
            assert row[:5] == ["demo", "kwok (simulated nodes: pods do not run containers)", "running",
                               "1/1 ready", "k3d-demo"]
            detail = str(screen.query_one("#clusters-detail").render())
            assert "demo-cluster" in detail and "env cluster" in detail
            assert "http://cluster.demo.example.test:8080/api" in detail and "kwok runs no ingress controller" in detail
            assert "[kwok] simulated log line" in detail
            status = str(screen.query_one("#clusters-status").render())
            assert "framework cluster status --json" in status
            await pilot.press("escape")
            await until_app(pilot, lambda: type(app.screen).__name__ == "EnvironmentsScreen", what="back")

    asyncio.run(scenario())


def test_down_leaves_no_process_and_no_kubeconfig_entry(up: tuple[Demo, dict, dict]) -> None:
    """docs/reference-cluster.md#cluster-down: `cluster down` deletes the cluster with everything on it:
    no component process is left, the kubeconfig has no entry for it, the record is gone, and `cluster
    status` then says absent (exit 1) with the command that creates it; a second down is a no-op."""
    demo, _, _ = up
    assert _cluster_pids(demo)
    code, doc = demo.json("cluster", "down", timeout=120)
    assert code == 0 and doc["deleted"] is True and doc["provider"] == "kwok", doc
    until(lambda: not _cluster_pids(demo), 30, what="every kwok component to exit")
    config = _kubeconfig(demo)
    assert not config.get("contexts") and not config.get("clusters") and not config.get("users")
    assert not config.get("current-context")
    assert not (demo.root / ".framework" / "clusters" / "demo.json").exists()
    status = demo.run("cluster", "status")
    assert status.returncode == 1 and "absent" in status.stdout and "framework cluster up" in status.stdout
    code, again = demo.json("cluster", "down")
    assert code == 0 and again["deleted"] is False
