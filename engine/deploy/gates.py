"""Gates (`gate record` / `gate list`, docs/reference-deploy.md#commands): check evidence recorded against a promotion.

On the machine ledger there is no control plane to hold `deploy:write`, so recording is local:
whoever can write the ledger file may record a gate (documented in docs/reference-deploy.md). On a
hosted environment the control plane records it and needs `deploy:write` (deliberately weaker than promote).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.errors import EngineError, InvalidInput
from engine.ledger.hosted import HostedLedger
from engine.ledger.protocol import PromotionLedger, open_ledger
from engine.ledger.store import Gate, Ledger, PromotionConflict
from engine.project import Project

GATE_STATUSES = ("passed", "failed", "skipped", "error", "pending")


def default_run_id() -> str:
    """The CI run id including the attempt number (docs/reference-ci.md#the-ci-run-id), else `local`."""
    from engine.ci_environment import LOCAL_RUN_ID, current_run_id

    return current_run_id() or LOCAL_RUN_ID


def _gate(doc: dict[str, Any], run_id: str | None) -> Gate:
    name = doc.get("name") or doc.get("check")
    status = doc.get("status")
    if not name or not status:
        raise InvalidInput("gate evidence needs `name` and `status`")
    return Gate(
        name=str(name),
        status=str(status).lower(),
        summary=str(doc.get("summary") or ""),
        run_id=str(doc.get("run_id") or run_id or default_run_id()),
    )


def gates_from_document(doc: Any, *, name: str | None = None, run_id: str | None = None) -> list[Gate]:
    """Gate-shaped JSON (one gate, a list, or {"gates": [...]}) or any `--json` output of ours
    (an `ok`/`exit_code` envelope: passed when ok, else failed)."""
    if isinstance(doc, list):
        return [_gate(d, run_id) for d in doc if isinstance(d, dict)]
    if not isinstance(doc, dict):
        raise InvalidInput("gate evidence must be a JSON object or a list of objects")
    if isinstance(doc.get("gates"), list):
        return [_gate(d, run_id) for d in doc["gates"]]
    if "status" in doc and ("name" in doc or name):
        return [_gate({**doc, "name": name or doc.get("name")}, run_id)]
    if "ok" in doc and "exit_code" in doc:
        error = doc.get("error") or {}
        summary = f"exit {doc['exit_code']}" + (
            f": {error.get('message')}" if isinstance(error, dict) and error.get("message") else ""
        )
        return [
            Gate(
                name=name or str(doc.get("check") or doc.get("command") or "framework"),
                status="passed" if doc["ok"] else "failed",
                summary=summary,
                run_id=run_id or default_run_id(),
            )
        ]
    raise InvalidInput(
        "not gate-shaped JSON (name, status[, summary, run_id]) nor a `--json` document of ours"
    )


class GateRecordResult(BaseModel):
    env: str
    promotion_id: str
    release: str
    recorded: list[Gate]
    already_recorded: list[Gate]


def _resolve_promotion(ledger: PromotionLedger, env: str, promotion: str | None, release: str | None) -> Any:
    current = ledger.current(env)
    if current is None:
        raise EngineError(
            f"environment {env!r} has no promotion to record a gate against",
            hint=f"deploy first: framework env deploy {env}",
            code="no_promotion",
        )
    if promotion is not None and promotion != current.id:
        raise PromotionConflict(
            f"environment {env!r} moved on: current promotion is {current.id}, not {promotion}"
        )
    if release is not None and release != current.release:
        raise PromotionConflict(f"environment {env!r} moved on: it runs {current.release}, not {release}")
    return current


def record(
    project: Project,
    env: str,
    *,
    from_file: str | None = None,
    name: str | None = None,
    status: str | None = None,
    summary: str | None = None,
    run_id: str | None = None,
    promotion: str | None = None,
    release: str | None = None,
) -> GateRecordResult:
    if from_file is not None:
        try:
            text = Path(from_file).read_text() if from_file != "-" else sys.stdin.read()
            doc = json.loads(text)
        except (OSError, ValueError) as exc:
            raise InvalidInput(f"--from {from_file}: cannot read JSON: {exc}") from exc
        gates = gates_from_document(doc, name=name, run_id=run_id)
    else:
        if not name or not status:
            raise InvalidInput("give --from <file>, or --name and --status")
        gates = [_gate({"name": name, "status": status, "summary": summary or ""}, run_id)]
    for g in gates:
        if g.status not in GATE_STATUSES:
            raise InvalidInput(f"gate status {g.status!r} is not one of {', '.join(GATE_STATUSES)}")
    with open_ledger(project, env) as ledger:  # hosted: the control plane checks deploy:write
        current = _resolve_promotion(ledger, env, promotion, release)
        added: list[Gate] = []
        kept: list[Gate] = []
        for g in gates:
            (added if ledger.record_gate(env, current.id, g) else kept).append(g)
    return GateRecordResult(
        env=env, promotion_id=current.id, release=current.release, recorded=added, already_recorded=kept
    )


class GateList(BaseModel):
    env: str
    promotion_id: str | None
    release: str | None
    gates: list[Gate]


def list_gates(project: Project, env: str, promotion: str | None = None) -> GateList:
    with open_ledger(project, env) as ledger:
        return _gate_list(ledger, env, promotion)


def _gate_list(ledger: PromotionLedger, env: str, promotion: str | None) -> GateList:
    p = ledger.get(promotion) if promotion else ledger.current(env)
    if promotion and (p is None or p.env != env):
        raise EngineError(f"promotion {promotion!r} not found in {env}", code="promotion_not_found")
    if p is None:
        return GateList(env=env, promotion_id=None, release=None, gates=[])
    return GateList(env=env, promotion_id=p.id, release=p.release, gates=ledger.gates(p.id))


class SkippedEnvironment(BaseModel):
    env: str
    reason: str


class GateListAll(BaseModel):
    """`gate list` with no environment: each declared environment's current gates (`gate list
    [env]`), in declaration order, each ordered as `gate list <env>` orders them."""

    environments: list[GateList]
    skipped: list[SkippedEnvironment] = []


def list_all_gates(project: Project, promotion: str | None = None) -> GateListAll:
    """Every environment's gates (hosted ones from their control plane); with --promotion, that
    promotion's environment only (machine ledger).

    A hosted environment whose control plane cannot be read is listed under `skipped` with the
    reason, rather than failing the whole listing."""
    from engine.environments.evaluate import declared_names, evaluate_environment

    with Ledger.open(project.key) as ledger:
        if promotion is not None:
            p = ledger.get(promotion)
            if p is None:
                raise EngineError(f"promotion {promotion!r} not found", code="promotion_not_found")
            return GateListAll(environments=[_gate_list(ledger, p.env, promotion)])
        result = GateListAll(environments=[])
        for env in declared_names(project):
            spec = evaluate_environment(project, env)
            if spec.on_control_plane:  # its ledger is on a control plane: asked there, else skipped with why
                try:
                    with HostedLedger.open(env, spec) as hosted:
                        result.environments.append(_gate_list(hosted, env, None))
                except EngineError as exc:
                    result.skipped.append(SkippedEnvironment(
                        env=env, reason=f"its ledger is on a control plane ({exc.message})"))
                continue
            result.environments.append(_gate_list(ledger, env, None))
        return result
