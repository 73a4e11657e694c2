"""What a deploy takes, what it answers, and the state its stages share (docs/reference-deploy.md#env-deploy)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from engine.progress import Reporter

if TYPE_CHECKING:  # imported by the stages that use them: a deploy starts its apply first (deploy.py)
    from engine.deploy.plan import DeployPlan
    from engine.environments.model import EnvironmentSpec, Workload
    from engine.ledger.protocol import PromotionLedger
    from engine.ledger.store import Promotion
    from engine.project import Project
    from engine.releases.store import Release
    from engine.runtime.compose import PendingUp
    from engine.runtime.k8s import PendingApply

Confirm = Callable[["DeployPlan | None", str], bool]
Emit = Callable[[dict[str, Any]], None]


class DeployOptions(BaseModel):
    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import (bench/k8s.py)

    version: str | None = None
    from_env: str | None = None
    plan: bool = False
    plan_only: bool = False
    yes: bool = False
    approve: str | None = None
    acknowledge_destructive: list[str] = []
    expect_current: str | None = None
    expect_unbound: bool = False
    supersede: bool = False
    gate_file: str | None = None
    wait: bool = True
    timeout: float = 300.0
    stability_window: float = 2.0
    grace: float = 30.0
    dry_run: bool = False
    explain: bool = False
    tag: str | None = None
    namespace: str | None = None
    targets: list[str] = []
    skip_frontend: bool = False
    frontends_only: bool = False
    skip_preflight: bool = False


Mode = Literal["apply", "dry_run", "explain"]


class DeployResult(BaseModel):
    """The `--json` document's payload (docs/reference-deploy.md#env-deploy)."""

    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import (bench/k8s.py)

    mode: Mode
    env: str
    target: dict[str, Any]
    current: dict[str, Any]
    deploy_plan: dict[str, Any] | None = None
    next_step: str | None = None
    applied: bool = False
    confirmed: bool = False
    refusal: dict[str, Any] | None = None
    queued: dict[str, Any] | None = None
    promotion: dict[str, Any] | None = None
    appended: bool = False
    release_created: bool = False
    rollout: dict[str, Any] | None = None
    explain: list[str] | None = None
    preflight: dict[str, Any] | None = None  # rule 8 (remote clusters): checks run and their findings
    notices: list[str] = []  # what a flag did not change, said rather than silently ignored (--skip-frontend)
    exit_code: int = Field(default=0, exclude=True)  # carried by the document envelope
    error: dict[str, Any] | None = Field(default=None, exclude=True)


def refuse(
    result: DeployResult, code: str, message: str, exit_code: int, hint: str | None = None
) -> DeployResult:
    result.refusal = {"code": code, "message": message}
    result.error = {"code": code, "message": message, **({"hint": hint} if hint else {})}
    result.exit_code = exit_code
    return result


@dataclass
class Deployment:
    """One deploy in flight: what every stage reads, and what the stages decided so far."""

    project: Project
    env: str
    spec: EnvironmentSpec
    declared_shape: Callable[[], dict[str, Any]]  # recorded as the bundle after a good apply
    opts: DeployOptions
    ledger: PromotionLedger  # the machine ledger, or the control plane's (hosted environments)
    result: DeployResult
    confirm: Confirm | None
    emit: Emit | None
    say: Callable[[str], None]
    # decided by _resolve and _plan
    current: Promotion | None = None
    release: Release | None = None
    images: dict[str, Any] = field(default_factory=dict)
    sources: dict[str, Any] = field(default_factory=dict)
    needs_cut: bool = False
    source_id: str | None = None
    plan: DeployPlan | None = None
    kubectl: PendingApply | PendingUp | None = None  # the apply (kubectl or compose up), started early (deploy.py)
    report: Reporter | None = None  # hears the steps of its build and artifact uploads (engine/progress.py)

    @property
    def workloads(self) -> list[Workload]:
        return self.spec.workloads

    def refuse(self, code: str, message: str, exit_code: int, hint: str | None = None) -> DeployResult:
        return refuse(self.result, code, message, exit_code, hint)
