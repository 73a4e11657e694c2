"""Hosted convergence (deploy rule 4: hosted environments are converged by the control
plane; docs/reference-hosted.md#convergence): the control plane runs each hosted environment's workloads on its own
host with the process runtime (supervised, health-checked, restarted): the honest stand-in for a hosted fleet on one
machine, behind the same API a remote fleet would have.

A loop in every server process looks at each active, entitled environment: the process holding the
environment's lease (taken when free or expired, renewed while held) supervises it, and when its
workloads do not run its current promotion (a new promotion, a restart, a crashed instance) rolls it
out and records the rollout on the hosted ledger's apply row (phases per workload; outcome). Several
servers on one PostgreSQL converge each environment once; a server killed mid-rollout leaves its
lease to expire and the next one resumes the same apply.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
import uuid
from pathlib import Path
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.engine import Engine

from engine.controlplane import ledger, releases
from engine.controlplane import tables as t
from engine.controlplane.state import env_lock, runtime_root, stopped_of
from engine.serverstore import store

log = logging.getLogger("platform.controlplane")
TICK_S = 0.25
LEASE_S = 10.0  # a killed owner's environments are taken over within this (PLATFORM_CONVERGE_LEASE_S)
# the rollout's end -> the apply's recorded outcome (as the machine ledger's applies)
OUTCOMES = {"ready": "ready", "not_waited": "not_waited", "DEGRADED": "failed", "SUPERSEDED": "superseded",
            "timed_out": "timed_out"}


def lease_seconds() -> float:
    """An environment's lease: PLATFORM_CONVERGE_LEASE_S when set to a positive number, else LEASE_S."""
    try:
        value = float(os.environ.get("PLATFORM_CONVERGE_LEASE_S") or LEASE_S)
    except ValueError:
        return LEASE_S
    return value if 0 < value < 86400 else LEASE_S


def hosted_base_env(workdir: Path) -> dict[str, str]:
    """A hosted workload starts from a clean environment: never the server's own (its store URL,
    its tokens); only what a program needs to run, plus what the workload declares."""
    keep = {k: os.environ[k] for k in ("PATH", "LANG", "LC_ALL", "TZ") if k in os.environ}
    return {**keep, "HOME": str(workdir), "PYTHONUNBUFFERED": "1"}


