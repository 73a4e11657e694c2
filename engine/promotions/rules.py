"""The promotion ledger's rules: one implementation over two stores (docs/reference-hosted.md#design:
compare-and-set, append-only promotions and gates, idempotent gates).

The machine ledger (engine.ledger.store, SQLite under $FRAMEWORK_LEDGER_HOME) and the hosted ledger
(engine.controlplane.ledger, the control plane's SQLAlchemy store) each implement `LedgerTx`: a few
primitive reads and writes inside one write transaction that the store opened (BEGIN IMMEDIATE on
SQLite, the environment's row locked FOR UPDATE on PostgreSQL). The rules live here once:

- compare-and-set: a promotion is appended only when `current` is still what the plan read;
  otherwise `PromotionConflict` (exit 3) and nothing is written;
- append-only: promotions and gates are inserted, never updated; `current` moves with the append;
- an unfinished rollout declines a new one (exit 4) unless `--supersede`, which is recorded on it;
- gates are idempotent on (promotion, check, run id).

This package imports neither the platform side nor the framework side, so both may import it.
"""

from __future__ import annotations

import time
import uuid
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

from engine.errors import EngineError


class LedgerUnreadable(EngineError):
    """The ledger cannot be opened or read (deploy exit 1, release where exit 2)."""

    code = "ledger_unreadable"


class PromotionConflict(EngineError):
    """compare-and-set refused: the environment moved since the plan read it (exit 3)."""

    exit_code = 3
    code = "promotion_conflict"


class RolloutInFlight(EngineError):
    """An unfinished rollout holds the environment; declined, nothing lost (exit 4)."""

    exit_code = 4
    code = "rollout_in_flight"


class SupersededStillApplying(EngineError):
    """The apply a `--supersede` replaced still writes to the runtime after the wait budget (exit 4);
    nothing of this deploy was applied (docs/reference-deploy.md#supersede)."""

    exit_code = 4
    code = "superseded_still_applying"


class Gate(BaseModel):
    """One check result recorded against a promotion (a gate)."""

    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import (bench/k8s.py)

    name: str
    status: str
    summary: str = ""
    run_id: str = "local"
    promotion_id: str = ""
    env: str = ""
    at_promote: bool = False
    recorded_at: float = 0.0


class Promotion(BaseModel):
    """A ledger entry: environment, release, per-image digests frozen at that moment."""

    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import (bench/k8s.py)

    id: str
    seq: int
    project: str
    env: str
    release: str
    images: dict[str, dict[str, Any]]
    direction: str
    previous_id: str | None = None
    plan_digest: str | None = None
    supersede: bool = False
    source: str = "deploy"
    who: str
    created_at: float
    run_id: str | None = None  # the CI run that promoted (engine/ci_environment.py); None outside CI
    targets: list[str] = []  # the workloads a partial deploy (`env deploy --target`) covered; [] all
    # the release's commit time (docs/reference-metrics.md#lead-time-for-changes); None: not recorded
    committed_at: float | None = None
    gates: list[Gate] = []


class OpenApply(BaseModel):
    """An unfinished rollout as its store sees it: `alive` when someone still drives it."""

    model_config = ConfigDict(defer_build=True)  # validator built on first use, not at import

    seq: int
    release: str
    pid: int
    alive: bool
    writing: bool = False  # between a runtime write's start and its answer (begin_write .. end_write)


class LedgerTx(Protocol):
    """The primitives a store offers inside one write transaction on one environment."""

    def current_id(self, env: str) -> str | None: ...

    def open_applies(self, env: str) -> list[OpenApply]: ...

    def close_apply(self, seq: int, outcome: str) -> None: ...

    def mark_superseded(self, seq: int) -> None: ...

    def insert_promotion(self, env: str, row: dict[str, Any]) -> None: ...

    def set_current(self, env: str, promotion_id: str) -> None: ...

    def insert_gate(self, env: str, promotion_id: str, gate: Gate, at_promote: bool) -> bool: ...

    def insert_apply(self, env: str, promotion_id: str | None, release: str) -> int: ...


class WriteTx(LedgerTx, Protocol):
    """What the ordering of runtime writes needs besides (the machine ledger's; a hosted environment's
    rollouts are driven one at a time per environment by its control plane's lease)."""

    def apply_mark(self, seq: int) -> tuple[str | None, bool]: ...  # (its promotion id, superseded)

    def set_writing(self, seq: int, writing: bool) -> None: ...


