"""`framework ledger timeline <env> [promotion]` (docs/reference-deploy.md#ledger-timeline).

A rollout's timeline: each workload's phases against time, from the machine ledger's phase records
(every phase change an apply saw, with its time). Offsets are seconds since the apply started; a
phase lasts until the workload's next record, its last one until the apply finished (or now, while
the rollout is in flight). The Rollouts screen draws the same document.
"""

from __future__ import annotations

import time

from pydantic import BaseModel

from engine import names
from engine.errors import NotFound
from engine.project import Project

__all__ = ["PhaseSpan", "Timeline", "WorkloadTimeline", "build_timeline", "timeline"]


class PhaseSpan(BaseModel):
    phase: str
    start: float  # seconds since the apply started
    end: float
    seconds: float


class WorkloadTimeline(BaseModel):
    name: str
    spans: list[PhaseSpan]


class Timeline(BaseModel):
    env: str
    promotion_id: str | None
    release: str
    started_at: float
    finished_at: float | None
    in_flight: bool
    phase: str
    outcome: str | None
    duration: float  # seconds from the apply's start to its end (or now, in flight)
    workloads: list[WorkloadTimeline]


def _rounded(value: float) -> float:
    return round(value, 3)


def build_timeline(env: str, promotion_id: str | None, release: str, started_at: float,
                   finished_at: float | None, phase: str, outcome: str | None,
                   records: list[tuple[str, str, float]], now: float) -> Timeline:
    """The timeline of one apply from its phase records ((workload, phase, at), in order)."""
    end = finished_at if finished_at is not None else max(now, started_at)
    per: dict[str, list[tuple[str, float]]] = {}
    for workload, ph, at in records:
        seen = per.setdefault(workload, [])
        if not seen or seen[-1][0] != ph:  # a repeated record of the same phase extends it
            seen.append((ph, at))
    workloads = []
    for name, changes in per.items():
        spans = []
        for i, (ph, at) in enumerate(changes):
            stop = changes[i + 1][1] if i + 1 < len(changes) else max(end, at)
            start, stop = _rounded(at - started_at), _rounded(stop - started_at)
            spans.append(PhaseSpan(phase=ph, start=start, end=stop, seconds=_rounded(stop - start)))
        workloads.append(WorkloadTimeline(name=name, spans=spans))
    workloads.sort(key=lambda w: w.name)
    return Timeline(env=env, promotion_id=promotion_id, release=release, started_at=started_at,
                    finished_at=finished_at, in_flight=finished_at is None, phase=phase, outcome=outcome,
                    duration=_rounded(end - started_at), workloads=workloads)


def timeline(project: Project, env: str, promotion_id: str | None = None, *, now: float | None = None) -> Timeline:
    """The timeline of `env`'s latest rollout (or of `promotion_id`'s) from the machine ledger."""
    from engine.ledger.store import Ledger

    names.environment(env)
    if promotion_id is not None:
        names.check(promotion_id, "promotion id")
    with Ledger.open(project.key) as ledger:
        apply = ledger.apply_for(env, promotion_id)
        if apply is None:
            which = f"promotion {names.shown(promotion_id)} in {env}" if promotion_id else env
            raise NotFound(
                f"no rollout of {which} in the machine ledger",
                hint="`framework ledger show <env>` lists the applies recorded here; a hosted environment's "
                     "rollouts are kept by its control plane",
            )
        records = ledger.phase_records(apply.seq)
    return build_timeline(env, apply.promotion_id, apply.release, apply.started_at, apply.finished_at,
                          apply.phase, apply.outcome, records, time.time() if now is None else now)
