"""Targets this version renders but does not apply from `env up` or `env deploy`
(docs/reference-deploy.md#deploys-to-k8scluster-and-compose-targets).

The `compose` runtime calls the real docker compose; no Docker daemon exists on the machines this is
built on, so what is implemented and tested here is the clear refusal: a missing CLI or an
unreachable daemon. The `k8s` runtime is engine/runtime/k8s*.py (`env deploy`); `env up`, local
stacks only, refuses a cluster and points to `env deploy`.
"""

from __future__ import annotations

import shutil
import subprocess

from engine.environments.model import Target
from engine.errors import EngineError


class RuntimeUnavailable(EngineError):
    code = "runtime_unavailable"


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RuntimeUnavailable(f"cannot run {argv[0]}: {exc}") from exc


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


def check_target(target: Target, env: str, *, preflight: bool) -> None:
    """Refuse a deploy to a self-managed, non-process target, saying what is true: the manifests and the
    compose file are rendered (`env render`), applying them is not supported by this version.

    With `preflight` (a dry run without --skip-preflight, rule 8) the target's own checks run first, so
    a missing CLI or context (rule 9) is reported as such."""
    kind = target.type
    if kind == "k8s":  # `env up` is local-only: a cluster is deployed with `env deploy`
        raise RuntimeUnavailable(
            f"`env up` runs local stacks; this environment deploys to a Kubernetes cluster (context "
            f"{target.context!r})",
            hint=f"deploy it with `framework env deploy {env}`",
        )
    if kind == "compose":
        if preflight:
            check_compose()
        raise RuntimeUnavailable(
            "applying a Docker Compose project is not supported by this version of framework; "
            "its compose file is rendered",
            hint=f"render it with `framework env render {env}` and run it with `docker compose up`, "
            "or deploy a Process environment",
        )
