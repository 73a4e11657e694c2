"""Automations and their webhook triggers, as stored by the server, and their states and transitions.

activation: URL and token displayed once (and the HMAC secret taken); rotate: the old token stops
working at once; enable / disable; history of deliveries with what each did.
"""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime
from typing import Any

import yaml
from sqlalchemy import select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from engine.auth.bearer import new_token, token_hash
from engine.errors import Conflict, EngineError, NotFound
from engine.hooks.filters import compile_filter
from engine.hooks.journal import catch_up
from engine.hooks.models import (
    Activation,
    Automation,
    AutomationList,
    Delivery,
    History,
    Run,
    Trigger,
    TriggerDefinition,
)
from engine.hooks.secrets import SecretBox
from engine.serverstore import store
from engine.serverstore.store import automations, deliveries, now_us, runs, triggers

MAX_HMAC_SECRET = 1024


def iso(us: int | None) -> str | None:
    if us is None:
        return None
    return datetime.fromtimestamp(us / 1e6, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def workflow_name(source: str) -> str:
    """Validate a workflow document with the run engine's own parser before storing it."""
    from engine.workflows.definition import WorkflowError, parse_workflow

    try:
        doc = yaml.safe_load(source)
    except yaml.YAMLError as exc:
        raise EngineError(
            f"workflow is not valid YAML: {str(exc).splitlines()[0]}", code="invalid_workflow", exit_code=2
        ) from None
    try:
        return parse_workflow(doc, source="workflow").name
    except WorkflowError as exc:
        raise EngineError(exc.message, code="invalid_workflow", exit_code=2) from None


def create_automation(engine: Engine, name: str, workflow_source: str) -> Automation:
    from engine import names

    names.check(name, "automation", limit=100)
    wf_name = workflow_name(workflow_source)
    row: dict[str, Any] = {
        "id": "aut_" + secrets.token_hex(8),
        "name": name,
        "workflow_name": wf_name,
        "workflow_source": workflow_source,
        "created_at": now_us(),
    }
    try:
        with store.write(engine) as conn:
            conn.execute(automations.insert().values(**row))
    except IntegrityError:
        raise Conflict(f"automation {name!r} already exists") from None
    return Automation(id=row["id"], name=name, workflow_name=wf_name, created_at=iso(row["created_at"]) or "")


def _automation_row(conn: Any, name: str) -> Any:
    row = conn.execute(select(automations).where(automations.c.name == name)).first()
    if row is None:
        raise NotFound(f"no automation named {name!r}", hint="platform automation list")
    return row


def _trigger_row(conn: Any, automation: str, name: str) -> tuple[Any, Any]:
    auto = _automation_row(conn, automation)
    row = conn.execute(
        select(triggers).where(triggers.c.automation_id == auto.id, triggers.c.name == name)
    ).first()
    if row is None:
        raise NotFound(
            f"automation {automation!r} has no trigger named {name!r}",
            hint=f"platform trigger list {automation}",
        )
    return auto, row


def hook_url(base_url: str, trigger_id: str) -> str:
    return f"{base_url.rstrip('/')}/hooks/{trigger_id}"


def _trigger_model(auto: Any, row: Any, base_url: str) -> Trigger:
    return Trigger(
        id=row.id,
        automation=auto.name,
        name=row.name,
        enabled=bool(row.enabled),
        activated=row.token_hash is not None,
        hmac_secret_set=row.hmac_secret_sealed is not None,
        definition=TriggerDefinition.model_validate_json(row.definition),
        url=hook_url(base_url, row.id) if row.token_hash else None,
        created_at=iso(row.created_at) or "",
        rotated_at=iso(row.rotated_at),
    )


def add_trigger(engine: Engine, automation: str, definition: TriggerDefinition, base_url: str) -> Trigger:
    """Save a trigger; its filter is compiled first and refused with its position when invalid."""
    if definition.filter is not None:
        compile_filter(definition.filter)
    with store.write(engine) as conn:
        auto = _automation_row(conn, automation)
        row = {
            "id": "trg_" + secrets.token_hex(8),
            "automation_id": auto.id,
            "name": definition.name,
            "definition": definition.model_dump_json(exclude_none=True),
            "enabled": False,
            "token_hash": None,
            "hmac_secret_sealed": None,
            "activated_at": None,
            "rotated_at": None,
            "created_at": now_us(),
        }
        try:
            conn.execute(triggers.insert().values(**row))
        except IntegrityError:
            raise Conflict(
                f"automation {automation!r} already has a trigger named {definition.name!r}"
            ) from None
        saved = conn.execute(select(triggers).where(triggers.c.id == row["id"])).one()
        return _trigger_model(auto, saved, base_url)


def _check_secret(definition: TriggerDefinition, hmac_secret: str | None, required: bool) -> None:
    if definition.webhook.hmac is None and hmac_secret:
        raise EngineError(
            "this trigger has no webhook.hmac configuration; an HMAC secret is not used",
            code="usage",
            exit_code=2,
        )
    if definition.webhook.hmac is not None and required and not hmac_secret:
        raise EngineError(
            "this trigger verifies HMAC signatures: activation takes the shared secret",
            code="usage",
            exit_code=2,
            hint="pass --hmac-secret-stdin or --hmac-secret-env VAR",
        )
    if hmac_secret is not None and len(hmac_secret) > MAX_HMAC_SECRET:
        raise EngineError(f"HMAC secret longer than {MAX_HMAC_SECRET} characters", code="usage", exit_code=2)


def activate(
    engine: Engine,
    box: SecretBox,
    automation: str,
    trigger: str,
    hmac_secret: str | None,
    base_url: str,
    *,
    rotate: bool = False,
) -> Activation:
    """Activation (or rotation): a fresh token whose hash replaces the old one in one statement."""
    token = new_token("whk")
    with store.write(engine) as conn:
        auto, row = _trigger_row(conn, automation, trigger)
        definition = TriggerDefinition.model_validate_json(row.definition)
        if rotate and row.token_hash is None:
            raise Conflict(f"trigger {trigger!r} is not activated yet", hint="platform trigger activate")
        if not rotate and row.token_hash is not None:
            raise Conflict(
                f"trigger {trigger!r} is already activated; its token was displayed once",
                hint=f"platform trigger rotate {automation} {trigger}",
            )
        _check_secret(definition, hmac_secret, required=not rotate)
        values: dict[str, Any] = {"token_hash": token_hash(token)}
        if hmac_secret:
            values["hmac_secret_sealed"] = box.seal(hmac_secret.encode())
        if rotate:
            values["rotated_at"] = now_us()
        else:
            values.update(enabled=True, activated_at=now_us())
        conn.execute(update(triggers).where(triggers.c.id == row.id).values(**values))
        saved = conn.execute(select(triggers).where(triggers.c.id == row.id)).one()
        model = _trigger_model(auto, saved, base_url)
    url = hook_url(base_url, row.id)
    return Activation(
        trigger=model,
        url=url,
        token=token,
        url_with_token=f"{url}/{token}",
        hmac=definition.webhook.hmac is not None,
    )


def set_enabled(engine: Engine, automation: str, trigger: str, enabled: bool, base_url: str) -> Trigger:
    with store.write(engine) as conn:
        auto, row = _trigger_row(conn, automation, trigger)
        if enabled and row.token_hash is None:
            raise Conflict(
                f"trigger {trigger!r} is not activated yet",
                hint=f"platform trigger activate {automation} {trigger}",
            )
        conn.execute(update(triggers).where(triggers.c.id == row.id).values(enabled=enabled))
        saved = conn.execute(select(triggers).where(triggers.c.id == row.id)).one()
        return _trigger_model(auto, saved, base_url)


def list_automations(engine: Engine, base_url: str) -> AutomationList:
    with store.read(engine) as conn:
        autos = conn.execute(select(automations).order_by(automations.c.name)).all()
        trig = conn.execute(select(triggers).order_by(triggers.c.name)).all()
    by_auto: dict[str, list[Any]] = {}
    for row in trig:
        by_auto.setdefault(row.automation_id, []).append(row)
    return AutomationList(
        automations=[
            Automation(
                id=a.id,
                name=a.name,
                workflow_name=a.workflow_name,
                created_at=iso(a.created_at) or "",
                triggers=[_trigger_model(a, t, base_url) for t in by_auto.get(a.id, [])],
            )
            for a in autos
        ]
    )


def _cursor(before: str | None) -> tuple[int, str] | None:
    """`<received_us>:<delivery id>` of the last delivery already shown (History.next_before)."""
    if not before:
        return None
    stamp, _, delivery_id = before.partition(":")
    if not stamp.isdigit() or not delivery_id:
        raise EngineError(f"invalid history cursor {before!r}", code="usage", exit_code=2,
                          hint="pass the next_before value of the previous page")
    return int(stamp), delivery_id


def history(
    engine: Engine, automation: str, trigger: str | None = None, limit: int = 50, before: str | None = None
) -> History:
    """Deliveries newest first, each with what it did and its run (history outcomes), one page at a
    time: `before` is the previous page's `next_before`; only `limit + 1` rows are ever read."""
    limit = max(1, min(limit, 1000))
    cursor = _cursor(before)
    catch_up(engine)  # every delivery answered 202 is read (engine.hooks.journal)
    with store.read(engine) as conn:
        if trigger:
            auto, trow = _trigger_row(conn, automation, trigger)
            where = deliveries.c.trigger_id == trow.id
        else:
            auto = _automation_row(conn, automation)
        names = {
            r.id: r.name
            for r in conn.execute(
                select(triggers.c.id, triggers.c.name).where(triggers.c.automation_id == auto.id)
            )
        }
        if not trigger:
            # Through the (trigger_id, received_at) index: deliveries carry one index only.
            where = deliveries.c.trigger_id.in_(list(names) or [""])
        if cursor is not None:
            # Range on the indexed column first, then the tie-break on the id.
            where = where & (deliveries.c.received_at <= cursor[0]) & (
                (deliveries.c.received_at < cursor[0]) | (deliveries.c.id < cursor[1])
            )
        rows = conn.execute(
            select(deliveries)
            .where(where)
            .order_by(deliveries.c.received_at.desc(), deliveries.c.id.desc())
            .limit(limit + 1)
        ).all()
        more = len(rows) > limit
        rows = rows[:limit]
        run_rows = (
            {
                r.delivery_id: r
                for r in conn.execute(select(runs).where(runs.c.delivery_id.in_([r.id for r in rows]))).all()
            }
            if rows
            else {}
        )
    out = [_delivery_model(r, names, run_rows.get(r.id)) for r in rows]
    next_before = f"{rows[-1].received_at}:{rows[-1].id}" if more else ""
    return History(automation=automation, trigger=trigger, deliveries=out, next_before=next_before)


def _delivery_model(r: Any, names: dict[str, str], run: Any) -> Delivery:
    return Delivery(
        id=r.id,
        trigger=names.get(r.trigger_id, r.trigger_id),
        received_at=iso(r.received_at) or "",
        status_code=r.status_code,
        outcome=r.outcome,
        auth_method=r.auth_method,
        dedupe_key=r.dedupe_key,
        duplicate_of=r.duplicate_of,
        detail=r.detail,
        body_bytes=r.body_bytes,
        payload=json.loads(r.payload) if r.payload else None,
        run=Run(
            id=run.id,
            status=run.status,
            started_at=iso(run.started_at) or "",
            finished_at=iso(run.finished_at),
            steps=run.steps,
            error=run.error,
        )
        if run
        else None,
    )


def replay(engine: Engine, automation: str, delivery_id: str) -> Delivery:
    """Replay a recorded delivery as a NEW delivery and run: its payload is copied,
    it is recorded in history as `replay of <id>` (auth `replay`), and it is queued like any
    accepted delivery. No de-duplication key: a replay is asked for, never a retry."""
    from engine.hooks.models import delivery_id as new_delivery_id

    catch_up(engine)  # a delivery answered 202 a moment ago is there to replay
    with store.write(engine) as conn:
        auto = _automation_row(conn, automation)
        original = conn.execute(
            select(deliveries).where(deliveries.c.id == delivery_id, deliveries.c.automation_id == auto.id)
        ).first()
        if original is None:
            raise NotFound(f"automation {automation!r} has no delivery {delivery_id!r}",
                           hint=f"platform automation history {automation}")
        trow = conn.execute(select(triggers).where(triggers.c.id == original.trigger_id)).one()
        if original.payload is None:
            raise Conflict(f"delivery {delivery_id} was refused and kept no payload; nothing to replay")
        if not trow.enabled:
            raise Conflict(f"trigger {trow.name!r} is disabled (a delivery to it gets 409)",
                           hint=f"platform trigger enable {automation} {trow.name}")
        received = now_us()
        row = {
            "id": new_delivery_id(received),
            "trigger_id": trow.id,
            "automation_id": auto.id,
            "received_at": received,
            "status_code": 202,
            "outcome": "queued",
            "auth_method": "replay",
            "dedupe_key": None,
            "duplicate_of": None,
            "payload": original.payload,
            "body_bytes": original.body_bytes,
            "run_id": None,
            "detail": f"replay of {delivery_id}",
            "updated_at": received,
            "decided_at": None,  # answered by the API, not the recorder: no answer latency
        }
        conn.execute(deliveries.insert().values(**row))
        conn.execute(
            store.run_queue.insert().values(
                delivery_id=row["id"], automation_id=auto.id, state="queued", enqueued_at=received,
                lease_owner=None, lease_until=None, attempts=0,
            )
        )
        saved = conn.execute(select(deliveries).where(deliveries.c.id == row["id"])).one()
    return _delivery_model(saved, {trow.id: trow.name}, None)
