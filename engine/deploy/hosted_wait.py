"""The hosted end of a deploy and of `env status` (deploy rule 4: hosted environments are
converged by the control plane; docs/reference-hosted.md#commands-on-hosted-environments): the control plane
converges; this machine waits on its status.

- converged (the control plane's apply of this promotion ended `ready`) -> 0
- DEGRADED -> 1; SUPERSEDED (a newer promotion landed) -> 6; the wait budget expired while it was
  progressing -> 8
- queued on billing (or the environment is stopped: waiting on `env start`) -> 7, `.queued` names
  the wait and the action URL
- unreachable for the rest of the budget -> 2 (a control plane restarted inside the budget is
  waited on again: the ledger holds exactly what was accepted)
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from engine.cloud.client import ControlPlaneUnreachable
from engine.deploy.deployment import Deployment, DeployResult
from engine.ledger.hosted import HostedLedger

POLL_S = 0.2


class Waited:
    def __init__(self, outcome: str, doc: dict[str, Any] | None, message: str = "") -> None:
        self.outcome = outcome
        self.doc = doc
        self.message = message


def stopped_wait(env: str) -> dict[str, Any]:
    return {"wait": "env start", "message": f"{env} is stopped; it runs again after `framework env start {env}`",
            "action": f"framework env start {env}"}


def wait_converged(ledger: HostedLedger, env: str, promotion_id: str, timeout: float,
                   say: Callable[[str], None] = lambda _m: None) -> Waited:
    deadline = time.monotonic() + timeout
    seen: dict[str, str] = {}
    unreachable: str | None = None
    while True:
        try:
            doc = ledger.status([env])[0]
            unreachable = None
        except ControlPlaneUnreachable as exc:
            unreachable = exc.message
            doc = None
        if doc is not None:
            current = (doc.get("promotion") or {}).get("id")
            if current != promotion_id:
                return Waited("SUPERSEDED", doc, f"a newer promotion ({current}) landed during the wait")
            for w in doc.get("workloads") or []:
                if seen.get(w["name"]) != w["phase"]:
                    seen[w["name"]] = w["phase"]
                    say(f"{w['name']}: {w['phase']}")
            convergence = doc["convergence"]
            if convergence in ("converged", "DEGRADED", "queued", "stopped"):
                return Waited(convergence, doc)
        if time.monotonic() >= deadline:
            if unreachable is not None:
                return Waited("unreachable", None, unreachable)
            return Waited("timed_out", doc)
        time.sleep(POLL_S)


def _rollout(doc: dict[str, Any] | None, phase: str) -> dict[str, Any]:
    apply = (doc or {}).get("apply") or {}
    return {"phase": phase, "converged_by": "control_plane", "resources": apply.get("resources") or []}


def hosted_converge(d: Deployment, promotion_id: str) -> DeployResult:
    """After the promotion is accepted: queued (7), or wait on the control plane's convergence."""
    ledger = d.ledger.hosted
    assert ledger is not None
    result, opts = d.result, d.opts
    if ledger.queued:
        result.queued = ledger.queued
        return d.refuse("queued", f"accepted and recorded; waiting on {ledger.queued['wait']}: "
                        f"{ledger.queued['message']}", 7, hint=ledger.queued.get("action_url"))
    result.applied = True
    if not opts.wait:
        result.rollout = _rollout(None, "not_waited")
        return result
    d.say(f"the control plane converges {d.env}; waiting (budget {opts.timeout:g}s)")
    waited = wait_converged(ledger, d.env, promotion_id, opts.timeout, d.say)
    result.rollout = _rollout(waited.doc, waited.outcome)
    if waited.outcome == "converged":
        return result
    if waited.outcome == "queued":
        result.queued = (waited.doc or {}).get("queued")
        return d.refuse("queued", "accepted and recorded; waiting on billing", 7,
                        hint=(result.queued or {}).get("action_url"))
    if waited.outcome == "stopped":
        result.queued = stopped_wait(d.env)
        return d.refuse("queued", result.queued["message"], 7, hint=result.queued["action"])
    if waited.outcome == "DEGRADED":
        failed = [r for r in result.rollout["resources"] if r.get("phase") == "DEGRADED"]
        detail = f": {failed[0]['name']}: {failed[0].get('message', '')}" if failed else ""
        return d.refuse("degraded", f"rollout DEGRADED on the control plane{detail}", 1)
    if waited.outcome == "SUPERSEDED":
        return d.refuse("superseded", waited.message, 6)
    if waited.outcome == "unreachable":
        return d.refuse("control_plane_unreachable", f"undetermined: {waited.message}; the promotion "
                        f"{promotion_id} is recorded", 2, hint=f"framework env status {d.env}")
    return d.refuse("wait_timed_out", f"wait budget of {opts.timeout:g}s expired while the control plane was "
                    "converging", 8, hint=f"framework env status {d.env} --wait")
