"""Hosted environment state (docs/reference-hosted.md#commands-on-hosted-environments): billing entitlement per
organization, `env stop` (never refused, data kept), `env start` (refused with the server's reason when the
organization is not entitled), `env delete` (deployments and state removed; a later deploy of the same name creates
a new environment), and the status of many environments in one round trip."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Connection, Engine

from engine.auth import tables as auth_t
from engine.controlplane import ledger
from engine.controlplane import tables as t
from engine.controlplane.releases import replicas_of
from engine.errors import EngineError, NotFound
from engine.serverstore import store


class NotEntitled(EngineError):
    """`env start` of an organization without billing: the server's reason (exit 7: waiting on a person)."""

    code = "not_entitled"
    exit_code = 7


_LOCKS: dict[tuple[str, str], threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


@contextmanager
def env_lock(org_id: str, name: str) -> Iterator[None]:
    """Serializes, inside one server process, a targeted stop against the converger's look at the same
    environment (docs/reference-hosted.md#convergence): the stop's write and kill on one side, the converger's
    read of the stopped workloads, its health check and the start of a rollout on the other."""
    with _LOCKS_GUARD:
        lock = _LOCKS.setdefault((org_id, name), threading.Lock())
    with lock:
        yield


def stopped_of(conn: Connection, env_id: str) -> set[str]:
    """The workloads `env stop <env> <targets>` stopped, as stored now (never a copy read earlier)."""
    row = conn.execute(select(t.envs.c.stopped_targets).where(t.envs.c.id == env_id)).first()
    return set(json.loads(row[0] or "[]")) if row else set()


def runtime_root(data_dir: Path) -> Path:
    """Where the control plane runs its hosted workloads (records, logs, release files)."""
    return data_dir / "hosted"


def entitled(conn: Connection, org_id: str) -> bool:
    row = conn.execute(select(t.billing.c.enabled).where(t.billing.c.org_id == org_id)).first()
    return bool(row and row[0])


def org_name(conn: Connection, org_id: str) -> str:
    row = conn.execute(select(auth_t.orgs.c.name).where(auth_t.orgs.c.id == org_id)).first()
    return str(row[0]) if row else org_id


def action_url(base: str, org: str) -> str:
    return f"{base}/billing/{org}"


def set_billing(engine: Engine, org: str, enabled: bool) -> dict[str, Any]:
    """`platform server org billing <org> --enable|--disable` (an admin command on the store)."""
    with store.write(engine) as conn:
        row = conn.execute(select(auth_t.orgs.c.id).where(auth_t.orgs.c.name == org)).first()
        if row is None:
            raise NotFound(f"no organization {org!r}", hint="create it with: platform server org add <name>")
        done = conn.execute(update(t.billing).where(t.billing.c.org_id == row[0])
                            .values(enabled=enabled, updated_at=store.now_us()))
        if done.rowcount == 0:
            conn.execute(insert(t.billing).values(org_id=row[0], enabled=enabled, updated_at=store.now_us()))
    return {"organization": org, "billing": enabled}


def _queued(conn: Connection, org_id: str, base: str) -> dict[str, Any]:
    name = org_name(conn, org_id)
    return {"wait": "billing", "message": f"organization {name!r} has no billing entitlement; the deploy is "
            "recorded and goes live by itself once billing is enabled", "action_url": action_url(base, name)}


def env_status(conn: Connection, org_id: str, name: str, base: str, root: Path) -> dict[str, Any]:
    """One hosted environment as the control plane sees it (`env status`)."""
    from engine.runtime.process import observe

    env = ledger.find_env(conn, org_id, name)
    if env is None:
        return {"env": name, "exists": False, "state": None, "convergence": "unbound", "promotion": None,
                "workloads": [], "queued": None, "apply": None}
    current = ledger.current_of(conn, env)
    applies = ledger.applies_of(conn, env.id, limit=1)
    last = applies[0] if applies else None
    doc: dict[str, Any] = {"env": name, "exists": True, "env_id": env.id, "state": env.state,
                           "stopped_targets": env.stopped_targets,
                           "promotion": current.model_dump(mode="json") if current else None,
                           "converged_id": env.converged_id, "apply": last, "queued": None}
    alive = [i for i in observe(org_id, env.id, root) if i["alive"]]
    bundle = ledger.bundle_of(conn, current.id) if current else []
    workloads = []
    for w in bundle:
        mine = [i for i in alive if i.get("workload") == w["name"]]
        resources: list[dict[str, Any]] = (last or {}).get("resources") or []
        resource = next((r for r in resources if r.get("name") == w["name"]), {})
        expected = ((current.images if current else {}).get(w["name"]) or {}).get("digest")
        if w.get("output") == "static":  # no process: served by the gateway once the rollout laid it out
            served = current is not None and env.converged_id == current.id
            workloads.append({"name": w["name"], "kind": "frontend", "replicas": 0, "running": 0,
                              "phase": "ready" if served else "pending", "digests": [expected] if served else [],
                              "expected_digest": expected, "stopped": w["name"] in env.stopped_targets})
            continue
        workloads.append({"name": w["name"], "replicas": replicas_of(w), "running": len(mine),
                          "phase": resource.get("phase") or ("ready" if mine else "pending"),
                          "digests": sorted({i.get("running_digest") or "" for i in mine}),
                          "expected_digest": expected, "stopped": w["name"] in env.stopped_targets})
    doc["workloads"] = workloads
    if current is None:
        doc["convergence"] = "unbound"
    elif env.state == "stopped":
        doc["convergence"] = "stopped"
    elif not entitled(conn, org_id):
        doc["convergence"] = "queued"
        doc["queued"] = _queued(conn, org_id, base)
    elif env.converged_id == current.id and last and last["promotion_id"] == current.id \
            and last["outcome"] == "ready":
        doc["convergence"] = "converged"
    elif last and last["promotion_id"] == current.id and last["outcome"] in ("failed", "timed_out"):
        doc["convergence"] = "DEGRADED"
    else:
        doc["convergence"] = "progressing"
    return doc


def statuses(engine: Engine, org_id: str, names: list[str] | None, base: str, root: Path) -> list[dict[str, Any]]:
    with store.read(engine) as conn:
        if not names:
            names = [r[0] for r in conn.execute(select(t.envs.c.name).where(t.envs.c.org_id == org_id)
                                                 .order_by(t.envs.c.name)).all()]
        return [env_status(conn, org_id, n, base, root) for n in names]


def stop(engine: Engine, org_id: str, name: str, targets: list[str], root: Path) -> dict[str, Any]:
    """Never refused; data kept (the ledger, releases); compute stops."""
    from engine.runtime.process import stop_env

    with env_lock(org_id, name):  # the converger never sees the write without the kill (converge.py)
        with store.write(engine) as conn:
            env = ledger.require_env(conn, org_id, name, lock=True)
            if targets:
                merged = sorted(set(env.stopped_targets) | set(targets))
                conn.execute(update(t.envs).where(t.envs.c.id == env.id)
                             .values(stopped_targets=json.dumps(merged)))
            else:
                conn.execute(update(t.envs).where(t.envs.c.id == env.id).values(state="stopped"))
        chosen: list[str | None] = list(targets) or [None]  # None: every workload
        stopped = sum(stop_env(org_id, env.id, root, w) for w in chosen)
    return {"env": name, "state": "active" if targets else "stopped", "targets": targets, "stopped_instances": stopped}


def start(engine: Engine, org_id: str, name: str, targets: list[str], base: str) -> dict[str, Any]:
    """Refused with the server's reason when the organization is not entitled."""
    with store.write(engine) as conn:
        env = ledger.require_env(conn, org_id, name, lock=True)
        if not entitled(conn, org_id):
            q = _queued(conn, org_id, base)
            raise NotEntitled(f"cannot start {name!r}: {q['message'].split(';')[0]}",
                              hint=f"enable billing: {q['action_url']}")
        remaining = sorted(set(env.stopped_targets) - set(targets)) if targets else []
        state = env.state if targets else "active"
        # converged_id cleared: the control plane converges the environment again from its ledger
        conn.execute(update(t.envs).where(t.envs.c.id == env.id)
                     .values(state=state, stopped_targets=json.dumps(remaining), converged_id=None))
    return {"env": name, "state": state, "targets": targets}


def delete_env(engine: Engine, org_id: str, name: str, root: Path) -> dict[str, Any]:
    """Deployments and state removed; the promotions stay in the append-only ledger under the old
    environment's id, so a later deploy of the same name starts a new environment."""
    import shutil

    from engine.runtime.process import runtime_dir, stop_env

    with store.write(engine) as conn:
        env = ledger.require_env(conn, org_id, name, lock=True)
        conn.execute(delete(t.current).where(t.current.c.env_id == env.id))
        conn.execute(delete(t.envs).where(t.envs.c.id == env.id))
    stopped = stop_env(org_id, env.id, root)
    shutil.rmtree(runtime_dir(org_id, env.id, root), ignore_errors=True)
    return {"env": name, "deleted": True, "env_id": env.id, "stopped_instances": stopped}
