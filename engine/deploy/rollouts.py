"""Rollouts from this machine (docs/reference-deploy.md#env-deploy: phases `pending`, `progressing`, `stabilizing`,
`ready`, `DEGRADED`, `SUPERSEDED`): per environment, the rollout in flight (or the last one), each
workload's phase, its health probes, the elapsed time against the wait budget and its log tail.

Reads the machine ledger's applies (per-workload phases are recorded while in flight), the
process runtime's instances and logs, for a Kubernetes environment its live Deployments (ready
replicas) and the tail of their events, for a Compose environment its live containers: the same
data as `framework env status <env>` and `framework ledger show <env>`.
"""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.errors import EngineError
from engine.project import Project

LOG_LINES = 12


class WorkloadRollout(BaseModel):
    name: str
    phase: str
    outcome: str | None = None
    restarts: int = 0
    message: str = ""
    probes: list[str] = []
    healthy: bool | None = None
    log_tail: list[str] = []
    log_file: str | None = None
    tail_kind: str = "log"  # "events" for a Kubernetes workload: the tail of its events, not a log
    ready_replicas: int | None = None
    replicas: int | None = None


class EnvRollout(BaseModel):
    env: str
    kind: str | None = None
    target: str | None = None
    in_flight: bool = False
    release: str | None = None
    promotion_id: str | None = None
    phase: str | None = None
    outcome: str | None = None
    pid: int | None = None
    started_at: float | None = None
    finished_at: float | None = None
    elapsed_seconds: float | None = None
    wait_budget: float | None = None
    superseded_by_pid: int | None = None
    workloads: list[WorkloadRollout] = []
    message: str = ""


class RolloutsView(BaseModel):
    project: str
    in_flight: int
    environments: list[EnvRollout]


def tail(path: Path, lines: int = LOG_LINES) -> list[str]:
    """The last `lines` lines of a log, reading at most 64 KiB from its end."""
    try:
        with path.open("rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - 65536))
            data = fh.read()
    except OSError:
        return []
    return data.decode(errors="replace").splitlines()[-lines:]


def _log_of(project_key: str, env: str, workload: str) -> Path | None:
    from engine.runtime.process import runtime_dir

    logs = sorted((runtime_dir(project_key, env) / "logs").glob(f"{workload}.*.log"),
                  key=lambda p: p.stat().st_mtime, reverse=True)
    return logs[0] if logs else None


def _k8s_live(project: Project, env: str, spec: Any, ledger: Any, row: EnvRollout
              ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A Kubernetes environment's live workloads (phase, ready replicas) and its namespace's events."""
    from engine.runtime.k8s_status import live_view, namespace_of

    current = ledger.current(env)
    seen, events = live_view(spec, namespace_of(project, env, spec, ledger), current.images if current else {})
    if "error" in seen:
        row.message = f"cluster: {seen['error']}"
        return {}, []
    return {w["name"]: w for w in seen["workloads"]}, events


def _compose_live(project: Project, env: str, spec: Any, ledger: Any, row: EnvRollout) -> dict[str, Any]:
    """A Compose environment's live services (phase, running and healthy containers)."""
    from engine.runtime.compose import compose_observation

    current = ledger.current(env)
    seen = compose_observation(project, env, spec, current.images if current else {})
    if "error" in seen:
        row.message = f"compose: {seen['error']}"
        return {}
    return {w["name"]: w for w in seen["workloads"]}


def rollouts(project: Project, now: float | None = None) -> RolloutsView:
    from engine.deploy.status import observe_env
    from engine.environments.evaluate import declared_names, evaluate_environment
    from engine.ledger.store import Ledger
    from engine.processes import pid_alive

    now = now or time.time()
    host = socket.gethostname()
    out: list[EnvRollout] = []
    with Ledger.open(project.key) as ledger:
        for name in declared_names(project):
            try:
                spec = evaluate_environment(project, name)
            except EngineError as exc:
                out.append(EnvRollout(env=name, message=exc.message))
                continue
            target = spec.target_type
            row = EnvRollout(env=name, kind=spec.kind, target=target)
            applies = ledger.applies(name, limit=1)
            if not applies:
                row.message = "hosted: not observable here" if target == "hosted" else "no rollout recorded yet"
                out.append(row)
                continue
            a = applies[0]
            alive = a.host != host or pid_alive(a.pid)
            row.in_flight = a.finished_at is None and alive
            row.release, row.promotion_id, row.phase, row.outcome = a.release, a.promotion_id, a.phase, a.outcome
            if a.finished_at is None and not alive:
                row.outcome, row.message = "abandoned", f"the deploy process {a.pid} is gone"
            row.pid, row.started_at, row.finished_at = a.pid, a.started_at, a.finished_at
            row.superseded_by_pid = a.superseded_by_pid
            row.elapsed_seconds = round((a.finished_at or now) - a.started_at, 3)
            budgets = [r.get("wait_budget") for r in a.resources if r.get("wait_budget") is not None]
            row.wait_budget = budgets[0] if budgets else None
            probes: dict[str, Any] = {}
            events: list[dict[str, Any]] = []
            if target == "process":
                st = observe_env(project, name, spec, ledger)
                probes = {w["name"]: w for w in st.workloads}
            elif target == "k8s":
                probes, events = _k8s_live(project, name, spec, ledger, row)
            elif target == "compose":
                probes = _compose_live(project, name, spec, ledger, row)
            for r in a.resources:
                w = WorkloadRollout(name=r["name"], phase=r.get("phase") or "pending", outcome=r.get("outcome"),
                                    restarts=int(r.get("restarts") or 0), message=r.get("message") or "")
                if r["name"] in probes:
                    w.probes, w.healthy = probes[r["name"]]["checks"], probes[r["name"]]["healthy"]
                    w.ready_replicas, w.replicas = probes[r["name"]].get("ready_replicas"), \
                        probes[r["name"]].get("replicas")
                if target == "k8s":
                    from engine.runtime.k8s_status import event_lines

                    w.tail_kind, w.log_tail = "events", event_lines(events, {r["name"]}, LOG_LINES)
                if target == "compose" and r["name"] in probes and probes[r["name"]].get("containers"):
                    from engine.runtime.compose import log_tail

                    container = probes[r["name"]]["containers"][0]
                    w.log_file, w.log_tail = f"docker logs {container}", log_tail(container, LOG_LINES)
                log = _log_of(project.key, name, r["name"]) if target == "process" else None
                if log is not None:
                    w.log_file, w.log_tail = str(log), tail(log)
                row.workloads.append(w)
            out.append(row)
    return RolloutsView(project=project.key, in_flight=sum(r.in_flight for r in out), environments=out)
