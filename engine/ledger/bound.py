"""`release where <version>` (docs/reference-deploy.md#commands): the environments whose current promotion is that
release.

A ledger query about a release, so it lives above both: the ledger reads promotions, the release
store says whether the version was ever cut.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from engine.ledger.store import Ledger, LedgerUnreadable
from engine.project import Project


class WhereResult(BaseModel):
    version: str
    cut: bool
    environments: list[dict[str, Any]]


def release_where(project: Project, version: str, env: str | None = None) -> tuple[WhereResult, int]:
    """0 bound somewhere; 1 exists but unbound or never cut; 2 ledger unreadable (LedgerUnreadable)."""
    from engine.releases.store import check_version, find_release

    check_version(version)
    cut = find_release(project, version) is not None
    try:
        with Ledger.open(project.key) as ledger:
            bound = [p for p in ledger.bound_envs(version) if env is None or p.env == env]
    except LedgerUnreadable as exc:  # `release where` exits 2 when the ledger is unreadable
        raise LedgerUnreadable(exc.message, hint=exc.hint, exit_code=2) from exc
    rows = [{"env": p.env, "promotion_id": p.id, "promoted_at": p.created_at, "who": p.who, "ledger": "machine"}
            for p in bound]
    for hosted in _hosted_bound(project, version, env):
        rows.append(hosted)
        cut = True  # the control plane stores it: cut, perhaps on another machine
    return WhereResult(version=version, cut=cut, environments=rows), (0 if rows else 1)


def _hosted_bound(project: Project, version: str, only: str | None) -> list[dict[str, Any]]:
    """Environments whose ledger is on a control plane with a declared endpoint: one request per
    control plane; unreachable or refused -> exit 2 (the ledger is unreadable from here)."""
    from engine.environments.evaluate import declared_names, evaluate_environment
    from engine.errors import EngineError
    from engine.ledger.hosted import HostedLedger

    by_endpoint: dict[str, tuple[str, Any, list[str]]] = {}
    for name in [only] if only else declared_names(project):
        spec = evaluate_environment(project, name)
        if spec.on_control_plane and spec.control_plane is not None and spec.control_plane.endpoint:
            by_endpoint.setdefault(spec.control_plane.endpoint, (name, spec, []))[2].append(name)
    rows = []
    for endpoint, (first, spec, names) in by_endpoint.items():
        try:
            with HostedLedger.open(first, spec) as ledger:
                bound = ledger.bound_envs(version)
        except EngineError as exc:
            raise LedgerUnreadable(f"the ledger on {endpoint} is unreadable: {exc.message}", exit_code=2) from exc
        rows += [{"env": p.env, "promotion_id": p.id, "promoted_at": p.created_at, "who": p.who,
                  "ledger": f"control plane {endpoint}"} for p in bound if p.env in names]
    return rows
