"""The `k8s` runtime: kubectl against exactly the declared context (deploy
rule 9: no override; docs/reference-k8s.md#why-kubectl-not-the-kubernetes-python-client).

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
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from engine.errors import EngineError
from engine.runtime.external import RuntimeUnavailable

if TYPE_CHECKING:  # light at import: the deploy's early kubectl (k8s_early.py) starts before pydantic loads
    from engine.environments.model import Target

FIELD_MANAGER = "framework"
# Contexts the local-cluster tools create for a cluster on this machine: `k3d-<name>` (`cluster up`:
# the cluster lifecycle commands pin k3d-<cluster-name>), kind's `kind-<name>`, and the fixed names of
# minikube, Docker Desktop, Rancher Desktop, Colima and OrbStack.
LOCAL_PREFIXES = ("k3d-", "kind-")
LOCAL_NAMES = ("minikube", "docker-desktop", "docker-for-desktop", "rancher-desktop", "colima", "orbstack")
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Job")


class KubectlFailed(EngineError):
    code = "kubectl_failed"


def is_local(context: str) -> bool:
    """A local cluster (docs/reference-k8s.md#local-clusters: `env secrets sync` applies to local clusters
    only; deploy preflight runs for remote clusters only): the context is one a local-cluster tool creates on
    this machine (LOCAL_PREFIXES, LOCAL_NAMES). The one rule both use. Deliberately by name, not by a loopback
    server address: a tunnel or port-forward to a remote cluster is on loopback too, and must not
    receive a dotenv file's secrets nor skip its preflight."""
    return context.startswith(LOCAL_PREFIXES) or context in LOCAL_NAMES


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
        pending = self.start_apply(prune_set=prune_set, namespace=namespace)
        pending.send(manifests)
        return pending.result()

    def start_apply(self, *, prune_set: str | None, namespace: str) -> PendingApply:
        """`kubectl apply` started now, its objects sent later (PendingApply.send)."""
        return PendingApply(self, prune_set=prune_set, namespace=namespace)


# kubectl's input ends only when this guard says so: `awk` passes the objects through line by line
# (kubectl reads them, maps their kinds and fetches their schemas at once) and ends kubectl's input
# only on the line `GO`, which no JSON document is. Its own input ending without it (the deploy was
# refused, or died) kills the whole process group, kubectl included, while awk still holds
# kubectl's input open: kubectl never sees the end of a stream it was not cleared to apply.
GUARD = ("awk '$0 == \"GO\" { go = 1; exit } { print; fflush() } END { if (!go) system(\"kill -9 0\") }' "
         '| "$@"')
CLEARED = "GO\n"


def manifest_stream(manifests: list[dict[str, Any]]) -> str:
    """The objects as kubectl reads them: a stream of JSON documents, as `env render` prints a stream
    of YAML ones (not one v1/List: kubectl checks the server's field validation per object kind in
    the small OpenAPI v3 documents of its group, where a List makes it fetch and parse the whole
    OpenAPI v2 document, ~75 ms)."""
    return "".join(json.dumps(m) + "\n" for m in manifests)


