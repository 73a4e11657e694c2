"""The server's worker pool: claims queued runs from the durable run queue and executes them.

Claims are leases (renewed while a run executes), so a server killed with SIGKILL loses nothing:
its claimed runs become claimable again when their lease lapses, by this or another process
(at-least-once execution, docs/reference-webhooks.md#durability-and-processes). The filter decides whether
a delivery proceeds.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import threading
from pathlib import Path
from typing import Any

from sqlalchemy import delete, select, text, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from engine.hooks.filters import FilterEvaluator
from engine.hooks.models import TriggerDefinition
from engine.serverstore import store
from engine.serverstore.store import automations, deliveries, now_us, run_queue, runs, triggers

log = logging.getLogger("platform.server")
MAX_ATTEMPTS = 3


def lease_seconds() -> float:
    return float(os.environ.get("PLATFORM_RUN_LEASE_SECONDS", "30"))


def _claim_sql(postgres: bool) -> str:
    lock = " FOR UPDATE SKIP LOCKED" if postgres else ""
    return (
        "UPDATE run_queue SET state = 'running', lease_owner = :owner, lease_until = :until, "
        "attempts = attempts + 1 WHERE delivery_id = (SELECT delivery_id FROM run_queue "
        "WHERE state = 'queued' OR (state = 'running' AND lease_until < :now) "
        f"ORDER BY delivery_id LIMIT 1{lock}) RETURNING delivery_id, attempts"
    )


class WorkerPool:
    def __init__(self, engine: Engine, data_dir: Path, size: int = 2, poll: float = 0.5) -> None:
        self.engine = engine
        self.data_dir = data_dir
        self.size = size
        self.poll = poll
        self.owner = f"{os.getpid()}-{secrets.token_hex(4)}"
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._claim = text(_claim_sql(store.is_postgres(engine)))

    def start(self) -> None:
        for n in range(self.size):
            thread = threading.Thread(target=self._run, name=f"run-worker-{n}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def wake(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        for thread in self._threads:
            thread.join(10)

    def _run(self) -> None:
        evaluator = FilterEvaluator()
        try:
            while not self._stop.is_set():
                try:
                    job = self._claim_one()
                except SQLAlchemyError as exc:
                    log.warning("run queue unavailable: %s", str(exc).splitlines()[0])
                    job = None
                if job is None:
                    self._wake.wait(self.poll)
                    self._wake.clear()
                    continue
                try:
                    self._process(job[0], job[1], evaluator)
                except Exception:  # noqa: BLE001 - a failing run must not kill the worker
                    log.exception("run for delivery %s failed to execute", job[0])
        finally:
            evaluator.close()

    def _claim_one(self) -> tuple[str, int] | None:
        now = now_us()
        with store.write(self.engine) as conn:
            row = conn.execute(
                self._claim, {"owner": self.owner, "now": now, "until": now + int(lease_seconds() * 1e6)}
            ).first()
        return (row[0], row[1]) if row else None

    def _finish_delivery(
        self, delivery_id: str, outcome: str, detail: str | None, run_row: dict[str, Any] | None = None
    ) -> None:
        with store.write(self.engine) as conn:
            values: dict[str, Any] = {"outcome": outcome, "detail": detail, "updated_at": now_us()}
            if run_row is not None:
                values["run_id"] = run_row["id"]
            conn.execute(update(deliveries).where(deliveries.c.id == delivery_id).values(**values))
            if run_row is not None:
                conn.execute(delete(runs).where(runs.c.id == run_row["id"]))
                conn.execute(runs.insert().values(**run_row))
            if run_row is None or run_row["status"] != "running":
                conn.execute(delete(run_queue).where(run_queue.c.delivery_id == delivery_id))

    def _process(self, delivery_id: str, attempts: int, evaluator: FilterEvaluator) -> None:
        with store.read(self.engine) as conn:
            dlv = conn.execute(select(deliveries).where(deliveries.c.id == delivery_id)).one()
            trig = conn.execute(select(triggers).where(triggers.c.id == dlv.trigger_id)).one()
            auto = conn.execute(select(automations).where(automations.c.id == dlv.automation_id)).one()
        payload = json.loads(dlv.payload)
        run_id = dlv.run_id or "run_" + delivery_id.removeprefix("dlv_")
        if attempts > MAX_ATTEMPTS:
            self._finish_delivery(
                delivery_id,
                "run_started",
                dlv.detail,
                _run_row(
                    run_id, dlv, "failed", finished=True, error=f"abandoned after {MAX_ATTEMPTS} attempts"
                ),
            )
            return
        definition = TriggerDefinition.model_validate_json(trig.definition)
        # A replay was asked for by an operator: it runs without the filter.
        if definition.filter and dlv.outcome == "queued" and dlv.auth_method != "replay":
            result = evaluator.evaluate(definition.filter, payload)
            if not result.matched:
                # An evaluation error counts as "did not match" and is recorded (`filter_error`).
                outcome = "filter_error" if result.error else "filtered_out"
                self._finish_delivery(delivery_id, outcome, result.error or "filter did not match")
                return
        started = _run_row(run_id, dlv, "running")
        # Keeps the delivery's detail (e.g. "replay of dlv_...") once its run starts.
        self._finish_delivery(delivery_id, "run_started", dlv.detail, started)
        stop_renewing = threading.Event()
        renewer = threading.Thread(target=self._renew, args=(delivery_id, stop_renewing), daemon=True)
        renewer.start()
        try:
            status, steps, error, record = self._execute(auto, payload, run_id)
        finally:
            stop_renewing.set()
            renewer.join()
        row = _run_row(run_id, dlv, status, finished=True, error=error, steps=steps, record=record)
        row["started_at"] = started["started_at"]
        self._finish_delivery(delivery_id, "run_started", dlv.detail, row)

    def _renew(self, delivery_id: str, stop: threading.Event) -> None:
        interval = lease_seconds() / 3
        while not stop.wait(interval):
            try:
                with store.write(self.engine) as conn:
                    conn.execute(
                        update(run_queue)
                        .where(run_queue.c.delivery_id == delivery_id, run_queue.c.lease_owner == self.owner)
                        .values(lease_until=now_us() + int(lease_seconds() * 1e6))
                    )
            except SQLAlchemyError as exc:
                log.warning("lease renewal failed: %s", str(exc).splitlines()[0])

    def _execute(
        self, auto: Any, payload: dict[str, Any], run_id: str
    ) -> tuple[str, int, str | None, str | None]:
        """Run the automation's workflow with `trigger.payload` as its input (the run engine)."""
        import yaml

        from engine.runs.engine import execute_run
        from engine.workflows.definition import parse_workflow

        root = self.data_dir / "workspaces" / auto.id
        root.mkdir(parents=True, exist_ok=True)
        remote = None
        try:
            workflow = parse_workflow(yaml.safe_load(auto.workflow_source), source=f"automation {auto.name}")
            if workflow.target.startswith("daemon:"):  # its tools run on that daemon's machine
                from engine.server.gateway.runs import RunDaemonTools

                remote = RunDaemonTools(self.engine, workflow.target.removeprefix("daemon:"), run_id)
            record = execute_run(
                workflow,
                inputs={"trigger": {"payload": payload}},
                root=root,
                run_id=run_id,
                runs_home=self.data_dir / "runs",
                tool_runner=remote.call if remote else None,
            )
        except Exception as exc:  # noqa: BLE001 - a broken workflow fails its run, not the server
            return "failed", 0, f"{type(exc).__name__}: {exc}", None
        finally:
            if remote is not None:
                remote.close()
        return record.status, len(record.steps), record.error, record.model_dump_json()


def _run_row(
    run_id: str,
    dlv: Any,
    status: str,
    *,
    finished: bool = False,
    error: str | None = None,
    steps: int = 0,
    record: str | None = None,
) -> dict[str, Any]:
    now = now_us()
    return {
        "id": run_id,
        "automation_id": dlv.automation_id,
        "delivery_id": dlv.id,
        "status": status,
        "started_at": now,
        "finished_at": now if finished else None,
        "steps": steps,
        "error": error,
        "record": record,
    }
