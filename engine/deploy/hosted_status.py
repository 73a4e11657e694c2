"""`env status` of hosted environments (docs/reference-hosted.md#commands-on-hosted-environments): what the
control plane reports, read in one round trip per control plane however many environments it holds (`/v1/status`
with every name), mapped onto the same EnvStatus as the machine ledger's environments.

0 converged (or nothing bound, or stopped on purpose); 1 wrong (drift, missing, DEGRADED);
2 could not determine (unreachable, credential refused, the default hosted service not configured);
7 queued on billing (`.queued` names the wait and the action URL); with --wait: 6 superseded,
8 the budget expired while it was progressing.
"""

from __future__ import annotations

from typing import Any

from engine.deploy.status_model import SIGNALS, EnvStatus
from engine.environments.model import EnvironmentSpec
from engine.errors import EngineError
from engine.ledger.hosted import HostedLedger


def _undetermined(env: str, spec: EnvironmentSpec, message: str) -> EnvStatus:
    st = EnvStatus(env=env, kind=spec.kind, target=spec.target_type, message=message, convergence="unknown",
                   exit_code=2, signals=dict.fromkeys(SIGNALS, 2))
    st.ledger = {"backend": "control_plane", "endpoint": spec.control_plane.endpoint if spec.control_plane else None}
    return st


def from_document(env: str, spec: EnvironmentSpec, doc: dict[str, Any]) -> EnvStatus:
    endpoint = spec.control_plane.endpoint if spec.control_plane else None
    st = EnvStatus(env=env, kind=spec.kind, target=spec.target_type, convergence=doc["convergence"])
    st.ledger = {"backend": "control_plane", "endpoint": endpoint, "env_id": doc.get("env_id"),
                 "freshness": "fresh"}  # the control plane is the source of truth
    promotion = doc.get("promotion")
    if promotion is None:
        st.message = "no promotion yet" if doc.get("exists") else "not deployed yet (a first deploy creates it)"
        st.signals = dict.fromkeys(SIGNALS, 0)
        return st
    st.promotion = {k: v for k, v in promotion.items() if k != "gates"}
    st.ledger["newest_at"] = promotion.get("created_at")
    st.release = promotion["release"]
    st.gates = promotion.get("gates") or []
    st.queued = doc.get("queued")
    wrong, healthy_all = False, True
    for w in doc.get("workloads") or []:
        running = [d for d in w.get("digests") or [] if d]
        if w.get("stopped") or doc["state"] == "stopped":
            state = "stopped"
        elif not running:
            state = "missing"
        else:
            state = "match" if running == [w.get("expected_digest")] else "drift"
        st.images.append({"name": w["name"], "expected_digest": w.get("expected_digest"),
                          "running_digest": running[0] if len(running) == 1 else (running or None), "state": state})
        healthy = w.get("running", 0) >= w.get("replicas", 1) and w.get("phase") == "ready"
        st.workloads.append({"name": w["name"], "phase": "stopped" if state == "stopped" else w.get("phase"),
                             "healthy": healthy, "running": w.get("running"), "replicas": w.get("replicas")})
        if state != "stopped":
            wrong |= state != "match"
            healthy_all &= healthy
    st.health = "healthy" if healthy_all else "unhealthy"
    convergence = doc["convergence"]
    if convergence == "queued":
        st.exit_code, st.health = 7, "unknown"
        st.message = (st.queued or {}).get("message", "queued")
    elif convergence == "stopped":
        st.exit_code, st.health = 0, "stopped"
        st.message = f"stopped (data kept); `framework env start {env}` runs it again"
    elif convergence == "DEGRADED":
        st.exit_code = 1
    else:
        st.exit_code = 0 if (not wrong and healthy_all) else 1
    failed = convergence == "DEGRADED"
    st.signals = {"deploy": 1 if failed else 0, "health": 0 if healthy_all else 1, "verify": 1 if wrong else 0}
    return st


def hosted_statuses(specs: dict[str, EnvironmentSpec]) -> dict[str, EnvStatus]:
    """Every hosted environment among `specs`: one request per control plane."""
    by_endpoint: dict[str, list[str]] = {}
    out: dict[str, EnvStatus] = {}
    for name, spec in specs.items():
        if not spec.on_control_plane:
            continue
        from engine.auth.credentials import DEFAULT_CONTROL_PLANE

        endpoint = (spec.control_plane.endpoint if spec.control_plane else None) or DEFAULT_CONTROL_PLANE
        by_endpoint.setdefault(endpoint, []).append(name)
    for names in by_endpoint.values():
        try:
            with HostedLedger.open(names[0], specs[names[0]]) as ledger:
                docs = ledger.status(names)
        except EngineError as exc:
            for name in names:
                out[name] = _undetermined(name, specs[name], exc.message)
            continue
        for name, doc in zip(names, docs, strict=True):
            out[name] = from_document(name, specs[name], doc)
    return out


def hosted_wait(env: str, spec: EnvironmentSpec, timeout: float, window: float = 2.0) -> EnvStatus:
    """--wait pinned to the promotion current when the wait starts; once converged it must stay up
    for the stability window (status reports "whether it stayed up past the stability window")."""
    import time

    from engine.deploy.hosted_wait import POLL_S, wait_converged

    start = time.monotonic()
    try:
        with HostedLedger.open(env, spec) as ledger:
            pinned = ledger.current_id(env)
            if pinned is None:
                st = from_document(env, spec, ledger.status([env])[0])
                st.wait = {"promotion_id": None, "outcome": "unbound"}
                return st
            waited = wait_converged(ledger, env, pinned, timeout)
            doc = waited.doc or ledger.status([env])[0]
            outcome = waited.outcome
            if outcome == "converged":  # stayed up past the window, or fell over inside it
                up_until = time.monotonic() + window
                while time.monotonic() < up_until:
                    time.sleep(POLL_S)
                    doc = ledger.status([env])[0]
                    if (doc.get("promotion") or {}).get("id") != pinned:
                        outcome = "SUPERSEDED"
                        break
                    if from_document(env, spec, doc).exit_code != 0:
                        outcome = "DEGRADED"
                        break
    except EngineError as exc:
        return _undetermined(env, spec, exc.message)
    st = from_document(env, spec, doc)
    info = {"promotion_id": pinned, "stability_window": window, "waited_seconds": round(time.monotonic() - start, 3)}
    codes = {"converged": st.exit_code, "DEGRADED": 1, "SUPERSEDED": 6, "queued": 7, "stopped": 0, "timed_out": 8,
             "unreachable": 2}
    st.wait = {**info, "outcome": "stayed_up" if outcome == "converged" else outcome,
               **({"stayed_up": outcome == "converged"} if outcome in ("converged", "DEGRADED") else {})}
    st.exit_code = codes.get(outcome, st.exit_code)
    return st