class Converger:
    def __init__(self, engine: Engine, data_dir: Path, *, rollout_timeout: float = 300.0,
                 stability_window: float = 1.0) -> None:
        self.engine = engine
        self.root = runtime_root(data_dir)
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.rollout_timeout = rollout_timeout
        self.stability_window = stability_window
        self.lease_s = lease_seconds()
        self.busy: dict[str, threading.Thread] = {}
        self.failed: dict[str, str] = {}  # env id -> the promotion whose rollout failed (not retried)
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None

    def start(self) -> None:
        self.thread = threading.Thread(target=self._loop, name="converger", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        """Graceful: the loop ends and this server's leases are released, so another server takes its
        environments over at once (the workloads keep running)."""
        self.stopping.set()
        if self.thread is not None:
            self.thread.join(timeout=5)
        try:
            with store.write(self.engine) as conn:
                conn.execute(update(t.envs).where(t.envs.c.lease_owner == self.owner)
                             .values(lease_owner=None, lease_until=None))
        except Exception:  # noqa: BLE001 - shutting down: the leases expire by themselves
            log.exception("releasing leases failed")

    def _loop(self) -> None:
        while not self.stopping.wait(TICK_S):
            try:
                self.tick()
            except Exception:  # noqa: BLE001 - the loop outlives a bad tick (store briefly unavailable)
                log.exception("convergence tick failed")
                time.sleep(1)

    def tick(self) -> None:
        with store.read(self.engine) as conn:
            rows = conn.execute(
                select(t.envs.c.id, t.envs.c.org_id, t.envs.c.name, t.envs.c.converged_id, t.envs.c.stopped_targets,
                       t.envs.c.lease_owner, t.envs.c.lease_until, t.current.c.promotion_id)
                .join(t.current, t.current.c.env_id == t.envs.c.id)
                .join(t.billing, t.billing.c.org_id == t.envs.c.org_id)
                .where(t.envs.c.state == "active", t.billing.c.enabled.is_(True))
            ).all()
        now = store.now_us()
        for row in rows:
            # one owner converges and supervises each environment; another server takes it over only
            # once the owner's lease has expired (it died or stopped). The owner renews it here, also
            # while a rollout of it runs (which renews it too)
            if row.lease_owner not in (None, self.owner) and (row.lease_until or 0) > now:
                continue
            if (row.lease_owner != self.owner or (row.lease_until or 0) - now < self.lease_s * 5e5) and \
                    not self._lease(row.id):
                continue
            running = self.busy.get(row.id)
            if running is not None and running.is_alive():
                continue
            if self.failed.get(row.id) == row.promotion_id:
                continue
            # the look and the start of a rollout hold the environment's lock, as a targeted stop does
            # (state.stop): the stopped workloads are read under it, never taken from the tick's snapshot
            with env_lock(row.org_id, row.name):
                if row.converged_id == row.promotion_id and self._healthy(row):
                    continue
                thread = threading.Thread(target=self._converge, args=(row,), name=f"converge-{row.name}",
                                          daemon=True)
                self.busy[row.id] = thread
                thread.start()

    def _healthy(self, row: Any) -> bool:
        """Supervision: every declared replica of every running workload is alive, and no stopped workload
        runs (one a rollout started while `env stop --target` stopped it is stopped again)."""
        from engine.runtime.process import observe, stop_env

        with store.read(self.engine) as conn:
            bundle = ledger.bundle_of(conn, row.promotion_id)
            stopped = stopped_of(conn, row.id)
        alive = [i for i in observe(row.org_id, row.id, self.root) if i["alive"]]
        for name in stopped & {str(i.get("workload")) for i in alive}:
            stop_env(row.org_id, row.id, self.root, name)
        return all(sum(1 for i in alive if i.get("workload") == w["name"]) >= releases.replicas_of(w)
                   for w in bundle if w["name"] not in stopped)

    def _lease(self, env_id: str) -> bool:
        now = store.now_us()
        with store.write(self.engine) as conn:
            done = conn.execute(update(t.envs).where(
                t.envs.c.id == env_id,
                or_(t.envs.c.lease_owner.is_(None), t.envs.c.lease_owner == self.owner, t.envs.c.lease_until < now),
            ).values(lease_owner=self.owner, lease_until=now + int(self.lease_s * 1e6)))
        return bool(done.rowcount == 1)

    def _specs(self, org_id: str, release: dict[str, Any], images: dict[str, Any], bundle: list[dict[str, Any]],
               stopped: set[str]) -> list[Any]:
        from engine.runtime.process import WorkloadSpec

        specs = []
        for w in bundle:
            if w["name"] in stopped:
                continue
            files = releases.materialize(self.engine, self.root, org_id, release, w["name"])
            if w.get("output") == "static":
                continue  # the gateway serves its files; nothing runs
            workdir = files / w["root"] if w.get("root") else files  # a frontend: in its built output
            specs.append(WorkloadSpec(name=w["name"], run=list(w.get("run") or []), env=dict(w.get("env") or {}),
                                      ports=list(w.get("ports") or []), replicas=int(w.get("replicas") or 1),
                                      health=w.get("health"), digest=(images.get(w["name"]) or {}).get("digest", ""),
                                      workdir=str(workdir), base_env=hosted_base_env(workdir)))
        return specs

    def _open_apply(self, row: Any, release: str) -> int:
        """The apply row of this promotion: resumed when a killed server left it open, else a new one;
        other open rows (older promotions) are closed as superseded."""
        with store.write(self.engine) as conn:
            env = ledger.require_env(conn, row.org_id, row.name, lock=True)
            seq = 0
            for r in conn.execute(select(t.applies).where(t.applies.c.env_id == row.id,
                                                          t.applies.c.finished_at.is_(None))).all():
                if r.promotion_id == row.promotion_id and not seq:
                    seq = r.seq
                    conn.execute(update(t.applies).where(t.applies.c.env_id == row.id, t.applies.c.seq == r.seq)
                                 .values(owner=self.owner))
                else:
                    conn.execute(update(t.applies).where(t.applies.c.env_id == row.id, t.applies.c.seq == r.seq)
                                 .values(finished_at=time.time(), outcome="superseded", phase="SUPERSEDED"))
            if not seq:
                seq = ledger.HostedTx(conn, env, owner=self.owner).insert_apply(row.name, row.promotion_id, release)
        return seq

    def _write_apply(self, env_id: str, seq: int, **values: Any) -> None:
        with store.write(self.engine) as conn:
            if values:
                conn.execute(update(t.applies).where(t.applies.c.env_id == env_id, t.applies.c.seq == seq)
                             .values(**values))
            conn.execute(update(t.envs).where(t.envs.c.id == env_id, t.envs.c.lease_owner == self.owner)
                         .values(lease_until=store.now_us() + int(self.lease_s * 1e6)))

    def _stop_if_gone(self, row: Any) -> None:
        """Stopped or deleted while this rollout ran: what it started stops too (never left orphaned)."""
        from engine.runtime.process import stop_env

        with store.read(self.engine) as conn:
            env = ledger.find_env(conn, row.org_id, row.name)
        if env is None or env.id != row.id or env.state != "active":
            stop_env(row.org_id, row.id, self.root)

    def _converge(self, row: Any) -> None:
        from engine.runtime.process import ProcessRuntime, RolloutOptions

        try:
            with store.read(self.engine) as conn:
                prom = conn.execute(select(t.promotions).where(t.promotions.c.id == row.promotion_id)).one()
            release = releases.get_release(self.engine, row.org_id, prom.release)
            seq = self._open_apply(row, prom.release)
            if release is None:
                self._write_apply(row.id, seq, phase="DEGRADED", outcome="failed", finished_at=time.time())
                self.failed[row.id] = row.promotion_id
                return
            with env_lock(row.org_id, row.name), store.read(self.engine) as conn:
                stopped = stopped_of(conn, row.id)  # as stored now: the tick's row may predate a stop
            specs = self._specs(row.org_id, release, json.loads(prom.images), json.loads(prom.bundle), stopped)
            live: dict[str, dict[str, Any]] = {s.name: {"name": s.name, "phase": "pending"} for s in specs}
            last_beat = [time.monotonic()]

            def on_phase(workload: str, phase: str) -> None:
                live.setdefault(workload, {"name": workload})["phase"] = phase
                self._write_apply(row.id, seq, phase=phase, resources=json.dumps(list(live.values())))

            def superseded() -> bool:
                if time.monotonic() - last_beat[0] > 1.0:  # keep the lease while driving the rollout
                    last_beat[0] = time.monotonic()
                    self._write_apply(row.id, seq)
                with store.read(self.engine) as conn:
                    env = ledger.find_env(conn, row.org_id, row.name)
                    now = conn.execute(select(t.current.c.promotion_id).where(t.current.c.env_id == row.id)).first()
                # a workload stopped while this rollout ran: its specs are no longer the environment's
                return env is None or env.state != "active" or now is None or now[0] != row.promotion_id \
                    or set(env.stopped_targets) != stopped

            runtime = ProcessRuntime(row.org_id, row.id, prom.release, row.promotion_id, root=self.root)
            options = RolloutOptions(timeout=self.rollout_timeout, stability_window=self.stability_window)
            phase, resources = runtime.rollout(specs, options, on_phase=on_phase, superseded=superseded)
            self._write_apply(row.id, seq, phase=phase, outcome=OUTCOMES[phase], finished_at=time.time(),
                              resources=json.dumps([r.model_dump() for r in resources]))
            if phase == "ready":
                with store.write(self.engine) as conn:
                    conn.execute(update(t.envs).where(t.envs.c.id == row.id).values(converged_id=row.promotion_id))
            elif phase != "SUPERSEDED":
                self.failed[row.id] = row.promotion_id
            else:
                self._stop_if_gone(row)
        except Exception:  # noqa: BLE001 - a failed rollout is recorded by its apply; the loop goes on
            log.exception("converging %s (%s) failed", row.name, row.promotion_id)
            self.failed[row.id] = row.promotion_id
        finally:
            self.busy.pop(row.id, None)
