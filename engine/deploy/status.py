"""`framework env status [env]` (docs/reference-deploy.md#the-process-runtime: verify states and status exits).

0 everything declared running (or nothing bound); 1 wrong (drift/missing, or DEGRADED under
--wait); 2 could not determine (unreachable, unobservable); 6 superseded; 8 wait timed out
while pending, progressing or stabilizing.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from engine.deploy.status_model import EXIT_PRIORITY, SIGNALS, EnvStatus, StatusResult
from engine.environments.model import EnvironmentSpec
from engine.errors import EngineError, UsageError
from engine.ledger.hosted import HostedLedger
from engine.ledger.protocol import PromotionLedger
from engine.ledger.store import Ledger
from engine.project import Project


def _verify_state(expected: str, alive: list[dict[str, Any]]) -> str:
    """Image verify state: match, drift, missing, untagged, unreachable."""
    if any(i.get("unreadable") for i in alive):
        return "unreachable"
    if not alive:
        return "missing"
    if any(not i.get("running_digest") for i in alive):
        return "untagged"
    return "match" if all(i["running_digest"] == expected for i in alive) else "drift"


def observe_env(project: Project, env: str, spec: EnvironmentSpec, ledger: Ledger) -> EnvStatus:
    from engine.releases.store import find_release
    from engine.runtime.process import Instance, WorkloadSpec, check_health, observe

    target = spec.target_type
    st = EnvStatus(env=env, kind=spec.kind, target=target)
    newest = ledger.history(env, limit=1)
    st.ledger = {
        "backend": "machine",
        "path": str(ledger.path),
        "newest_id": newest[0].id if newest else None,  # indexed read: status never scans the history
        "newest_at": newest[0].created_at if newest else None,
        "age_seconds": round(time.time() - newest[0].created_at, 3) if newest else None,
        "freshness": "fresh",
    }  # the machine ledger is the source of truth: never stale
    st.sessions = [s.model_dump() for s in ledger.list_sessions(env)]
    current = ledger.current(env)
    if current is None:
        st.message = "no promotion yet"
        st.signals = dict.fromkeys(SIGNALS, 0)
        return st
    st.promotion = current.model_dump(mode="json", exclude={"gates"})
    st.release = current.release
    rel = find_release(project, current.release)
    st.provenance = rel.provenance.model_dump() if rel else None
    st.gates = [g.model_dump() for g in current.gates]
    if target in ("k8s", "compose"):
        return _observe_live(project, env, spec, ledger, st, current.images)
    if target != "process":
        for name, img in sorted(current.images.items()):
            st.images.append(
                {
                    "name": name,
                    "expected_digest": img.get("digest"),
                    "running_digest": None,
                    "state": "unreachable",
                }
            )
        st.message = f"the {target} runtime cannot be observed from this machine"
        st.convergence, st.exit_code = "unknown", 2
        st.signals = dict.fromkeys(SIGNALS, 2)
        return st
    observed = observe(project.key, env)
    applies = ledger.applies(env, limit=1)
    last = applies[0] if applies else None
    phases = {r["name"]: r.get("phase") for r in (last.resources if last else [])}
    healthy_all, wrong = True, False
    for name, img in sorted(current.images.items()):
        alive = [i for i in observed if i.get("workload") == name and i["alive"]]
        state = _verify_state(img.get("digest", ""), alive)
        running = sorted({i["running_digest"] for i in alive if i.get("running_digest")})
        st.images.append(
            {
                "name": name,
                "expected_digest": img.get("digest"),
                "running_digest": running[0] if len(running) == 1 else (running or None),
                "state": state,
                "instances": [{"pid": i["pid"], "port": i.get("port")} for i in alive],
            }
        )
        wrong |= state != "match"
        declared = spec.workload(name)
        probe = WorkloadSpec(name=name, run=[], health=declared.health_spec() if declared else None)
        checks = [
            check_health(probe, i.get("port"), Instance(i, Path(i["record"])))
            for i in alive
        ]
        healthy = bool(checks) and all(ok for ok, _ in checks)
        healthy_all &= healthy
        phase = phases.get(name) if last and last.finished_at is None else None
        st.workloads.append(
            {
                "name": name,
                "phase": phase or ("ready" if healthy else ("DEGRADED" if alive else "missing")),
                "healthy": healthy,
                "checks": [why for _, why in checks],
            }
        )
    return _conclude(st, last, healthy_all, wrong)


def _conclude(st: EnvStatus, last: Any, healthy: bool, wrong: bool) -> EnvStatus:
    """Health, convergence, exit code and per-signal exits from what was observed (either runtime)."""
    in_flight = last is not None and last.finished_at is None
    st.health = "healthy" if healthy else "unhealthy"
    st.convergence = "converging" if in_flight else ("converged" if not wrong and healthy else "diverged")
    st.exit_code = 0 if (not wrong and healthy) else 1
    failed = last is not None and not in_flight and last.outcome in ("failed", "timed_out")
    st.signals = {"deploy": 1 if failed else 0, "health": 0 if healthy else 1, "verify": 1 if wrong else 0}
    return st


def _observe_live(project: Project, env: str, spec: EnvironmentSpec, ledger: Ledger, st: EnvStatus,
                  images: dict[str, Any]) -> EnvStatus:
    """The live cluster, read on the declared context (engine/runtime/k8s_status.py), or the live
    containers of the Compose project (engine/runtime/compose.py)."""
    if spec.target_type == "compose":
        from engine.runtime.compose import compose_observation

        seen = compose_observation(project, env, spec, images)
    else:
        from engine.runtime.k8s_status import k8s_observation, namespace_of

        seen = k8s_observation(spec, namespace_of(project, env, spec, ledger), images)
    if "error" in seen:
        st.images = [{"name": n, "expected_digest": i.get("digest"), "running_digest": None, "state": "unreachable"}
                     for n, i in sorted(images.items())]
        st.message, st.convergence, st.exit_code = seen["error"], "unknown", 2
        st.signals = dict.fromkeys(SIGNALS, 2)
        return st
    applies = ledger.applies(env, limit=1)
    last = applies[0] if applies else None
    in_flight = last is not None and last.finished_at is None
    phases = {r["name"]: r.get("phase") for r in (last.resources if in_flight and last else [])}
    st.images = seen["images"]
    st.workloads = [{**w, "phase": phases.get(w["name"]) or w["phase"]} for w in seen["workloads"]]
    return _conclude(st, last, seen["healthy"], seen["wrong"])


def _history(ledger: PromotionLedger, env: str, limit: int, before: str | None) -> dict[str, Any]:
    cursor = None
    if before:
        try:
            cursor = int(before)
        except ValueError as exc:
            raise EngineError(
                f"--before {before!r} is not a cursor from a previous page's next_before",
                code="invalid_input",
            ) from exc
    items = ledger.history(env, limit=limit + 1, before=cursor)
    more = len(items) > limit
    items = items[:limit]
    return {
        "items": [p.model_dump(mode="json") for p in items],
        "next_before": str(items[-1].seq) if more and items else "",
    }


def env_status(
    project: Project,
    env: str | None = None,
    *,
    wait: bool = False,
    timeout: float = 300.0,
    history: bool = False,
    limit: int = 20,
    before: str | None = None,
    stability_window: float = 2.0,
    signal: str | None = None,
) -> tuple[StatusResult, int]:
    from engine.environments.evaluate import declared_names, env_file, evaluate_environment

    if signal is not None and signal not in SIGNALS:
        raise UsageError(f"--signal {signal!r} is not a status signal; choose one of {', '.join(SIGNALS)}")
    if env is not None:
        env_file(project, env)
    names = [env] if env else declared_names(project)
    if limit < 1:
        raise EngineError("--limit must be at least 1", code="invalid_input")
    out = StatusResult(project=project.key, environments=[])
    from engine.deploy.hosted_status import hosted_statuses, hosted_wait

    specs = {name: evaluate_environment(project, name) for name in names}
    hosted = {} if wait else hosted_statuses(specs)  # one round trip per control plane
    with Ledger.open(project.key) as ledger:
        for name in names:
            spec = specs[name]
            if spec.on_control_plane:
                st = hosted_wait(name, spec, timeout, stability_window) if wait else hosted[name]
            elif wait:
                st = _wait(project, name, spec, ledger, timeout, stability_window)
            else:
                st = observe_env(project, name, spec, ledger)
            if history and spec.on_control_plane and st.exit_code != 2:
                with HostedLedger.open(name, spec) as hosted_ledger:  # the control plane pages its ledger
                    st.history = _history(hosted_ledger, name, limit, before)
            elif history:
                st.history = _history(ledger, name, limit, before)
            if signal is not None:
                st.exit_code = _signal_exit(st, signal)
            out.environments.append(st)
    codes = {s.exit_code for s in out.environments}
    code = next((c for c in EXIT_PRIORITY if c in codes), 0)
    return out, code


def _signal_exit(st: EnvStatus, signal: str) -> int:
    """The exit status of one signal: undetermined (2) and --wait outcomes stand whatever the signal."""
    outcome = (st.wait or {}).get("outcome")
    if st.exit_code == 2 or outcome in ("SUPERSEDED", "DEGRADED") or (outcome == "timed_out" and st.exit_code == 8):
        return st.exit_code
    return st.signals.get(signal, st.exit_code)


def _wait(
    project: Project, env: str, spec: EnvironmentSpec, ledger: Ledger, timeout: float, window: float
) -> EnvStatus:
    """Pinned to the promotion current when the wait starts; reports whether it stayed up past the window."""
    pinned = ledger.current_id(env)
    start = time.monotonic()
    up_since: float | None = None
    was_up = False
    while True:
        st = observe_env(project, env, spec, ledger)
        now = time.monotonic()
        moved = ledger.current_id(env)
        info = {"promotion_id": pinned, "stability_window": window, "waited_seconds": round(now - start, 3)}
        if st.exit_code == 2 or pinned is None:
            st.wait = {**info, "outcome": "undetermined" if st.exit_code == 2 else "unbound"}
            return st
        if moved != pinned:
            st.wait = {**info, "outcome": "SUPERSEDED", "superseded_by": moved}
            st.exit_code = 6
            return st
        if st.exit_code == 0 and st.convergence == "converged":
            up_since = up_since if up_since is not None else now
            was_up = True
            if now - up_since >= window:
                st.wait = {**info, "outcome": "stayed_up", "stayed_up": True}
                return st
        else:
            if was_up:  # it was up, then fell over inside the window
                st.wait = {**info, "outcome": "DEGRADED", "stayed_up": False}
                st.exit_code = 1
                return st
            up_since = None
        if timeout <= 0 or now - start >= timeout:
            phase = next(
                (w["phase"] for w in st.workloads if w.get("phase") not in ("ready",)), "stabilizing"
            )
            st.wait = {**info, "outcome": "timed_out", "phase": phase if up_since is None else "stabilizing"}
            st.exit_code = 0 if timeout <= 0 and st.exit_code == 0 else (8 if timeout > 0 else st.exit_code)
            return st
        time.sleep(0.1)
