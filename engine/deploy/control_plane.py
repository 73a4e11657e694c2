"""Hosted environments: their ledger and convergence live on a control plane (spec 2, Deploy rule 4).

Until this build has a control-plane client, every hosted deploy, status and gate exits 2
("could not determine"), saying whether the endpoint answered.
"""

from __future__ import annotations

from engine.environments.model import EnvironmentSpec
from engine.errors import EngineError


class ControlPlaneUnreachable(EngineError):
    exit_code = 2
    code = "control_plane_unreachable"


def check_control_plane(spec: EnvironmentSpec) -> None:
    """Hosted environments are converged by a control plane; none is reachable here -> exit 2."""
    endpoint = spec.control_plane.endpoint if spec.control_plane else None
    if not endpoint:
        raise ControlPlaneUnreachable(
            "control plane unreachable: the environment uses the default hosted service, which is not "
            "configured on this machine",
            hint="declare framework.ControlPlane.endpoint, or deploy a self-managed or local environment",
        )
    import httpx

    try:
        httpx.get(endpoint.rstrip("/") + "/health", timeout=5.0)
    except httpx.HTTPError as exc:
        raise ControlPlaneUnreachable(
            f"control plane unreachable at {endpoint}: {exc}",
            hint="check the endpoint and your network, then retry",
        ) from exc
    raise ControlPlaneUnreachable(
        f"control plane at {endpoint} answered, but this build has no control-plane client; "
        "the outcome of a hosted deploy cannot be determined",
        hint="deploy a self-managed or local environment",
    )
