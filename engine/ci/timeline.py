"""`ci run <run-id>`: the timeline of one CI run (docs/reference-ci.md#commands, with its exit codes).

Stages, oldest first: release cuts, promotions, rollouts (applies) and gate checks that recorded
the run id (engine/ci_environment.py). Each comes from a `TimelineSource`: the machine ledger, or
the control plane for an environment whose ledger lives there (`sources_for`). Exit: 0 every stage
passed (skipped counts as passed); 1 a stage failed or errored, or the request cannot be served;
2 the control plane could not be read; 5 a stage is still running, or the timeline is empty.
"""

from __future__ import annotations

import socket
from typing import Protocol

from pydantic import BaseModel

from engine.environments.model import EnvironmentSpec
from engine.errors import UsageError
from engine.project import Project

PASSED, FAILED, ERROR, SKIPPED, RUNNING = "passed", "failed", "error", "skipped", "running"
# Gate statuses (engine/deploy/gates.py GATE_STATUSES) and rollout outcomes (engine/deploy/apply.py) as stage statuses.
GATE_STATUS = {"passed": PASSED, "failed": FAILED, "error": ERROR, "skipped": SKIPPED, "pending": RUNNING}
ROLLOUT_STATUS = {"ready": PASSED, "not_waited": PASSED, "failed": FAILED, "superseded": FAILED,
                  "timed_out": FAILED, "abandoned": ERROR}


class Stage(BaseModel):
    kind: str  # cut | promotion | rollout | gate
    env: str | None = None
    name: str
    status: str  # passed | failed | error | skipped | running
    run_id: str
    at: float
    detail: str = ""


class Timeline(BaseModel):
    run_id: str
    sources: list[str]
    stages: list[Stage]
    counts: dict[str, int]
    verdict: str  # passed | failed | running | empty


class TimelineSource(Protocol):
    """Where a run's records live: the machine ledger, or a control plane."""

    name: str

    def stages(self, run: str, env: str | None) -> list[Stage]: ...


class MachineLedgerSource:
    """Cuts from `.framework/releases/`, the rest from the machine ledger under $FRAMEWORK_LEDGER_HOME."""

    name = "machine-ledger"

    def __init__(self, project: Project) -> None:
        self.project = project

    def stages(self, run: str, env: str | None) -> list[Stage]:
        from engine.ci_environment import matches
        from engine.ledger.store import Ledger
        from engine.processes import pid_alive
        from engine.releases.store import list_releases

        out: list[Stage] = []
        with Ledger.open(self.project.key) as ledger:
            records = ledger.for_run(run)
        promoted = {p.release for p in records.promotions if env is None or p.env == env}
        for rel in list_releases(self.project):
            if matches(rel.run_id, run) and (env is None or rel.version in promoted):
                out.append(Stage(kind="cut", name=rel.version, status=PASSED, run_id=rel.run_id or run,
                                 at=rel.created_at, detail=f"{len(rel.artifacts)} artifacts"))
        for p in records.promotions:
            if env is None or p.env == env:
                out.append(Stage(kind="promotion", env=p.env, name=p.id, status=PASSED, run_id=p.run_id or run,
                                 at=p.created_at, detail=f"{p.release} ({p.direction})"))
        host = socket.gethostname()
        for a in records.applies:
            if env is not None and a.env != env:
                continue
            if a.finished_at is None:
                alive = a.host != host or pid_alive(a.pid)
                status, detail = (RUNNING, a.phase) if alive else (ERROR, "the applying process is gone")
            else:
                status, detail = ROLLOUT_STATUS.get(a.outcome or "", ERROR), a.outcome or a.phase
            out.append(Stage(kind="rollout", env=a.env, name=a.release, status=status, run_id=a.run_id or run,
                             at=a.started_at, detail=detail))
        for g in records.gates:
            if env is None or g.env == env:
                out.append(Stage(kind="gate", env=g.env, name=g.name, status=GATE_STATUS.get(g.status, ERROR),
                                 run_id=g.run_id, at=g.recorded_at, detail=g.summary))
        return out


class ControlPlaneSource:
    """The timeline of an environment whose ledger lives on a control plane: its promotions
    and gates that recorded the run, read through the hosted ledger client; unreachable or refused
    raises exit 2 (the control plane could not be read)."""

    name = "control-plane"

    def __init__(self, spec: EnvironmentSpec, env: str) -> None:
        self.spec = spec
        self.env = env

    def stages(self, run: str, env: str | None) -> list[Stage]:
        from engine.ci_environment import matches
        from engine.ledger.hosted import HostedLedger

        out: list[Stage] = []
        with HostedLedger.open(self.env, self.spec) as ledger:
            promotions = ledger.history(self.env, limit=200)
        for p in promotions:
            if matches(p.run_id, run):
                out.append(Stage(kind="promotion", env=p.env, name=p.id, status=PASSED, run_id=p.run_id or run,
                                 at=p.created_at, detail=f"{p.release} ({p.direction})"))
            for g in p.gates:
                if matches(g.run_id, run):
                    out.append(Stage(kind="gate", env=p.env, name=g.name, status=GATE_STATUS.get(g.status, ERROR),
                                     run_id=g.run_id, at=g.recorded_at, detail=g.summary))
        return out


def sources_for(project: Project, env: str | None) -> list[TimelineSource]:
    """The machine ledger; with --env naming an environment on a control plane, that control plane."""
    if env is None:
        return [MachineLedgerSource(project)]
    from engine.environments.evaluate import evaluate_environment

    spec = evaluate_environment(project, env)
    if spec.on_control_plane:
        return [ControlPlaneSource(spec, env)]
    return [MachineLedgerSource(project)]


def _latest_gates(stages: list[Stage]) -> list[Stage]:
    """A gate re-run in a later attempt replaces the earlier result of the same check."""
    latest: dict[tuple[str | None, str], Stage] = {}
    others = []
    for s in stages:
        if s.kind == "gate":
            key = (s.env, s.name)
            if key not in latest or s.at >= latest[key].at:
                latest[key] = s
        else:
            others.append(s)
    return others + list(latest.values())


def timeline(project: Project, run: str | None, env: str | None = None,
             sources: list[TimelineSource] | None = None) -> tuple[Timeline, int]:
    from engine.ci_environment import current_run

    if run is None:
        ci = current_run()
        if ci is None:
            raise UsageError("no run id given and none in the CI environment",
                             hint="framework ci run <run-id> (GitHub Actions, GitLab CI, Buildkite and "
                                  "CircleCI runs are found by themselves)")
        run = ci.run  # every attempt of this run
    if not run.strip():
        raise UsageError("the run id is empty")
    stages: list[Stage] = []
    names = []
    for source in sources if sources is not None else sources_for(project, env):
        stages.extend(source.stages(run, env))
        names.append(source.name)
    order = {"cut": 0, "promotion": 1, "rollout": 2, "gate": 3}
    stages = sorted(_latest_gates(stages), key=lambda s: (s.at, order[s.kind]))
    counts = {k: sum(1 for s in stages if s.status == k) for k in (PASSED, FAILED, ERROR, SKIPPED, RUNNING)}
    if counts[FAILED] or counts[ERROR]:
        verdict, code = "failed", 1
    elif counts[RUNNING] or not stages:
        verdict, code = ("running" if stages else "empty"), 5
    else:
        verdict, code = "passed", 0
    return Timeline(run_id=run, sources=names, stages=stages, counts=counts, verdict=verdict), code
