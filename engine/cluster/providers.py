"""Cluster providers behind one interface (docs/reference-cluster.md#providers).

- `k3d`: a real k3s cluster in Docker containers, created by the k3d CLI from a k3d config file. It
  runs your containers. Needs the k3d CLI, a Docker daemon and k3s's node image.
- `kwok`: KWOK's `kwokctl` with its binary runtime: etcd, kube-apiserver, kube-controller-manager,
  kube-scheduler and kwok-controller as local processes, started from locally built binaries. Nodes
  and pods are simulated: a Deployment rolls out and its pods report Running, but no container runs.

The choice rule (docs/reference-cluster.md#provider-choice) is `choose_provider`: the `--provider` flag,
else the declaration (`K8sCluster.local_cluster` or the k3d file's `x-framework.provider`), else the
provider of the cluster that already exists, else auto: k3d when its CLI is installed and a Docker
daemon answers, kwok when kwokctl and the Kubernetes binaries are there, else exit 1 with a hint.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from engine.cluster.config import ClusterConfig, ProviderName, k3d_document
from engine.errors import EngineError
from engine.paths import pinned_tool

K8S_VERSION = "v1.36.3"
KUBE_BINARIES = ("kube-apiserver", "etcd", "kube-controller-manager", "kube-scheduler", "kwok")
INSTALL_HINT = ("install one: `make cluster-tools` (kwokctl and k3d, pinned, into .tools/bin; kwok also needs "
                "`make k8s-tools`), or install k3d and Docker (https://k3d.io)")
DESCRIPTIONS: dict[str, str] = {
    "k3d": "k3d (k3s in Docker containers: pods run your containers)",
    "kwok": "kwok (simulated nodes: pods do not run containers)",
}


class ClusterError(EngineError):
    code = "cluster_failed"


class NoProvider(EngineError):
    code = "no_cluster_provider"


def k8s_bin() -> Path:
    """The locally built Kubernetes binaries (`make k8s-tools`): $FRAMEWORK_K8S_BIN, else the shared cache."""
    override = os.environ.get("FRAMEWORK_K8S_BIN")
    return Path(override) if override else Path.home() / ".cache" / "framework-k8s" / K8S_VERSION / "bin"


def run_tool(argv: list[str], *, timeout: float = 300.0, env: dict[str, str] | None = None,
         input: str | None = None) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, input=input,
                              env={**os.environ, **(env or {})})
    except subprocess.TimeoutExpired as exc:
        raise ClusterError(f"{Path(argv[0]).name} {argv[1] if len(argv) > 1 else ''} did not finish within "
                           f"{timeout:g}s") from exc
    except OSError as exc:
        raise ClusterError(f"cannot run {argv[0]}: {exc.strerror or exc}") from exc


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_ERROR_MARKS = ("FATA", "ERRO", "error:", "Error:")


def relayed(tool: str, out: subprocess.CompletedProcess[str]) -> str:
    """The tool's own error: its first error line and its last line when it marks errors (k3d's ERRO and
    FATA), else its last meaningful lines; JSON log lines (kwokctl's) reduced to their message."""
    lines: list[str] = []
    for raw in (out.stderr or out.stdout or "").splitlines():
        line = _ANSI.sub("", raw).strip()
        if not line:
            continue
        if line.startswith("{"):
            try:
                doc = json.loads(line)
            except ValueError:
                pass
            else:
                line = " ".join(str(doc.get(k)) for k in ("msg", "err") if doc.get(k))
        lines.append(line)
    errors = [ln for ln in lines if any(m in ln for m in _ERROR_MARKS)]
    if errors:
        lines = list(dict.fromkeys([errors[0], lines[-1]]))
    return f"{tool}: " + (" | ".join(lines[-3:]) if lines else f"exit {out.returncode}")


def kubeconfig_path() -> Path:
    """The kubeconfig file kubectl writes to: the first file of $KUBECONFIG, else ~/.kube/config."""
    env = os.environ.get("KUBECONFIG", "")
    first = next((p for p in env.split(os.pathsep) if p), None)
    return Path(first) if first else Path.home() / ".kube" / "config"


class Provider(Protocol):
    name: ProviderName

    def missing(self) -> str | None:
        """Why this provider cannot run here (None: it can)."""

    def exists(self, cfg: ClusterConfig) -> bool: ...

    def create(self, cfg: ClusterConfig, *, wait: bool, record_dir: Path) -> None: ...

    def delete(self, cfg: ClusterConfig) -> None: ...

    def components(self, cfg: ClusterConfig) -> list[dict[str, Any]]: ...


class Kwok:
    """kwokctl, binary runtime, from the locally built binaries; its context is renamed k3d-<name>."""

    name: ProviderName = "kwok"

    def tool(self) -> str | None:
        return pinned_tool("kwokctl", "FRAMEWORK_KWOKCTL")

    def missing(self) -> str | None:
        if self.tool() is None:
            return "kwokctl is not installed"
        gone = [b for b in KUBE_BINARIES if not (k8s_bin() / b).is_file()]
        return f"the Kubernetes binaries are missing from {k8s_bin()}: {', '.join(gone)}" if gone else None

    def _kwokctl(self, *args: str, timeout: float = 300.0) -> subprocess.CompletedProcess[str]:
        tool = self.tool()
        if tool is None:
            raise NoProvider("kwokctl is not installed", hint=INSTALL_HINT)
        return run_tool([tool, *args], timeout=timeout)

    def exists(self, cfg: ClusterConfig) -> bool:
        """What `kwokctl get clusters` lists: the clusters with a configuration in the work directory."""
        return (self.workdir(cfg) / "kwok.yaml").is_file()

    def workdir(self, cfg: ClusterConfig) -> Path:
        base = os.environ.get("KWOK_WORKDIR") or str(Path.home() / ".kwok")
        return Path(base) / "clusters" / cfg.name

    def create(self, cfg: ClusterConfig, *, wait: bool, record_dir: Path) -> None:
        reason = self.missing()
        if reason:
            raise NoProvider(f"cannot create a kwok cluster: {reason}", hint=INSTALL_HINT)
        record_dir.mkdir(parents=True, exist_ok=True)
        logs = record_dir / f"{cfg.name}.pod.log"  # KWOK serves this as every pod's log (CRI format)
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f000Z")
        logs.write_text(f"{stamp} stdout F [kwok] simulated log line: this cluster's pods run no container\n")
        from engine.processes import free_port

        # kwokctl's own port choice counts down from 32767 in each process: two clusters created at once
        # (parallel test workers, two checkouts) would pick the same ports; the OS's free ones do not. The
        # etcd peer port has no flag: it is an option of the configuration document.
        rules = record_dir / f"{cfg.name}.kwok.yaml"
        rules.write_text("\n---\n".join(json.dumps(doc) for doc in (
            {"kind": "KwokctlConfiguration", "apiVersion": "config.kwok.x-k8s.io/v1alpha1",
             "options": {"etcdPeerPort": free_port()}},
            {"kind": "ClusterLogs", "apiVersion": "kwok.x-k8s.io/v1alpha1",
             "metadata": {"name": "framework-simulated-logs"},
             "spec": {"logs": [{"logsFile": str(logs), "follow": False}]}})))
        b = k8s_bin()
        kubeconfig = kubeconfig_path()
        kubeconfig.parent.mkdir(parents=True, exist_ok=True)
        before = _read_kubeconfig(kubeconfig).get("current-context")  # kwokctl switches it; the framework never does
        ports = [arg for flag in ("--kube-apiserver-port", "--etcd-port", "--kube-controller-manager-port",
                                  "--kube-scheduler-port", "--controller-port") for arg in (flag, str(free_port()))]
        try:
            out = self._kwokctl(
                "create", "cluster", "--name", cfg.name, "--runtime", "binary", "--config", str(rules), *ports,
                "--kube-apiserver-binary", str(b / "kube-apiserver"), "--etcd-binary", str(b / "etcd"),
                "--kube-controller-manager-binary", str(b / "kube-controller-manager"),
                "--kube-scheduler-binary", str(b / "kube-scheduler"), "--kwok-controller-binary", str(b / "kwok"),
                "--kubeconfig", str(kubeconfig), "--timeout", "180s", "--wait", "120s" if wait else "60s",
                timeout=240)
        except ClusterError:  # kwokctl itself hung: what it started does not outlive the failure
            self._kwokctl("delete", "cluster", "--name", cfg.name, "--kubeconfig", str(kubeconfig), timeout=120)
            raise
        if out.returncode != 0:
            self._kwokctl("delete", "cluster", "--name", cfg.name, "--kubeconfig", str(kubeconfig), timeout=120)
            raise ClusterError(f"kwokctl could not create cluster {cfg.name!r}", hint=relayed("kwokctl", out))
        # the lifecycle commands pin k3d-<name> (docs/reference-cluster.md#context)
        _rename_context(kubeconfig, f"kwok-{cfg.name}", cfg.context, before)
        nodes = self._kwokctl("scale", "node", "--name", cfg.name, "--replicas", str(cfg.servers + cfg.agents),
                              timeout=60)
        if nodes.returncode != 0:
            raise ClusterError(f"kwokctl could not add the simulated nodes of {cfg.name!r}",
                               hint=relayed("kwokctl", nodes))

    def delete(self, cfg: ClusterConfig) -> None:
        kubeconfig = kubeconfig_path()
        out = self._kwokctl("delete", "cluster", "--name", cfg.name, "--kubeconfig", str(kubeconfig), timeout=120)
        if out.returncode != 0:
            raise ClusterError(f"kwokctl could not delete cluster {cfg.name!r}", hint=relayed("kwokctl", out))
        _forget_context(kubeconfig, cfg.context)

    def components(self, cfg: ClusterConfig) -> list[dict[str, Any]]:
        from engine.processes import pid_alive

        rows = []
        pids = self.workdir(cfg) / "pids"
        for path in sorted(pids.glob("*.pid")) if pids.is_dir() else []:
            try:
                pid = int(path.read_text().strip() or "0")
            except (OSError, ValueError):
                pid = 0
            rows.append({"name": path.stem, "pid": pid or None,
                         "state": "running" if pid and pid_alive(pid) else "stopped"})
        return rows


class K3d:
    """The k3d CLI: `k3d cluster create --config <file>`; kubeconfig context k3d-<name> (k3d's own)."""

    name: ProviderName = "k3d"

    def tool(self) -> str | None:
        return pinned_tool("k3d", "FRAMEWORK_K3D")

    def missing(self) -> str | None:
        if self.tool() is None:
            return "k3d is not installed"
        docker = pinned_tool("docker")
        if docker is None:
            return "docker is not installed"
        info = run_tool([docker, "info", "--format", "{{.ServerVersion}}"], timeout=20)
        return None if info.returncode == 0 else "no Docker daemon answers"

    def _k3d(self, *args: str, timeout: float = 600.0) -> subprocess.CompletedProcess[str]:
        tool = self.tool()
        if tool is None:
            raise NoProvider("k3d is not installed", hint=INSTALL_HINT)
        return run_tool([tool, *args], timeout=timeout)

    def write_config(self, cfg: ClusterConfig, record_dir: Path) -> Path:
        import yaml

        record_dir.mkdir(parents=True, exist_ok=True)
        path = record_dir / f"{cfg.name}.k3d.yaml"
        path.write_text(yaml.safe_dump(k3d_document(cfg), sort_keys=False))
        return path

    def validate(self, cfg: ClusterConfig, record_dir: Path) -> Path:
        """The real k3d checks the config against its schema (`k3d config migrate`); its error is relayed."""
        path = self.write_config(cfg, record_dir)
        out = self._k3d("config", "migrate", str(path), str(path.with_suffix(".checked.yaml")), timeout=60)
        path.with_suffix(".checked.yaml").unlink(missing_ok=True)
        if out.returncode != 0:
            raise ClusterError(f"k3d refused the cluster config {cfg.source}", hint=relayed("k3d", out))
        return path

    def exists(self, cfg: ClusterConfig) -> bool:
        out = self._k3d("cluster", "list", "-o", "json", timeout=60)
        if out.returncode != 0:
            return False
        try:
            return any(c.get("name") == cfg.name for c in json.loads(out.stdout or "[]"))
        except ValueError:
            return False

    def create(self, cfg: ClusterConfig, *, wait: bool, record_dir: Path) -> None:
        path = self.validate(cfg, record_dir)
        args = ["cluster", "create", "--config", str(path), "--kubeconfig-update-default",
                "--kubeconfig-switch-context=false"]
        out = self._k3d(*args, *(["--wait", "--timeout", "300s"] if wait else []))
        if out.returncode != 0:
            raise ClusterError(f"k3d could not create cluster {cfg.name!r}", hint=relayed("k3d", out))

    def delete(self, cfg: ClusterConfig) -> None:
        out = self._k3d("cluster", "delete", cfg.name, timeout=300)
        if out.returncode != 0:
            raise ClusterError(f"k3d could not delete cluster {cfg.name!r}", hint=relayed("k3d", out))

    def components(self, cfg: ClusterConfig) -> list[dict[str, Any]]:
        out = self._k3d("node", "list", "-o", "json", timeout=60)
        try:
            nodes = json.loads(out.stdout or "[]") if out.returncode == 0 else []
        except ValueError:
            nodes = []
        return [{"name": n.get("name"), "pid": None, "state": str((n.get("State") or {}).get("Status") or "unknown")}
                for n in nodes if (n.get("runtimeLabels") or {}).get("k3d.cluster") == cfg.name]


PROVIDERS: dict[str, type[Kwok] | type[K3d]] = {"kwok": Kwok, "k3d": K3d}


def provider(name: str) -> Provider:
    return PROVIDERS[name]()


def choose_provider(cfg: ClusterConfig, flag: str | None, recorded: str | None) -> Provider:
    """The provider choice rule (docs/reference-cluster.md#provider-choice)."""
    wanted = flag or (cfg.provider if cfg.provider != "auto" else None) or recorded
    if wanted is not None:
        return provider(wanted)
    reasons = []
    for name in ("k3d", "kwok"):
        candidate = provider(name)
        reason = candidate.missing()
        if reason is None:
            return candidate
        reasons.append(f"{name}: {reason}")
    raise NoProvider("no local cluster provider can run here (" + "; ".join(reasons) + ")", hint=INSTALL_HINT)


def _read_kubeconfig(kubeconfig: Path) -> dict[str, Any]:
    import yaml

    try:
        doc = yaml.safe_load(kubeconfig.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, yaml.YAMLError) as exc:
        raise ClusterError(f"cannot read the kubeconfig {kubeconfig}: {exc}") from exc
    return doc if isinstance(doc, dict) else {}


def _rename_context(kubeconfig: Path, old: str, new: str, current: str | None) -> None:
    """`kubectl config rename-context old new` and the current context put back, in one read and one write
    of the file (two kubectl starts less on `cluster up`)."""
    import yaml

    from engine.paths import atomic_write_bytes

    doc = _read_kubeconfig(kubeconfig)
    contexts = [c for c in doc.get("contexts") or [] if isinstance(c, dict)]
    if not any(c.get("name") == old for c in contexts):
        raise ClusterError(f"cannot name the kubeconfig context {new}: kwokctl wrote no context {old!r} "
                           f"to {kubeconfig}")
    doc["contexts"] = [dict(c, name=new) if c.get("name") == old else c for c in contexts if c.get("name") != new]
    doc["current-context"] = current or ""
    atomic_write_bytes(kubeconfig, yaml.safe_dump(doc, sort_keys=False).encode(), mode=0o600)


def _kubeconfig_cmd(kubeconfig: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_tool(["kubectl", "--kubeconfig", str(kubeconfig), "config", *args], timeout=30)


def _current_context(kubeconfig: Path) -> str | None:
    if not kubeconfig.is_file():
        return None
    out = _kubeconfig_cmd(kubeconfig, "current-context")
    return (out.stdout.strip() or None) if out.returncode == 0 else None


def _set_current_context(kubeconfig: Path, context: str | None) -> None:
    if context:
        _kubeconfig_cmd(kubeconfig, "use-context", context)
    else:
        _kubeconfig_cmd(kubeconfig, "unset", "current-context")


def _forget_context(kubeconfig: Path, context: str) -> None:
    """Remove `context` (and the cluster and user it names, when no other context uses them)."""
    if not kubeconfig.is_file():
        return
    out = _kubeconfig_cmd(kubeconfig, "view", "-o", "json")
    try:
        doc = json.loads(out.stdout or "{}")
    except ValueError:
        return
    ctx = next((c for c in doc.get("contexts") or [] if c.get("name") == context), None)
    if ctx is None:
        return
    if _current_context(kubeconfig) == context:
        _set_current_context(kubeconfig, None)
    _kubeconfig_cmd(kubeconfig, "delete-context", context)
    others = [c for c in doc.get("contexts") or [] if c.get("name") != context]
    cluster, user = (ctx.get("context") or {}).get("cluster"), (ctx.get("context") or {}).get("user")
    if cluster and not any((c.get("context") or {}).get("cluster") == cluster for c in others):
        _kubeconfig_cmd(kubeconfig, "delete-cluster", cluster)
    if user and not any((c.get("context") or {}).get("user") == user for c in others):
        _kubeconfig_cmd(kubeconfig, "unset", f"users.{user}")


