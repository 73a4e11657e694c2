"""`env start|stop|delete <env>` (docs/reference-hosted.md#commands-on-hosted-environments). Hosted only:
any other environment is refused naming the command that runs or stops it.

- stop: never refused; data kept (ledger, releases); compute stops. `--target <workload>` stops one.
- start: refused with the server's reason when the organization is not entitled (exit 7: waiting on a
  person); `--wait` waits until the control plane has converged it again.
- delete: deployments and state removed; a later deploy of the same name creates a new environment.
  Confirmation (the typed name, or --yes) is the command layer's.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from engine.errors import InvalidInput
from engine.project import Project

Verb = Literal["start", "stop", "delete"]


class LifecycleResult(BaseModel):
    env: str
    verb: str
    endpoint: str
    result: dict[str, Any]
    wait: dict[str, Any] | None = None


def hosted_spec(project: Project, env: str, verb: str) -> Any:
    """The environment's spec; refused (exit 1) unless hosted, naming the right command."""
    from engine.environments.evaluate import evaluate_environment

    spec = evaluate_environment(project, env)
    if not spec.on_control_plane:
        right = {"start": "up" if spec.kind == "local" else "deploy", "stop": "down", "delete": "down"}[verb]
        raise InvalidInput(f"env {verb} is for hosted environments; {env!r} is {spec.kind or 'not hosted'}",
                           hint=f"framework env {right} {env}")
    return spec


def lifecycle(project: Project, env: str, verb: Verb, *, targets: list[str] | None = None, wait: bool = False,
              timeout: float = 300.0) -> tuple[LifecycleResult, int]:
    from engine.ledger.hosted import HostedLedger

    spec = hosted_spec(project, env, verb)
    targets = list(targets or [])
    unknown = sorted(set(targets) - {w.name for w in spec.workloads})
    if unknown:
        raise InvalidInput(f"unknown workload {unknown[0]!r} for --target")
    with HostedLedger.open(env, spec) as ledger:
        done = ledger.lifecycle(env, verb, targets)
        out = LifecycleResult(env=env, verb=verb, endpoint=ledger.client.endpoint, result=done)
        if not wait or verb != "start":
            return out, 0
        from engine.deploy.hosted_wait import wait_converged

        pinned = ledger.current_id(env)
        if pinned is None:
            out.wait = {"outcome": "unbound"}
            return out, 0
        waited = wait_converged(ledger, env, pinned, timeout)
    out.wait = {"promotion_id": pinned, "outcome": waited.outcome, "message": waited.message}
    codes = {"converged": 0, "DEGRADED": 1, "SUPERSEDED": 6, "queued": 7, "stopped": 7, "timed_out": 8,
             "unreachable": 2}
    return out, codes.get(waited.outcome, 1)