class PendingApply:
    """One `kubectl apply --server-side` started before its objects are cleared for applying:
    kubectl's own start (the Go runtime, loading the kubeconfig) overlaps the deploy's stages up to
    the promotion. Its objects may be written early (`preload`: kubectl decodes them and reads their
    kinds' OpenAPI documents meanwhile), but kubectl's input ends, and kubectl applies, only when
    `send` clears them once the promotion is recorded (GUARD); `cancel` (a deploy refused before its
    apply), a deploy that dies, or a timeout kills kubectl with its input still open."""

    def __init__(self, kube: Kube, *, prune_set: str | None, namespace: str) -> None:
        self.kube, self.prune_set, self.namespace = kube, prune_set, namespace
        args = ["apply", "--server-side", f"--field-manager={FIELD_MANAGER}", "--force-conflicts", "-f", "-",
                "-o", "json"]
        env = None
        if prune_set is not None:
            args += ["-n", namespace, "--prune", f"--applyset={prune_set}"]
            env = {"KUBECTL_APPLYSET": "true"}
        self.args = args
        self.sent = False
        self.preloaded: str | None = None  # the objects written before they were cleared
        self.prepared: tuple[Any, Any] | None = None  # ((images, targets), the K8sRuntime that preloaded them)
        self._objects: list[dict[str, Any]] = []  # the preloaded objects themselves
        self._writers: list[Any] = []
        # its own process group (in this session: a terminal stays reachable for an auth plugin), so
        # the guard's kill reaches kubectl and the guard, never this process
        try:
            self.proc = subprocess.Popen(
                ["sh", "-c", GUARD, "sh", "kubectl", "--context", kube.context, *args],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                env={**os.environ, **(env or {})}, process_group=0)
        except OSError as exc:
            raise RuntimeUnavailable(f"cannot run kubectl: {exc}") from exc
        assert self.proc.stdin is not None
        self._pipe: IO[str] = self.proc.stdin
        self.proc.stdin = None  # written by _write's threads; communicate() only reads

    def matches(self, *, prune_set: str | None, namespace: str,
                manifests: list[dict[str, Any]] | None = None) -> bool:
        """Started for this apply, and holding no other objects than `manifests` (when given)."""
        if self.sent or self.prune_set != prune_set or self.namespace != namespace:
            return False
        return manifests is None or self.preloaded is None or self._holds(manifests)

    def _holds(self, manifests: list[dict[str, Any]]) -> bool:
        """The preloaded stream is exactly these objects (the same objects: no second encoding)."""
        same = len(manifests) == len(self._objects) and all(
            a is b for a, b in zip(manifests, self._objects, strict=True))
        return same or manifest_stream(manifests) == self.preloaded

    def preload(self, manifests: list[dict[str, Any]]) -> bool:
        """Write the objects now, not yet cleared: kubectl reads them while the deploy's stages run.
        Already given a stream (`preload_stream`): whether it is exactly these objects (then they are
        the ones `send` clears); False means this kubectl holds other objects and must not be sent."""
        if self.sent:
            return False
        if self.preloaded is not None:
            if not self._holds(manifests):
                return False
            self._objects = list(manifests)
            return True
        self.preloaded, self._objects = manifest_stream(manifests), list(manifests)
        self._write(self.preloaded, close=False)
        return True

    def preload_stream(self, stream: str) -> None:
        """Write an encoded stream now, not yet cleared (engine/runtime/k8s_early.py: a stored render);
        `preload` then checks the rendered objects against it."""
        if self.sent or self.preloaded is not None:
            return
        self.preloaded = stream
        self._write(stream, close=False)

    def send(self, manifests: list[dict[str, Any]]) -> None:
        """Clear the objects (written now, unless preloaded) and end kubectl's input: it applies them."""
        if self.preloaded is not None and not self._holds(manifests):
            raise KubectlFailed("internal error: the objects cleared are not those written to kubectl")
        self.sent = True
        self._write((manifest_stream(manifests) if self.preloaded is None else "") + CLEARED, close=True)

    def _write(self, text: str, *, close: bool) -> None:
        """Written from a thread, in order, as communicate() would: kubectl may answer (an error) before
        it read them all."""
        import threading

        pipe, before = self._pipe, list(self._writers)

        def write() -> None:
            for earlier in before:
                earlier.join()
            try:
                pipe.write(text)
                pipe.flush()
                if close:
                    pipe.close()
            except (OSError, ValueError):  # kubectl stopped reading: its stderr says why
                pass

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        self._writers.append(writer)

    def result(self) -> list[dict[str, Any]]:
        """kubectl's answer: the applied objects as the API server returned them."""
        try:
            out, err = self.proc.communicate(timeout=self.kube.timeout)
        except subprocess.TimeoutExpired as exc:
            self._kill()
            raise KubectlFailed(f"kubectl apply did not answer within {exc.timeout:g}s",
                                exit_code=2, code="cluster_unreachable") from exc
        except BaseException:  # interrupted: kubectl does not outlive the deploy (as subprocess.run)
            self._kill()
            raise
        for writer in self._writers:
            writer.join()
        if self.proc.returncode != 0:
            raise kubectl_error(self.args, err)
        try:
            doc = json.loads(out or "{}")
        except ValueError:
            return []
        return list(doc.get("items") or ([doc] if doc.get("kind") else []))

    def cancel(self) -> None:
        """End a kubectl whose objects were never cleared (nothing applied); a no-op once sent."""
        if self.sent:
            return
        self.sent = True
        self._kill()

    def _kill(self) -> None:
        """kubectl and its guard, at once (the guard holds kubectl's input open until then)."""
        import signal

        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.communicate()
        for writer in self._writers:
            writer.join()


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
    listed = os.environ.get("KUBECONFIG", "")
    paths = [p for p in listed.split(os.pathsep) if p] if listed else [os.path.expanduser("~/.kube/config")]
    names: set[str] = set()
    for path in paths:
        try:
            with open(path, "rb") as fh:
                raw = fh.read()
        except FileNotFoundError:
            continue  # kubectl skips a missing file too
        except OSError:
            return None
        found = _file_contexts(raw)
        if found is None:
            return None
        names.update(found)
    return sorted(names)


def _file_contexts(raw: bytes) -> list[str] | None:
    """The context names one kubeconfig file declares; None when it is unusual (not UTF-8 YAML, an
    unexpected shape). Cached by the file's bytes, so a warm deploy's context check imports no YAML
    parser (bench/k8s.py); only names are stored, never a credential."""
    from engine.paths import cached_json, code_identity

    def parse() -> list[str] | None:
        import yaml

        try:
            doc = yaml.safe_load(raw.decode("utf-8"))
        except (ValueError, yaml.YAMLError):
            return None
        if doc is None:
            return []
        entries = doc.get("contexts") if isinstance(doc, dict) else None
        if not isinstance(entries, list | None):
            return None
        found: list[str] = []
        for entry in entries or []:
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str) or not entry["name"]:
                return None
            found.append(entry["name"])
        return found

    parser = code_identity((Path(__file__),), ("yaml",))
    if not parser:
        return parse()
    found: list[str] | None = cached_json(
        "kubeconfig-contexts", parser.encode() + b"\0" + raw, parse,
        keep=lambda value: isinstance(value, list) and all(isinstance(n, str) for n in value))
    return found


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
