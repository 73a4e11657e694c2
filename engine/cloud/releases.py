"""`framework cloud releases <env>` (docs/reference-auth.md, `framework login`, `logout`, `cloud`):
the releases a control plane holds for the caller's organization (the organization is the
credential's; the request names none)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:
    from engine.project import Project


class CloudReleases(BaseModel):
    env: str
    endpoint: str
    releases: list[dict[str, Any]]


def cloud_releases(project: Project, env: str, token: str | None = None) -> CloudReleases:
    """`framework cloud releases <env>`: the caller's organization's releases on the environment's
    control plane."""
    from engine.cloud.client import ControlPlaneClient
    from engine.environments.evaluate import evaluate_environment
    from engine.errors import UsageError

    spec = evaluate_environment(project, env)
    if not spec.on_control_plane:
        raise UsageError(f"environment {env!r} declares no framework.ControlPlane; its releases are "
                         "this checkout's", hint="framework release list")
    client = ControlPlaneClient.for_spec(env, spec, token)
    try:
        releases = list(client.request("GET", "/v1/releases")["releases"])
    finally:
        client.close()
    return CloudReleases(env=env, endpoint=client.endpoint, releases=releases)
