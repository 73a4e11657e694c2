"""What an environment's `bindings` (`env new --bind <name>=<binder>`) mean to the commands that read
them (docs/reference-env.md#bindings).

Every binder (`hosted`, `cluster`, `bucket`) places a workload or frontend off this machine, so
`env up` refuses an environment declaring any (a dev stack is local only; the refusal points to `env deploy`). A deploy
honours a binding only where its runtime already places things there: `hosted` on an environment its
control plane converges, `cluster` on a `K8sCluster` target; anything else (and `bucket`, which no
runtime uploads to yet) is refused before anything is written, never deployed somewhere else.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from engine.environments.model import Binding, EnvironmentSpec


class BindingView(BaseModel):
    """One binding as `env render`, `env shape` and `env config` show it."""

    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import (bench/k8s.py)

    name: str
    binder: str
    bucket: str | None = None
    deploy: str  # what `env deploy` does with it: "honoured: ..." or "refused: ..."


def deploy_refusal(spec: EnvironmentSpec, binding: Binding) -> str | None:
    """Why `env deploy` cannot honour `binding` on `spec`, or None when it places it where bound."""
    if binding.binder == "hosted":
        return None if spec.on_control_plane else (
            "this environment is not converged by a control plane (declare kind = \"hosted\" with a "
            "framework.ControlPlane)")
    if binding.binder == "cluster":
        return None if spec.runtime == "k8s" else (
            f"this environment deploys to the {spec.runtime} runtime, not a cluster (declare a framework.K8sCluster "
            "target)")
    return "no runtime uploads to a bucket yet"


def _honoured(spec: EnvironmentSpec, binding: Binding) -> str:
    if binding.binder == "hosted":
        return "honoured: the control plane runs it"
    return f"honoured: applied to context {spec.target.context if spec.target else '-'}"


def views(spec: EnvironmentSpec) -> list[BindingView]:
    """The environment's bindings, by name, each with what a deploy does with it."""
    out = []
    for name, b in sorted(spec.bindings.items()):
        why = deploy_refusal(spec, b)
        out.append(BindingView(name=name, binder=b.binder, bucket=b.bucket,
                               deploy=_honoured(spec, b) if why is None else f"refused: {why}"))
    return out


def first_unhonoured(spec: EnvironmentSpec) -> str | None:
    """The `env deploy` refusal of the first binding it cannot honour, else None."""
    for name, b in sorted(spec.bindings.items()):
        why = deploy_refusal(spec, b)
        if why is not None:
            return f"{name} is bound to {b.binder}" + (f" ({b.bucket})" if b.bucket else "") + f", but {why}"
    return None


def up_refusal(env: str, spec: EnvironmentSpec) -> str | None:
    """`env up` runs local environments only: every binding is non-local."""
    if not spec.bindings:
        return None
    bound = ", ".join(f"{name}={b.binder}" for name, b in sorted(spec.bindings.items()))
    return f"environment {env!r} binds {bound}: `env up` runs local environments only, and a binding is not local"
