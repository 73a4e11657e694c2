"""Fixtures of the k8s runtime tests: one real control plane per pytest process (tests/k8s_cluster.py),
and per test a copy of the demo whose `cluster` environment targets a namespace of its own on it.

Import with: sys.path.insert(0, str(Path(__file__).parent)); from k8s_fixtures import ...
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from deploy_fixtures import Demo, make_demo
from k8s_cluster import TestCluster

API = "registry.example.test/demo/api"
WEB = "registry.example.test/demo/web"


def digest(seed: str) -> str:
    return "sha256:" + hashlib.sha256(seed.encode()).hexdigest()


_SHARED: list[TestCluster] = []  # this process's running control plane, if any


@pytest.fixture(name="k8s")
def k8s_fixture(tmp_path_factory: pytest.TempPathFactory) -> TestCluster:
    """The control plane of this pytest process (a worker, under xdist): started by the first test that
    needs it and shared by the following ones (each in its own namespace); conftest.py stops it once
    the next test does not need it (the k8s modules run one after another: one scheduling group)."""
    if not _SHARED:
        cluster = TestCluster(tmp_path_factory.mktemp("k8s"))
        try:
            cluster.start()
        except BaseException:
            cluster.stop()  # what did come up does not outlive the failure
            raise
        _SHARED.append(cluster)
    return _SHARED[0]


def stop_shared() -> None:
    """Stop this process's control plane, if one runs (a later test needing one starts another)."""
    while _SHARED:
        _SHARED.pop().stop()


class K8sDemo:
    """The demo, its `cluster` environment pointed at namespace `ns` of the session's cluster."""

    def __init__(self, demo: Demo, cluster: TestCluster, ns: str) -> None:
        self.demo, self.cluster, self.ns = demo, cluster, ns
        self.root = demo.root

    def json(self, *args: str, **kw: Any) -> tuple[int, dict[str, Any]]:
        return self.demo.json(*args, **kw)

    def run(self, *args: str, **kw: Any) -> Any:
        return self.demo.run(*args, **kw)

    def kubectl(self, *args: str, stdin: str | None = None) -> str:
        return self.cluster.kubectl(*args, stdin=stdin)

    def get(self, what: str) -> dict[str, Any]:
        return json.loads(self.kubectl("get", what, "-n", self.ns, "-o", "json"))

    def kcl(self) -> Path:
        return self.root / "deploy" / "kcl" / "cluster" / "main.k"

    def edit_kcl(self, old: str, new: str) -> None:
        text = self.kcl().read_text()
        assert old in text, f"{old!r} not in the cluster KCL"
        self.kcl().write_text(text.replace(old, new))

    def release(self, version: str, images: dict[str, tuple[str, str]]) -> None:
        """Record release `version` as a push would: per workload its image and digest."""
        rel = {
            "version": version, "project": "demo", "created_at": time.time(),
            "provenance": {"tree": None, "commit": None, "branch": "main", "dirty": False},
            "artifacts": [{"workload": n, "kind": "oci", "coordinate": f"{img}@{d}", "digest": d}
                          for n, (img, d) in images.items()],
            "images": {n: {"kind": "oci", "coordinate": img, "digest": d} for n, (img, d) in images.items()},
        }
        path = self.root / ".framework" / "releases" / f"{version}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(rel, indent=2))


@pytest.fixture(name="kdemo")
def kdemo_fixture(tmp_path: Path, k8s: TestCluster) -> K8sDemo:
    demo = make_demo(tmp_path)
    ns = f"t-{uuid.uuid4().hex[:10]}"
    demo.env.update(k8s.env())
    kd = K8sDemo(demo, k8s, ns)
    kd.edit_kcl('namespace = "demo-cluster"', f'namespace = "{ns}"')
    kd.edit_kcl('secrets = ["DATABASE_URL"]', "secrets = []")  # secrets: tested on their own
    return kd
