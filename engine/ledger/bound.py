"""`release where <version>` (spec 2): the environments whose current promotion is that release.

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
    rows = [{"env": p.env, "promotion_id": p.id, "promoted_at": p.created_at, "who": p.who} for p in bound]
    return WhereResult(version=version, cut=cut, environments=rows), (0 if rows else 1)
