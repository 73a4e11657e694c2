"""The hosted ledger: the control plane's store for engine.promotions.rules (the
promotion ledger location is "the control plane when the environment's KCL declares framework.ControlPlane").

The rules (compare-and-set on `current.promotion_id`, append-only, idempotent gates) are the machine
ledger's, run inside one write transaction here: BEGIN IMMEDIATE on SQLite, and on PostgreSQL the
environment's row locked FOR UPDATE first, so two racing deploys append exactly one promotion.
Every read and write is scoped to the caller's organization.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from pydantic import BaseModel
from sqlalchemy import and_, func, insert, select, update
from sqlalchemy.engine import Connection, Engine, Row
from sqlalchemy.exc import IntegrityError

from engine.controlplane import tables as t
from engine.errors import NotFound
from engine.promotions import rules
from engine.promotions.rules import Gate, OpenApply, Promotion
from engine.serverstore import store


class HostedEnv(BaseModel):
    """A hosted environment on the control plane (docs/reference-hosted.md): one cp_envs row."""

    id: str
    org_id: str
    name: str
    state: str  # active | stopped
    converged_id: str | None  # the promotion the runtime last converged to
    stopped_targets: list[str]  # workloads `env stop <targets>` stopped
    created_at: int


def _next_seq(conn: Connection, table: Any, env_id: str) -> int:
    return int(conn.execute(select(func.coalesce(func.max(table.c.seq), 0)).where(table.c.env_id == env_id))
               .scalar_one()) + 1


class HostedTx:
    """engine.promotions.rules' primitives on the control plane's tables, for one environment."""

    def __init__(self, conn: Connection, env: HostedEnv, bundle: list[dict[str, Any]] | None = None,
                 owner: str | None = None) -> None:
        self.conn = conn
        self.env = env
        self.bundle = bundle or []
        self.owner = owner

    def current_id(self, env: str) -> str | None:
        row = self.conn.execute(select(t.current.c.promotion_id).where(t.current.c.env_id == self.env.id)).first()
        return row[0] if row else None

    def open_applies(self, env: str) -> list[OpenApply]:
        rows = self.conn.execute(select(t.applies).where(t.applies.c.env_id == self.env.id,
                                                         t.applies.c.finished_at.is_(None))).all()
        # the control plane drives every open rollout of a live lease itself
        return [OpenApply(seq=r.seq, release=r.release, pid=0, alive=r.owner is not None) for r in rows]

    def close_apply(self, seq: int, outcome: str) -> None:
        self.conn.execute(update(t.applies).where(t.applies.c.env_id == self.env.id, t.applies.c.seq == seq)
                          .values(finished_at=time.time(), outcome=outcome))

    def mark_superseded(self, seq: int) -> None:
        self.conn.execute(update(t.applies).where(t.applies.c.env_id == self.env.id, t.applies.c.seq == seq)
                          .values(superseded=True))

    def insert_promotion(self, env: str, row: dict[str, Any]) -> None:
        self.conn.execute(insert(t.promotions).values(
            id=row["id"], env_id=self.env.id, org_id=self.env.org_id,
            seq=_next_seq(self.conn, t.promotions, self.env.id), env=self.env.name, release=row["release"],
            images=json.dumps(row["images"], sort_keys=True), bundle=json.dumps(self.bundle, sort_keys=True),
            direction=row["direction"], previous_id=row["previous_id"], plan_digest=row["plan_digest"],
            supersede=bool(row["supersede"]), source=row["source"], who=row["who"], created_at=row["created_at"],
            run_id=row.get("run_id")))

    def set_current(self, env: str, promotion_id: str) -> None:
        done = self.conn.execute(update(t.current).where(t.current.c.env_id == self.env.id)
                                 .values(promotion_id=promotion_id))
        if done.rowcount == 0:
            self.conn.execute(insert(t.current).values(env_id=self.env.id, promotion_id=promotion_id))

    def insert_gate(self, env: str, promotion_id: str, gate: Gate, at_promote: bool) -> bool:
        found = self.conn.execute(select(t.gates.c.seq).where(
            t.gates.c.promotion_id == promotion_id, t.gates.c.name == gate.name, t.gates.c.run_id == gate.run_id)
        ).first()
        if found is not None:
            return False
        self.conn.execute(insert(t.gates).values(
            env_id=self.env.id, seq=_next_seq(self.conn, t.gates, self.env.id), promotion_id=promotion_id,
            name=gate.name, status=gate.status, summary=gate.summary, run_id=gate.run_id, at_promote=at_promote,
            recorded_at=time.time()))
        return True

    def insert_apply(self, env: str, promotion_id: str | None, release: str) -> int:
        seq = _next_seq(self.conn, t.applies, self.env.id)
        self.conn.execute(insert(t.applies).values(
            env_id=self.env.id, seq=seq, promotion_id=promotion_id, release=release, owner=self.owner,
            started_at=time.time(), phase="pending", resources="[]", superseded=False))
        return seq


# -- environments ------------------------------------------------------------------------------


def _env(row: Row[Any] | None) -> HostedEnv | None:
    if row is None:
        return None
    return HostedEnv(id=row.id, org_id=row.org_id, name=row.name, state=row.state, converged_id=row.converged_id,
                     stopped_targets=json.loads(row.stopped_targets or "[]"), created_at=row.created_at)


def find_env(conn: Connection, org_id: str, name: str, lock: bool = False) -> HostedEnv | None:
    query = select(t.envs).where(t.envs.c.org_id == org_id, t.envs.c.name == name)
    return _env(conn.execute(query.with_for_update() if lock else query).first())


def require_env(conn: Connection, org_id: str, name: str, lock: bool = False) -> HostedEnv:
    env = find_env(conn, org_id, name, lock)
    if env is None:
        raise NotFound(f"no hosted environment {name!r} in your organization",
                       hint=f"a first `framework env deploy {name}` creates it")
    return env


def ensure_env(engine: Engine, org_id: str, name: str) -> None:
    """A first deploy creates the environment (a racing creator may win; either way it exists)."""
    with store.read(engine) as conn:
        if find_env(conn, org_id, name) is not None:
            return
    try:
        with store.write(engine) as conn:
            if find_env(conn, org_id, name) is None:
                conn.execute(insert(t.envs).values(id=f"env_{uuid.uuid4().hex[:16]}", org_id=org_id, name=name,
                                                   state="active", created_at=store.now_us(), stopped_targets="[]"))
    except IntegrityError:
        pass


# -- promotions ---------------------------------------------------------------------------------


def promote(engine: Engine, org_id: str, name: str, doc: dict[str, Any], actor: str) -> Promotion:
    """Compare-and-set append on the hosted ledger (the rules' exit 3 when the environment moved)."""
    gates = [Gate.model_validate(g) for g in doc.get("gates") or []]
    ensure_env(engine, org_id, name)
    with store.write(engine) as conn:
        env = require_env(conn, org_id, name, lock=True)  # serialises racing deploys on PostgreSQL
        tx = HostedTx(conn, env, bundle=list(doc.get("bundle") or []))
        # the control plane converges toward `current` itself: a newer promotion supersedes the
        # rollout it drives (the older wait exits 6), so no rollout declines a deploy here
        pid, _ = rules.append(
            tx, name, str(doc["release"]), dict(doc.get("images") or {}), direction=str(doc.get("direction")
                                                                                         or "UNKNOWN"),
            expected_current=doc.get("expected_current"), actor=actor, plan_digest=doc.get("plan_digest"),
            supersede=bool(doc.get("supersede")), gates=gates, in_flight_check=False,
            run_id=str(doc["run_id"]) if doc.get("run_id") else None)
    found = get_promotion(engine, org_id, pid)
    assert found is not None
    return found


def _promotion(conn: Connection, row: Row[Any], with_gates: bool = True) -> Promotion:
    p = Promotion(id=row.id, seq=row.seq, project=row.org_id, env=row.env, release=row.release,
                  images=json.loads(row.images), direction=row.direction, previous_id=row.previous_id,
                  plan_digest=row.plan_digest, supersede=bool(row.supersede), source=row.source, who=row.who,
                  created_at=row.created_at, run_id=row.run_id)
    if with_gates:
        p.gates = gates_of(conn, row.id)
    return p


def get_promotion(engine: Engine, org_id: str, promotion_id: str) -> Promotion | None:
    with store.read(engine) as conn:
        row = conn.execute(select(t.promotions).where(t.promotions.c.org_id == org_id,
                                                      t.promotions.c.id == promotion_id)).first()
        return _promotion(conn, row) if row else None


def bundle_of(conn: Connection, promotion_id: str) -> list[dict[str, Any]]:
    row = conn.execute(select(t.promotions.c.bundle).where(t.promotions.c.id == promotion_id)).first()
    return list(json.loads(row[0])) if row else []


def current_of(conn: Connection, env: HostedEnv) -> Promotion | None:
    row = conn.execute(select(t.promotions).join(t.current, t.current.c.promotion_id == t.promotions.c.id)
                       .where(t.current.c.env_id == env.id)).first()
    return _promotion(conn, row) if row else None


def history(engine: Engine, org_id: str, name: str, limit: int = 20, before: int | None = None) -> list[Promotion]:
    with store.read(engine) as conn:
        env = find_env(conn, org_id, name)
        if env is None:
            return []
        cond = [t.promotions.c.env_id == env.id]
        if before is not None:
            cond.append(t.promotions.c.seq < before)
        rows = conn.execute(select(t.promotions).where(and_(*cond)).order_by(t.promotions.c.seq.desc())
                            .limit(limit)).all()
        return [_promotion(conn, r) for r in rows]


def gates_of(conn: Connection, promotion_id: str) -> list[Gate]:
    """Promote-time gates first, then later ones oldest first (`gate list`'s order)."""
    rows = conn.execute(select(t.gates).where(t.gates.c.promotion_id == promotion_id)
                        .order_by(t.gates.c.at_promote.desc(), t.gates.c.seq)).all()
    return [Gate(name=r.name, status=r.status, summary=r.summary, run_id=r.run_id, promotion_id=r.promotion_id,
                 at_promote=bool(r.at_promote), recorded_at=r.recorded_at) for r in rows]


def record_gates(engine: Engine, org_id: str, name: str, promotion_id: str, gates: list[Gate]) -> list[bool]:
    with store.write(engine) as conn:
        env = require_env(conn, org_id, name, lock=True)
        found = conn.execute(select(t.promotions.c.id).where(t.promotions.c.env_id == env.id,
                                                             t.promotions.c.id == promotion_id)).first()
        if found is None:
            raise NotFound(f"promotion {promotion_id} is not in {name!r}")
        tx = HostedTx(conn, env)
        return [rules.record_gate(tx, name, promotion_id, g) for g in gates]


def applies_of(conn: Connection, env_id: str, limit: int = 5) -> list[dict[str, Any]]:
    rows = conn.execute(select(t.applies).where(t.applies.c.env_id == env_id).order_by(t.applies.c.seq.desc())
                        .limit(limit)).all()
    return [{"seq": r.seq, "promotion_id": r.promotion_id, "release": r.release, "started_at": r.started_at,
             "finished_at": r.finished_at, "phase": r.phase, "outcome": r.outcome,
             "resources": json.loads(r.resources), "superseded": bool(r.superseded)} for r in rows]


def bound_envs(engine: Engine, org_id: str, release: str) -> list[Promotion]:
    with store.read(engine) as conn:
        rows = conn.execute(select(t.promotions).join(t.current, t.current.c.promotion_id == t.promotions.c.id)
                            .where(t.promotions.c.org_id == org_id, t.promotions.c.release == release)
                            .order_by(t.promotions.c.env)).all()
        return [_promotion(conn, r) for r in rows]
