"""The `k8s` and `compose` runtimes call the real kubectl / docker compose (DESIGN, Processes).

Neither a cluster nor a Docker daemon exists on the machines this is built on, so what is
implemented and tested here is the clear refusal: a missing CLI, a declared context missing from
the local kubeconfig (spec 2 Deploy rule 9: no override), or an unreachable daemon.
"""

from __future__ import annotations

import shutil
import subprocess
from typing import Any

from engine.errors import EngineError


class RuntimeUnavailable(EngineError):
    code = "runtime_unavailable"


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RuntimeUnavailable(f"cannot run {argv[0]}: {exc}") from exc


def check_k8s(target: dict[str, Any]) -> str:
    """The declared context, once kubectl is present and knows it (spec 2 Deploy rule 9)."""
    context = str(target.get("context") or "")
    if not shutil.which("kubectl"):
        raise RuntimeUnavailable(
            "this environment deploys to a Kubernetes cluster, and `kubectl` is not installed",
            hint="install kubectl and configure the context the environment declares",
        )
    out = _run(["kubectl", "config", "get-contexts", "-o", "name"])
    contexts = out.stdout.split()
    if context not in contexts:
        raise RuntimeUnavailable(
            f"cluster context {context!r} declared by the environment is missing from the local kubeconfig",
            hint="applies target exactly the declared context, with no override; add it to your kubeconfig "
            f"(known contexts: {', '.join(contexts) or 'none'})",
        )
    return context


def check_compose() -> None:
    if not shutil.which("docker"):
        raise RuntimeUnavailable(
            "this environment deploys with Docker Compose, and `docker` is not installed",
            hint="install Docker with the compose plugin",
        )
    out = _run(["docker", "compose", "version"])
    if out.returncode != 0:
        raise RuntimeUnavailable(
            "this environment deploys with Docker Compose, and `docker compose` is not available",
            hint=(out.stderr.strip().splitlines() or ["install the compose plugin"])[-1],
        )
    info = _run(["docker", "info", "--format", "{{.ServerVersion}}"])
    if info.returncode != 0:
        raise RuntimeUnavailable(
            "this environment deploys with Docker Compose, and no Docker daemon is reachable",
            hint=(info.stderr.strip().splitlines() or ["start the Docker daemon"])[-1],
        )


def check_target(target: dict[str, Any]) -> None:
    """Preflight of a self-managed, non-process target; raises with a clear message when unusable."""
    kind = target.get("type")
    if kind == "k8s":
        check_k8s(target)
        raise RuntimeUnavailable(
            f"kubectl knows context {target.get('context')!r}, but applying to a cluster needs rendered manifests, "
            "which this build does not produce yet",
            hint="deploy a Process environment, or use `env render`",
        )
    if kind == "compose":
        check_compose()
        raise RuntimeUnavailable(
            "docker compose is available, but applying a compose project needs a rendered "
            "compose file, which this build does not produce yet"
        )
