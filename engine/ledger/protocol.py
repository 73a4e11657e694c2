"""The promotion ledger (docs/reference-deploy.md, docs/reference-hosted.md): one protocol over its two
stores, the machine ledger (engine.ledger.store.Ledger, SQLite on this machine) and the hosted
ledger (engine.ledger.hosted.HostedLedger, requests to the control plane), and `open_ledger`, the
one place that picks between them. Callers that need one store's own methods ask `.machine` or
`.hosted` (each is the ledger itself on its store, None on the other), never `isinstance`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from engine.environments.model import EnvironmentSpec
    from engine.ledger.hosted import HostedLedger
    from engine.ledger.store import Ledger
    from engine.project import Project
    from engine.promotions.rules import Gate, Promotion


class PromotionLedger(Protocol):
    """What `env deploy`, `gate`, `ledger`, `env status` and `release where` ask of either ledger."""

    @property
    def project(self) -> str: ...

    @property
    def path(self) -> Path | str: ...

    last_apply_seq: int  # the rollout the last append opened (0: none)

    @property
    def machine(self) -> Ledger | None: ...

    @property
    def hosted(self) -> HostedLedger | None: ...

    def close(self) -> None: ...

    def __enter__(self) -> PromotionLedger: ...

    def __exit__(self, *exc: object) -> None: ...

    def current(self, env: str) -> Promotion | None: ...

    def current_id(self, env: str) -> str | None: ...

    def history(self, env: str, limit: int = 20, before: int | None = None) -> list[Promotion]: ...

    def get(self, promotion_id: str) -> Promotion | None: ...

    def gates(self, promotion_id: str) -> list[Gate]: ...

    def record_gate(self, env: str, promotion_id: str, gate: Gate) -> bool: ...

    def bound_envs(self, release: str) -> list[Promotion]: ...

    def append_promotion(self, env: str, release: str, images: dict[str, dict[str, Any]], *, direction: str,
                         expected_current: str | None, plan_digest: str | None = None, supersede: bool = False,
                         gates: list[Gate] | None = None, open_apply: bool = False,
                         targets: list[str] | None = None) -> Promotion: ...

    def start_apply(self, env: str, promotion_id: str | None, release: str, *, supersede: bool = False) -> int: ...


def open_ledger(project: Project, env: str, spec: EnvironmentSpec | None = None) -> PromotionLedger:
    """The ledger that holds `env`'s promotions (the promotion ledger location): the control plane
    when its KCL declares framework.ControlPlane (or it is hosted; unreachable: exit 2), else the
    machine ledger."""
    from engine.environments.evaluate import evaluate_environment

    spec = spec or evaluate_environment(project, env)
    if spec.on_control_plane:
        from engine.ledger.hosted import HostedLedger

        return HostedLedger.open(env, spec)
    from engine.ledger.store import Ledger

    return Ledger.open(project.key)
