"""Local clusters with the kwok provider (docs/reference-cluster.md#speed): `framework cluster up` against
`kwokctl create cluster` alone with the same flags (binary runtime, the locally built binaries) and one
simulated node, measured in the same run, each followed by its delete. Aim: <= 1.3x. Then
`framework cluster status` on the running cluster against `kubectl get nodes` alone. Aim: < 300 ms.

What `cluster up` adds: the interpreter and its imports, evaluating the environment's KCL, the provider
choice, renaming the context to k3d-<name>, restoring the current context, the record, and the status
it prints (a component liveness check and one `kubectl get nodes`).

    python bench/cluster.py     # BENCH_ROUNDS=3
    BENCH_SMOKE=1: one round, one status read (tests/test_bench_smoke.py)
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
SMOKE = os.environ.get("BENCH_SMOKE") == "1"  # one round, no aim (tests/test_bench_smoke.py)
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "1" if SMOKE else "3"))
STATUS_ROUNDS = 1 if SMOKE else 11
AIM, STATUS_AIM = 1.3, 0.300
FRAMEWORK = str(Path(sys.executable).parent / "framework")
KCL = """import framework

environment = framework.Environment {
    name = "local"
    kind = "self_managed"
    target = framework.K8sCluster {context = "k3d-bench", namespace = "bench", local_cluster = "kwok"}
}
"""


CPU: list[float] = []  # user+sys seconds of each timed child (wall time on a loaded machine is the queue's)


def _timed(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])} failed ({out.returncode}): {out.stdout[-1500:]} {out.stderr[-1500:]}")
    return took


def main() -> int:
    from engine.cluster.providers import Kwok, k8s_bin

    kwok = Kwok()
    if kwok.missing():
        raise SystemExit(f"cannot bench the kwok provider: {kwok.missing()} (make cluster-tools k8s-tools)")
    kwokctl, b = str(kwok.tool()), k8s_bin()
    tmp = Path(tempfile.mkdtemp(prefix="bench-cluster-"))
    project = tmp / "proj"
    (project / "deploy" / "kcl" / "local").mkdir(parents=True)
    (project / "framework.yaml").write_text("name: bench\nframework_version: 0.1.0\n")
    (project / "deploy" / "kcl" / "local" / "main.k").write_text(KCL)
    env = {k: v for k, v in os.environ.items() if not k.startswith("FRAMEWORK_")}
    env.update(HOME=str(tmp / "home"), KUBECONFIG=str(tmp / "kubeconfig"), KWOK_WORKDIR=str(tmp / "kwok"),
               FRAMEWORK_K8S_BIN=str(b), FRAMEWORK_KWOKCTL=kwokctl, FRAMEWORK_LEDGER_HOME=str(tmp / "ledger"),
               PATH=f"{b}{os.pathsep}{os.environ.get('PATH', '')}", NO_COLOR="1")
    alone = [kwokctl, "create", "cluster", "--name", "bench", "--runtime", "binary",
             "--kube-apiserver-binary", str(b / "kube-apiserver"), "--etcd-binary", str(b / "etcd"),
             "--kube-controller-manager-binary", str(b / "kube-controller-manager"),
             "--kube-scheduler-binary", str(b / "kube-scheduler"), "--kwok-controller-binary", str(b / "kwok"),
             "--kubeconfig", env["KUBECONFIG"], "--wait", "120s"]
    scale = [kwokctl, "scale", "node", "--name", "bench", "--replicas", "1"]
    delete = [kwokctl, "delete", "cluster", "--name", "bench", "--kubeconfig", env["KUBECONFIG"]]
    baseline, subject, status, nodes, status_cpu = [], [], [], [], []
    try:
        for _ in range(ROUNDS):  # interleaved: machine load hits both alike
            baseline.append(_timed(alone, env, project) + _timed(scale, env, project))
            _timed(delete, env, project)
            subject.append(_timed([FRAMEWORK, "cluster", "up", "local", "--wait", "--json"], env, project))
            for _ in range(STATUS_ROUNDS):
                nodes.append(_timed([str(b / "kubectl"), "--context", "k3d-bench", "get", "nodes", "-o", "json"],
                                    env, project))
                status.append(_timed([FRAMEWORK, "cluster", "status", "--json"], env, project))
                status_cpu.append(CPU[-1])
            doc = json.loads(subprocess.run([FRAMEWORK, "cluster", "down", "--json"], cwd=project, env=env,
                                            capture_output=True, text=True, timeout=300).stdout)
            if not doc.get("ok"):
                raise SystemExit(f"cluster down failed: {doc}")
    finally:
        subprocess.run(delete, env=env, capture_output=True, timeout=300)
        shutil.rmtree(tmp, ignore_errors=True)
    bl, sj, st, nd = (statistics.median(x) for x in (baseline, subject, status, nodes))
    print(f"kwokctl create cluster + scale node alone: median {bl:.2f}s ({ROUNDS} rounds)")
    print(f"framework cluster up --wait (kwok): median {sj:.2f}s")
    print(f"kubectl get nodes alone: median {nd * 1000:.0f} ms; framework cluster status: median {st * 1000:.0f} ms "
          f"(aim < {STATUS_AIM * 1000:.0f} ms): {'ok' if st < STATUS_AIM else 'ABOVE AIM'}; its CPU (user+sys, "
          f"kubectl's included) median {statistics.median(status_cpu) * 1000:.0f} ms; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    ratio = sj / bl
    print(f"cluster up / kwokctl alone: ratio {ratio:.2f}x (aim <= {AIM}x): {'ok' if ratio <= AIM else 'ABOVE AIM'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
