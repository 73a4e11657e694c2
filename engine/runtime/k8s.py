"""The `k8s` runtime: kubectl against exactly the declared context (spec 2, deploy targets; Deploy
rule 9; DESIGN, Processes: the field's own tools).

Why kubectl and not the `kubernetes` Python client: kubectl is what a K8sCluster user already has
and trusts with their kubeconfig (exec credential plugins, OIDC, GKE/EKS auth helpers all work as
they do for them); server-side apply with an ApplySet (`--prune --applyset`) is implemented there
and nowhere else; and a deploy then does exactly what `kubectl apply --server-side` of
`env render` would do. Every call names `--context` explicitly; the current context is never read.

Objects are applied with field manager `framework` and `--force-conflicts` (the environment's KCL is
the declared truth: a hand edit is overwritten by the next deploy, after `env status` reported it
as drift). Every rendered object except the Namespace belongs to the ApplySet
`framework-<env>` (a Secret in the namespace), so an object removed from the KCL is pruned by the
next full deploy. Namespaces are created when missing (the ApplySet's parent lives in one) and are
never pruned.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from typing import Any

from engine.environments.model import Target
from engine.errors import EngineError
from engine.runtime.external import RuntimeUnavailable

FIELD_MANAGER = "framework"
LOCAL_PREFIXES = ("k3d-",)  # contexts `cluster up` creates (spec 2: lifecycle commands pin k3d-<name>)
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Job")


class KubectlFailed(EngineError):
    code = "kubectl_failed"


def is_local(context: str) -> bool:
    """A local cluster (secrets sync applies; preflight does not): a context `cluster up` creates."""
    return context.startswith(LOCAL_PREFIXES)


def applyset_name(env: str) -> str:
    return f"framework-{env}"


class Kube:
    """kubectl pinned to one context (rule 9: no override, no current-context)."""

    def __init__(self, context: str, *, timeout: float = 120.0) -> None:
        self.context = context
        self.timeout = timeout

    def run(self, args: list[str], *, stdin: str | None = None, env: dict[str, str] | None = None,
            timeout: float | None = None) -> subprocess.CompletedProcess[str]:
        argv = ["kubectl", "--context", self.context, *args]
        try:
            return subprocess.run(argv, input=stdin, capture_output=True, text=True,
                                  timeout=timeout or self.timeout, env={**os.environ, **(env or {})})
        except subprocess.TimeoutExpired as exc:
            raise KubectlFailed(f"kubectl {args[0]} did not answer within {exc.timeout:g}s",
                                exit_code=2, code="cluster_unreachable") from exc
        except OSError as exc:
            raise RuntimeUnavailable(f"cannot run kubectl: {exc}") from exc

    def check(self, args: list[str], **kw: Any) -> str:
        out = self.run(args, **kw)
        if out.returncode != 0:
            raise kubectl_error(args, out.stderr)
        return out.stdout

    def get(self, resources: str, namespace: str, *, selector: str | None = None) -> list[dict[str, Any]]:
        args = ["get", resources, "-n", namespace, "-o", "json"]
        if selector:
            args += ["-l", selector]
        doc = json.loads(self.check(args) or "{}")
        return list(doc.get("items") or [])

    def apply(self, manifests: list[dict[str, Any]], *, prune_set: str | None, namespace: str
              ) -> list[dict[str, Any]]:
        """Server-side apply; with `prune_set`, objects of that ApplySet not in `manifests` are pruned.
        Returns the applied objects as the API server answered them (generation and status included)."""
        if not manifests:
            return []
        stream = json.dumps({"apiVersion": "v1", "kind": "List", "items": manifests})
        args = ["apply", "--server-side", f"--field-manager={FIELD_MANAGER}", "--force-conflicts", "-f", "-",
                "-o", "json"]
        env = None
        if prune_set is not None:
            args += ["-n", namespace, "--prune", f"--applyset={prune_set}"]
            env = {"KUBECTL_APPLYSET": "true"}
        out = self.check(args, stdin=stream, env=env)
        try:
            doc = json.loads(out or "{}")
        except ValueError:
            return []
        return list(doc.get("items") or ([doc] if doc.get("kind") else []))


def kubectl_error(args: list[str], stderr: str) -> EngineError:
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    text = lines[-1] if lines else "no output"
    unreachable = any(s in stderr for s in ("connection refused", "no such host", "i/o timeout",
                                             "Unable to connect to the server", "TLS handshake timeout"))
    if unreachable:
        return KubectlFailed(f"the cluster is unreachable: {text}", exit_code=2, code="cluster_unreachable")
    return KubectlFailed(f"kubectl {args[0]} failed: {text}")


_CONTEXTS: tuple[float, str, list[str]] | None = None
CONTEXTS_TTL = 5.0  # a deploy reads them once; a long-lived dashboard sees a new context within seconds


def contexts() -> list[str]:
    """The kubeconfig's context names (cached for CONTEXTS_TTL seconds per KUBECONFIG)."""
    global _CONTEXTS
    key = os.environ.get("KUBECONFIG", "")
    if _CONTEXTS is not None and _CONTEXTS[1] == key and time.monotonic() - _CONTEXTS[0] < CONTEXTS_TTL:
        return _CONTEXTS[2]
    names = _read_contexts()
    _CONTEXTS = (time.monotonic(), key, names)
    return names


