"""The pinned Kubernetes binaries the tests build report their real version."""

from __future__ import annotations

import json
import subprocess

from k8s_cluster import BIN, K8S_VERSION, TestCluster


def test_kubectl_version_parses_and_names_the_pinned_release(k8s: TestCluster) -> None:
    """docs/reference-k8s.md#tests-and-the-real-control-plane: the four Kubernetes binaries carry their
    release's version stamp, so `kubectl version -o json` parses (it fails on the unstamped
    `v0.0.0-master+$Format:%H$`) and names v1.36.3 for the client and for the server it asks."""
    done = subprocess.run([str(BIN / "kubectl"), "--kubeconfig", str(k8s.kubeconfig), "--context", "k3d-demo",
                           "version", "-o", "json"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    major, minor = K8S_VERSION.removeprefix("v").split(".")[:2]
    for side in ("clientVersion", "serverVersion"):
        assert doc[side]["gitVersion"] == K8S_VERSION, doc
        assert (doc[side]["major"], doc[side]["minor"]) == (major, minor), doc
        assert doc[side]["gitTreeState"] == "clean", doc
