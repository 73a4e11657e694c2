"""What `env up` refuses of a non-process target (docs/reference-deploy.md#deploys-to-k8scluster-and-compose-targets).

`env up` runs local stacks: a Kubernetes cluster is deployed with `env deploy` (the k8s runtime,
engine/runtime/k8s*.py). A Compose environment is brought up by `env up` and `env deploy` alike with
the compose runtime (engine/runtime/compose.py), whose missing CLI or daemon is refused with
`RuntimeUnavailable` (exit 1, `runtime_unavailable`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine.errors import EngineError

if TYPE_CHECKING:  # light at import (engine/runtime/k8s_early.py runs before pydantic loads)
    from engine.environments.model import Target


class RuntimeUnavailable(EngineError):
    code = "runtime_unavailable"


def check_target(target: Target, env: str) -> None:
    """Refuse `env up` of a Kubernetes cluster, pointing to `env deploy`."""
    if target.type == "k8s":
        raise RuntimeUnavailable(
            f"`env up` runs local stacks; this environment deploys to a Kubernetes cluster (context "
            f"{target.context!r})",
            hint=f"deploy it with `framework env deploy {env}`",
        )