def new_promotion_id() -> str:
    return f"prm_{uuid.uuid4().hex[:20]}"


def check_expected(tx: LedgerTx, env: str, expected_current: str | None) -> None:
    """Compare-and-set (deploy rule 2): refused (exit 3) when the environment moved since the plan read `current`."""
    now_current = tx.current_id(env)
    if now_current != expected_current:
        raise PromotionConflict(
            f"environment {env!r} moved since the plan read it: current promotion is "
            f"{now_current or 'none'}, the plan read {expected_current or 'none'}",
            hint="read the plan again (framework env deploy --plan) and approve the new one",
        )


def check_in_flight(tx: LedgerTx, env: str, supersede: bool) -> None:
    """An unfinished rollout someone still drives declines a new one (exit 4); `--supersede` replaces
    it and says so on that rollout; a rollout nobody drives any more is closed as abandoned."""
    for row in tx.open_applies(env):
        if not row.alive:
            tx.close_apply(row.seq, "abandoned")
            continue
        if not supersede:
            raise RolloutInFlight(
                f"a rollout of {env!r} is in flight (release {row.release}, pid {row.pid})",
                hint="wait for it, or pass --supersede to replace it (recorded)",
            )
        tx.mark_superseded(row.seq)


def append(
    tx: LedgerTx,
    env: str,
    release: str,
    images: dict[str, dict[str, Any]],
    *,
    direction: str,
    expected_current: str | None,
    actor: str,
    plan_digest: str | None = None,
    supersede: bool = False,
    gates: list[Gate] | None = None,
    in_flight_check: bool = True,
    promotion_id: str | None = None,
    source: str = "deploy",
    created_at: float | None = None,
    open_apply: bool = False,
    run_id: str | None = None,
    targets: list[str] | None = None,
    committed_at: float | None = None,
) -> tuple[str, int]:
    """Compare-and-set append of one promotion (and its promote-time gates, and optionally its
    rollout row, born in the same transaction). Returns (promotion id, apply seq or 0)."""
    check_expected(tx, env, expected_current)
    if in_flight_check:
        check_in_flight(tx, env, supersede)
    pid = promotion_id or new_promotion_id()
    tx.insert_promotion(env, {
        "id": pid,
        "release": release,
        "images": images,
        "direction": direction,
        "previous_id": expected_current,
        "plan_digest": plan_digest,
        "supersede": supersede,
        "source": source,
        "who": actor,
        "created_at": created_at if created_at is not None else time.time(),
        "run_id": run_id,
        "targets": sorted(targets or []),
        "committed_at": committed_at,
    })
    tx.set_current(env, pid)
    for gate in gates or []:
        tx.insert_gate(env, pid, gate, True)
    seq = tx.insert_apply(env, pid, release) if open_apply else 0
    return pid, seq


def start_apply(tx: LedgerTx, env: str, promotion_id: str | None, release: str, supersede: bool) -> int:
    """Deploy rule 3 (no conflict): re-applying the running release appends no promotion, only a rollout row."""
    check_in_flight(tx, env, supersede)
    return tx.insert_apply(env, promotion_id, release)


def begin_write(tx: WriteTx, env: str, seq: int) -> tuple[str, list[OpenApply]]:
    """Before each write of apply `seq` to the runtime (docs/reference-deploy.md#supersede), inside the
    transaction a `--supersede` marks in: `stop` when it was superseded (marked, or `current` is no longer
    its promotion: it never writes again); `wait` while another apply of the environment is still writing
    and its process lives (those applies come with it); else `go`, recorded as writing until `end_write`."""
    promotion_id, marked = tx.apply_mark(seq)
    if marked or (promotion_id is not None and tx.current_id(env) != promotion_id):
        return "stop", []
    writers = [r for r in tx.open_applies(env) if r.seq != seq and r.writing and r.alive]
    if writers:
        return "wait", writers
    tx.set_writing(seq, True)
    return "go", []


def record_gate(tx: LedgerTx, env: str, promotion_id: str, gate: Gate) -> bool:
    """Append-only and idempotent on (promotion, check, run id); True when a row was added."""
    return tx.insert_gate(env, promotion_id, gate, False)
