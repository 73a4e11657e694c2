"""Deploy of an unchanged release to Kubernetes: `framework env deploy <env> <v>
--yes` of a release already running (re-deploying it appends nothing; it still applies and waits)
with 50 Deployments, against `kubectl apply --server-side` of the same rendered manifests alone,
measured in the same run on the same real control plane (tests/k8s_cluster.py: etcd,
kube-apiserver, controllers, scheduler, KWOK). Aim: <= 1.2x.

The deploy's extra work over kubectl's apply: the interpreter and its imports, evaluating and
rendering the KCL (cached), the ledger's compare-and-set and apply record, the ApplySet's prune
(kubectl's `--prune --applyset`: the parent's read and update, a list per kind), and the rollout
wait (every object reported complete by the apply's own answer: no further read). Both apply the
same documents, a stream of JSON objects (as `env render` prints a stream of YAML ones).

    python bench/k8s.py        # BENCH_ROUNDS=11 BENCH_DEPLOYMENTS=50 BENCH_BYTECODE=1 (0: no .pyc caches)
    BENCH_SMOKE=1: one round, 3 Deployments (tests/test_bench_smoke.py)
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
# medians of 11 rounds: on a loaded machine, those of 5 moved a run's ratio by up to 0.3x
SMOKE = os.environ.get("BENCH_SMOKE") == "1"  # tiny sizes, one round, no aim (tests/test_bench_smoke.py)
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "1" if SMOKE else "11"))
COUNT = int(os.environ.get("BENCH_DEPLOYMENTS", "3" if SMOKE else "50"))
AIM = 1.2
FRAMEWORK = str(Path(sys.executable).parent / "framework")

KCL = """import framework

environment = framework.Environment {{
    name = "fleet"
    kind = "self_managed"
    target = framework.K8sCluster {{context = "k3d-demo", namespace = "bench-fleet"}}
    workloads = [
{workloads}
    ]
}}
"""
WORKLOAD = ("        framework.Workload {{name = \"svc{i:02d}\", image = \"registry.example.test/bench/svc{i:02d}\", "
            "ports = [framework.Port {{port = 8080}}]}}")


def main() -> int:
    from k8s_cluster import TestCluster

    tmp = Path(tempfile.mkdtemp(prefix="bench-k8s-"))
    cluster = TestCluster(tmp / "cluster").start()
    try:
        return _run(tmp, cluster)
    finally:
        cluster.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def _run(tmp: Path, cluster) -> int:  # type: ignore[no-untyped-def]
    project = tmp / "fleet"
    (project / "deploy" / "kcl" / "fleet").mkdir(parents=True)
    (project / "framework.yaml").write_text("name: fleet\nframework_version: 0.1.0\n")
    (project / "deploy" / "kcl" / "fleet" / "main.k").write_text(
        KCL.format(workloads="\n".join(WORKLOAD.format(i=i) for i in range(COUNT))))
    env = {**os.environ, **cluster.env(), "HOME": str(tmp / "home"), "FRAMEWORK_LEDGER_HOME": str(tmp / "ledger"),
           "NO_COLOR": "1"}
    # as an installed package runs: with its bytecode cached (pip compiles it); PYTHONDONTWRITEBYTECODE
    # in the caller's environment would make every deploy compile ~50 modules again (~60 ms)
    if os.environ.get("BENCH_BYTECODE", "1") == "1":
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    digests = {f"svc{i:02d}": "sha256:" + f"{i:02d}" * 32 for i in range(COUNT)}
    rel = {"version": "v1", "project": "fleet", "created_at": time.time(),
           "provenance": {"branch": "main", "dirty": False}, "artifacts": [],
           "images": {n: {"kind": "oci", "coordinate": f"registry.example.test/bench/{n}", "digest": d}
                      for n, d in digests.items()}}
    (project / ".framework" / "releases").mkdir(parents=True)
    (project / ".framework" / "releases" / "v1.json").write_text(json.dumps(rel))

    def deploy() -> float:
        start = time.perf_counter()
        out = subprocess.run([FRAMEWORK, "env", "deploy", "fleet", "v1", "--yes", "--json", "--timeout", "300"],
                             cwd=project, env=env, capture_output=True, text=True)
        took = time.perf_counter() - start
        doc = json.loads(out.stdout)
        if out.returncode != 0 or doc["rollout"]["phase"] != "ready":
            raise SystemExit(f"deploy failed: {out.stdout[-2000:]} {out.stderr[-2000:]}")
        return took

    first = deploy()  # the first deploy creates everything and waits for 50 rollouts
    # the same objects the deploy applies: the render with the release's digests pinned
    from engine.project import find_project
    from engine.runtime.k8s_runtime import render_release

    _, objects = render_release(find_project(project), "fleet", rel["images"])
    items = [{k: v for k, v in o.items() if k != "__workload__"} for o in objects]
    # the documents exactly as the deploy hands them to kubectl: a stream of JSON objects (as `env
    # render` prints a stream of YAML ones)
    manifests = tmp / "fleet.json"
    manifests.write_text("".join(json.dumps(o) + "\n" for o in items))
    kubectl = [str(Path(cluster.env()["PATH"].split(os.pathsep)[0]) / "kubectl"), "--context", "k3d-demo",
               "apply", "--server-side", "--field-manager=framework", "--force-conflicts", "-f", str(manifests)]

    def apply_alone() -> float:
        start = time.perf_counter()
        subprocess.run(kubectl, env=env, capture_output=True, text=True, check=True)
        return time.perf_counter() - start

    subject, baseline = [], []
    for _ in range(ROUNDS):  # interleaved: machine load hits both alike
        baseline.append(apply_alone())
        subject.append(deploy())
    b, s = statistics.median(baseline), statistics.median(subject)
    print(f"first deploy (create + {COUNT} rollouts): {first:.2f}s")
    print(f"kubectl apply --server-side alone, {COUNT} Deployments (+ Service, Namespace): median {b:.3f}s")
    print(f"framework env deploy of the unchanged release: median {s:.3f}s")
    ratio = s / b
    print(f"ratio {ratio:.2f}x (aim <= {AIM}x): {'ok' if ratio <= AIM else 'ABOVE AIM'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
