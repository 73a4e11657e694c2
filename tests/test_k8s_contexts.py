"""The kubeconfig's contexts as kubectl lists them (the declared context only: applies target exactly the declared
context; a missing one is a clear error): engine.runtime.k8s reads the kubeconfig files itself and
must agree with `kubectl config get-contexts -o name` (the real kubectl of tests/k8s_cluster.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from engine.runtime import k8s
from tests.k8s_cluster import BIN

CONFIGS = {
    "a.yaml": "apiVersion: v1\nkind: Config\ncontexts:\n- name: zeta\n  context: {cluster: a, user: b}\n"
              "- name: k3d-demo\n  context: {cluster: a, user: b}\n",
    "b.yaml": "contexts:\n- name: mid\n  context: {cluster: c}\n- name: zeta\n  context: {cluster: d}\n",
    "empty.yaml": "",
    "none.yaml": "apiVersion: v1\nkind: Config\ncontexts: []\n",
}


def _kubectl(env: dict[str, str]) -> list[str]:
    out = subprocess.run([str(BIN / "kubectl"), "config", "get-contexts", "-o", "name"], env=env,
                         capture_output=True, text=True, timeout=60, check=False)
    return out.stdout.split()


@pytest.mark.parametrize("listed", ["a.yaml", "a.yaml:b.yaml", "b.yaml:missing.yaml:a.yaml", "empty.yaml",
                                    "none.yaml:b.yaml", "missing.yaml", "", "HOME"])
def test_contexts_from_files_agree_with_kubectl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, listed: str) -> None:
    """The declared context only: the contexts read from KUBECONFIG's files (or ~/.kube/config) are kubectl's,
    sorted and unique."""
    for name, text in CONFIGS.items():
        (tmp_path / name).write_text(text)
    home = tmp_path / "home"
    (home / ".kube").mkdir(parents=True)
    if listed == "HOME":
        (home / ".kube" / "config").write_text(CONFIGS["b.yaml"])
    kubeconfig = os.pathsep.join(str(tmp_path / p) for p in listed.split(":")) if listed not in ("", "HOME") else ""
    env = {**os.environ, "HOME": str(home), "KUBECONFIG": kubeconfig}
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("KUBECONFIG", kubeconfig)
    expected = _kubectl(env)
    assert k8s._contexts_from_files() == expected
    if listed not in ("", "missing.yaml", "empty.yaml"):
        assert expected  # the comparison is not between two empty lists only


def test_unreadable_kubeconfig_is_left_to_kubectl(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The declared context only: a kubeconfig that is not the expected shape is not guessed at: kubectl
    itself answers."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("contexts: {not: a list}\n")
    monkeypatch.setenv("KUBECONFIG", str(bad))
    assert k8s._contexts_from_files() is None
    bad.write_text("contexts: [\n")
    assert k8s._contexts_from_files() is None


@pytest.mark.parametrize(("context", "local"), [
    ("k3d-demo", True), ("kind-dev", True), ("minikube", True), ("docker-desktop", True),
    ("docker-for-desktop", True), ("rancher-desktop", True), ("colima", True), ("orbstack", True),
    ("remote-demo", False), ("gke_proj_europe-west1_prod", False), ("arn:aws:eks:eu-west-1:1:cluster/p", False),
    ("minikube-prod", False), ("my-k3d-demo", False), ("kind", False), ("", False),
])
def test_local_cluster_rule(context: str, local: bool) -> None:
    """`env secrets sync` (local clusters only) and the deploy preflight (remote clusters only)
    share one rule: a context a local-cluster tool creates (`k3d-` as `cluster up` pins it, `kind-`,
    minikube, Docker Desktop, Rancher Desktop, Colima, OrbStack); any other context is remote."""
    assert k8s.is_local(context) is local