def _read_contexts() -> list[str]:
    """What `kubectl config get-contexts -o name` prints (sorted, unique), read from the kubeconfig
    files themselves (KUBECONFIG's list, else ~/.kube/config), sparing a kubectl start (~50 ms);
    anything unusual (unreadable YAML, an unexpected shape) is left to kubectl itself."""
    names = _contexts_from_files()
    return names if names is not None else _kubectl_contexts()


def _contexts_from_files() -> list[str] | None:
    import yaml

    listed = os.environ.get("KUBECONFIG", "")
    paths = [p for p in listed.split(os.pathsep) if p] if listed else [os.path.expanduser("~/.kube/config")]
    names: set[str] = set()
    for path in paths:
        try:
            with open(path, encoding="utf-8") as fh:
                doc = yaml.safe_load(fh)
        except FileNotFoundError:
            continue  # kubectl skips a missing file too
        except (OSError, ValueError, yaml.YAMLError):
            return None
        if doc is None:
            continue
        entries = doc.get("contexts") if isinstance(doc, dict) else None
        if not isinstance(entries, list | None):
            return None
        for entry in entries or []:
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
                return None
            names.add(entry["name"])
    return sorted(names)


def _kubectl_contexts() -> list[str]:
    try:
        out = subprocess.run(["kubectl", "config", "get-contexts", "-o", "name"], capture_output=True,
                             text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RuntimeUnavailable(f"cannot run kubectl: {exc}") from exc
    return list(out.stdout.split())


def check_k8s(target: Target) -> Kube:
    """kubectl on the declared context, once kubectl is present and the kubeconfig knows it (rule 9)."""
    context = target.context or ""
    if not shutil.which("kubectl"):
        raise RuntimeUnavailable(
            "this environment deploys to a Kubernetes cluster, and `kubectl` is not installed",
            hint="install kubectl and configure the context the environment declares",
        )
    known = contexts()
    if context not in known:
        raise RuntimeUnavailable(
            f"cluster context {context!r} declared by the environment is missing from the local kubeconfig",
            hint="applies target exactly the declared context, with no override; add it to your kubeconfig "
            f"(known contexts: {', '.join(known) or 'none'})",
        )
    return Kube(context)


def split_namespaces(manifests: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(Namespaces, everything else): namespaces are applied first and are never pruned."""
    ns = [m for m in manifests if m.get("kind") == "Namespace"]
    return ns, [m for m in manifests if m.get("kind") != "Namespace"]
