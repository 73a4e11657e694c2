"""A real Kubernetes control plane for the k8s runtime's tests and bench/k8s.py: etcd,
kube-apiserver, kube-controller-manager (the workload controllers), kube-scheduler, and KWOK
simulating one node's kubelet, so Deployments really roll out (pods scheduled, started, ready).

`make k8s-tools` builds the pinned binaries into ~/.cache/framework-k8s/<version>/bin (see
tools/k8s/go.mod); FRAMEWORK_K8S_BIN overrides the directory. The kubeconfig this writes has the
demo's `k3d-demo` context (a local cluster by name) and `remote-demo` (the same server, seen as a
remote cluster) and no current context: the runtime always names its context.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

K8S_VERSION = "v1.36.3"
BIN = Path(os.environ.get("FRAMEWORK_K8S_BIN") or Path.home() / ".cache" / "framework-k8s" / K8S_VERSION / "bin")
STAGES = Path(__file__).parent / "k8s" / "kwok-stages.yaml"
TOOLS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl", "kwok")
CONTROLLERS = ",".join((
    "deployment-controller", "replicaset-controller", "statefulset-controller", "daemonset-controller",
    "job-controller", "garbage-collector-controller", "namespace-controller", "serviceaccount-controller",
))


def missing_tools() -> list[str]:
    return [t for t in TOOLS if not (BIN / t).is_file()]


def _port() -> int:
    from engine.processes import free_port

    return free_port()


def _kubeconfig(server: str, token: str, contexts: list[str], current: str | None) -> str:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "test", "cluster": {"server": server, "insecure-skip-tls-verify": True}}],
        "users": [{"name": "admin", "user": {"token": token}}],
        "contexts": [{"name": c, "context": {"cluster": "test", "user": "admin"}} for c in contexts],
    }
    if current:
        doc["current-context"] = current
    return json.dumps(doc)


class TestCluster:
    __test__ = False  # not a pytest class

    def __init__(self, root: Path) -> None:
        self.root = root
        self.procs: list[tuple[str, subprocess.Popen[bytes]]] = []
        self.kubeconfig = root / "kubeconfig"
        self.server = ""

    def _spawn(self, name: str, argv: list[str]) -> None:
        log = (self.root / f"{name}.log").open("wb")
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
        self.procs.append((name, proc))

    def log_tail(self, name: str, lines: int = 20) -> str:
        try:
            return "\n".join((self.root / f"{name}.log").read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def _wait(self, what: str, ok, timeout: float = 90.0) -> None:  # type: ignore[no-untyped-def]
        from tests.waiting import until

        def check() -> bool:
            for name, proc in self.procs:
                if proc.poll() is not None:
                    raise RuntimeError(f"{name} exited {proc.returncode} while waiting for {what}:\n"
                                       f"{self.log_tail(name)}")
            return bool(ok())

        until(check, timeout, what=what, interval=0.2)

    def kubectl(self, *args: str, stdin: str | None = None, context: str = "k3d-demo") -> str:
        out = subprocess.run([str(BIN / "kubectl"), "--kubeconfig", str(self.kubeconfig), "--context", context,
                              *args], input=stdin, capture_output=True, text=True, timeout=60)
        if out.returncode != 0:
            raise RuntimeError(f"kubectl {' '.join(args)}: {out.stderr.strip()}")
        return out.stdout

    def start(self) -> TestCluster:
        import secrets as pysecrets

        import httpx
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        gone = missing_tools()
        if gone:
            raise RuntimeError(f"missing {', '.join(gone)} in {BIN}: run `make k8s-tools`")
        self.root.mkdir(parents=True, exist_ok=True)
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        (self.root / "sa.key").write_bytes(key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
        token = pysecrets.token_hex(16)
        (self.root / "tokens.csv").write_text(f'{token},admin,admin,"system:masters"\n')
        etcd_port, peer_port, api_port = _port(), _port(), _port()
        self._spawn("etcd", [
            str(BIN / "etcd"), "--name", "default", "--data-dir", str(self.root / "etcd"),
            "--listen-client-urls", f"http://127.0.0.1:{etcd_port}",
            "--advertise-client-urls", f"http://127.0.0.1:{etcd_port}",
            "--listen-peer-urls", f"http://127.0.0.1:{peer_port}",
            "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer_port}",
            "--initial-cluster", f"default=http://127.0.0.1:{peer_port}",
            "--unsafe-no-fsync", "--listen-metrics-urls", f"http://127.0.0.1:{_port()}",
        ])
        self._spawn("kube-apiserver", [
            str(BIN / "kube-apiserver"), f"--etcd-servers=http://127.0.0.1:{etcd_port}",
            "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", f"--secure-port={api_port}",
            f"--cert-dir={self.root / 'certs'}", f"--token-auth-file={self.root / 'tokens.csv'}",
            "--authorization-mode=RBAC", "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={self.root / 'sa.key'}",
            f"--service-account-signing-key-file={self.root / 'sa.key'}",
            # no node-lifecycle controller runs: nothing would lift the not-ready taint new nodes get
            "--service-cluster-ip-range=10.96.0.0/16",
            "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition",
            "--enable-priority-and-fairness=false",
        ])
        self.server = f"https://127.0.0.1:{api_port}"

        def ready() -> bool:
            try:
                r = httpx.get(f"{self.server}/readyz", headers={"Authorization": f"Bearer {token}"},
                              verify=False, timeout=2)
            except httpx.HTTPError:
                return False
            return r.status_code == 200

        self._wait("kube-apiserver /readyz", ready, timeout=120)
        cp = self.root / "control-plane.kubeconfig"
        cp.write_text(_kubeconfig(self.server, token, ["cp"], "cp"))
        self.kubeconfig.write_text(_kubeconfig(self.server, token, ["k3d-demo", "remote-demo"], None))
        self._spawn("kube-controller-manager", [
            str(BIN / "kube-controller-manager"), f"--kubeconfig={cp}", f"--controllers={CONTROLLERS}",
            "--leader-elect=false", "--secure-port=0", "--concurrent-deployment-syncs=10",
            "--concurrent-replicaset-syncs=10",
        ])
        self._spawn("kube-scheduler", [
            str(BIN / "kube-scheduler"), f"--kubeconfig={cp}", "--leader-elect=false", "--secure-port=0",
        ])
        self._spawn("kwok", [
            str(BIN / "kwok"), f"--kubeconfig={cp}", f"--config={STAGES}", "--manage-all-nodes=false",
            "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake", "--cidr=10.244.0.0/16",
        ])
        self.kubectl("apply", "-f", "-", stdin=json.dumps({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "kwok-node-0", "annotations": {"kwok.x-k8s.io/node": "fake"},
                         "labels": {"kubernetes.io/hostname": "kwok-node-0", "type": "kwok"}},
            "status": {"allocatable": {"cpu": "64", "memory": "256Gi", "pods": "500"},
                       "capacity": {"cpu": "64", "memory": "256Gi", "pods": "500"}},
        }))

        def node_ready() -> bool:
            out = self.kubectl("get", "node", "kwok-node-0", "-o",
                               "jsonpath={.status.conditions[?(@.type=='Ready')].status}")
            return out.strip() == "True"

        self._wait("the kwok node to be Ready", node_ready, timeout=60)
        return self

    def stop(self) -> None:
        """SIGTERM every component, then SIGKILL what is still up after 3 s (a test cluster's state is
        thrown away: no graceful drain to wait for)."""
        for _name, proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
        deadline = time.monotonic() + 3
        for _name, proc in reversed(self.procs):
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        self.procs.clear()
        shutil.rmtree(self.root / "etcd", ignore_errors=True)

    def env(self) -> dict[str, str]:
        """The environment a CLI run against this cluster gets: KUBECONFIG, and kubectl on PATH."""
        return {"KUBECONFIG": str(self.kubeconfig), "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
