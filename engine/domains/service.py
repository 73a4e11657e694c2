"""The domain state machine on the control plane (docs/reference-domains.md#states).

- `add` (claims; prints DNS to publish; does not lock the name) -> `pending_dns`, or `conflict` when
  another organization already owns the name.
- `pending_dns`, DNS verifies (`verify`, or the server's poller), no one owns the name -> `live`:
  this organization owns it, every other claim moves to `conflict`.
- `pending_dns`, another organization proves ownership first -> `conflict`.
- `bind` / `unbind` in any state: the state stays; a binding serves only when `live`.
- `rm` -> removed; when the owner removes it the name is freed: every `conflict` claim returns to
  `pending_dns`.

Ownership is one row per hostname in `cp_domain_owners`; its primary key decides a race between
organizations (INSERT ... ON CONFLICT DO NOTHING inside the write transaction), on SQLite and on
PostgreSQL alike. Every read and write filters on the caller's organization.
"""

from __future__ import annotations

import secrets
import uuid
from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Connection, Engine

from engine.domains import dnscheck, records
from engine.domains import tables as t
from engine.domains.models import Binding, Domain, DomainRemoved, LastCheck, LiveBinding
from engine.errors import InvalidInput, NotFound
from engine.serverstore import store

PENDING, CONFLICT, LIVE = "pending_dns", "conflict", "live"
WITHDRAWN = "the ownership record is no longer published"


def _doc(row: Any) -> Domain:
    binding: Binding | None = None
    if row.redirect_to:
        binding = Binding(redirect_to=row.redirect_to)
    elif row.target:
        binding = Binding(env=row.env, target=row.target)
    return Domain.model_validate({
        "hostname": row.hostname,
        "state": row.state,
        "serving": row.state == LIVE and binding is not None,
        "binding": binding,
        # live: only routing is left to keep, unless the last check found the ownership record withdrawn
        "dns": records.required(row.hostname, row.token) if row.state != LIVE or WITHDRAWN in (
            row.check_result or "") else [r for r in records.required(row.hostname, row.token)
                                          if r["purpose"] == "routing"],
        "created_at": row.created_at,
        "verified_at": row.verified_at,
        "last_check": LastCheck(at=row.checked_at, result=row.check_result) if row.checked_at else None,
    })


def _row(conn: Connection, org: str, hostname: str) -> Any:
    row = conn.execute(select(t.domains).where(t.domains.c.org_id == org,
                                               t.domains.c.hostname == hostname)).first()
    if row is None:
        raise NotFound(f"domain {hostname} is not claimed by this organization",
                       hint=f"framework domain add {hostname}")
    return row


def _owner(conn: Connection, hostname: str) -> Any:
    return conn.execute(select(t.owners).where(t.owners.c.hostname == hostname)).first()


def add(engine: Engine, org: str, hostname: str) -> Domain:
    """Claim `hostname` for the organization (again: the existing claim, unchanged)."""
    name = records.normalize(hostname)
    with store.write(engine) as conn:
        existing = conn.execute(select(t.domains).where(t.domains.c.org_id == org,
                                                        t.domains.c.hostname == name)).first()
        if existing is None:
            owner = _owner(conn, name)
            conn.execute(insert(t.domains).values(
                id=f"dom_{uuid.uuid4().hex[:16]}", org_id=org, hostname=name, token=secrets.token_hex(16),
                state=CONFLICT if owner is not None else PENDING, created_at=store.now_us()))
        return _doc(_row(conn, org, name))


def show(engine: Engine, org: str, hostname: str) -> Domain:
    with store.read(engine) as conn:
        return _doc(_row(conn, org, records.normalize(hostname)))


def list_domains(engine: Engine, org: str) -> list[Domain]:
    with store.read(engine) as conn:
        rows = conn.execute(select(t.domains).where(t.domains.c.org_id == org).order_by(t.domains.c.hostname))
        return [_doc(r) for r in rows]


def verify(engine: Engine, org: str, hostname: str, resolver: tuple[str, int] | None) -> Domain:
    """Check DNS now, in every state, and record the outcome: not yet verified is an answer (the claim
    stays pending); on a live domain a withdrawn record is reported as its last verification (the
    state stays: only `rm` moves a live domain out)."""
    name = records.normalize(hostname)
    with store.read(engine) as conn:
        row = _row(conn, org, name)
    found = dnscheck.check(name, row.token, resolver)  # outside any transaction: the network is slow
    return record_check(engine, org, name, found)


def record_check(engine: Engine, org: str, name: str, found: dnscheck.Check) -> Domain:
    now = store.now_us()
    with store.write(engine) as conn:
        row = _row(conn, org, name)
        values: dict[str, Any] = {"checked_at": now, "check_result": found.result}
        if row.state == LIVE and not found.verified:  # the spec moves a live domain out only by `rm`
            values["check_result"] = (f"{found.result}: {WITHDRAWN}; "
                                      "the domain stays live and keeps serving (only domain rm frees it)")
        if row.state != LIVE and found.verified:
            conn.execute(store.insert_ignore(conn, t.owners).values(hostname=name, org_id=org, domain_id=row.id,
                                                                     since=now))
            owner = _owner(conn, name)
            if owner.org_id == org:
                values.update(state=LIVE, verified_at=now)
                conn.execute(update(t.domains).where(t.domains.c.hostname == name, t.domains.c.org_id != org)
                             .values(state=CONFLICT))
            else:
                values.update(state=CONFLICT, check_result=found.result + "; another organization proved "
                              "ownership first")
        conn.execute(update(t.domains).where(t.domains.c.id == row.id).values(**values))
        return _doc(_row(conn, org, name))


def bind(engine: Engine, org: str, hostname: str, *, env: str | None, target: str | None,
         redirect_to: str | None) -> Domain:
    """Replace any binding: one environment + one target, or a redirect (allowed in any state)."""
    name = records.normalize(hostname)
    if bool(target) == bool(redirect_to):
        raise InvalidInput("a binding is either --target <workload or frontend> or --redirect-to <hostname>")
    if target and not env:
        raise InvalidInput("--target needs the environment it runs in (--env <env>)")
    redirect = records.normalize(redirect_to) if redirect_to else None
    if redirect == name:
        raise InvalidInput(f"{name} cannot redirect to itself")
    with store.write(engine) as conn:
        row = _row(conn, org, name)
        conn.execute(update(t.domains).where(t.domains.c.id == row.id).values(
            env=env if target else None, target=target, redirect_to=redirect))
        return _doc(_row(conn, org, name))


def unbind(engine: Engine, org: str, hostname: str) -> Domain:
    """Remove the binding; the domain and its verification stay."""
    name = records.normalize(hostname)
    with store.write(engine) as conn:
        row = _row(conn, org, name)
        conn.execute(update(t.domains).where(t.domains.c.id == row.id).values(env=None, target=None,
                                                                                 redirect_to=None))
        return _doc(_row(conn, org, name))


def remove(engine: Engine, org: str, hostname: str) -> DomainRemoved:
    """Drop the claim and its binding; when this organization owned the name it is freed for others."""
    name = records.normalize(hostname)
    with store.write(engine) as conn:
        row = _row(conn, org, name)
        conn.execute(delete(t.domains).where(t.domains.c.id == row.id))
        freed = conn.execute(delete(t.owners).where(t.owners.c.hostname == name, t.owners.c.org_id == org)).rowcount
        if freed:
            conn.execute(update(t.domains).where(t.domains.c.hostname == name, t.domains.c.state == CONFLICT)
                         .values(state=PENDING))
    return DomainRemoved(hostname=name, freed=bool(freed))


def pending(engine: Engine) -> list[tuple[str, str, str]]:
    """(org, hostname, token) of every claim waiting on DNS: what the poller checks."""
    with store.read(engine) as conn:
        rows = conn.execute(select(t.domains.c.org_id, t.domains.c.hostname, t.domains.c.token)
                            .where(t.domains.c.state == PENDING))
        return [(r.org_id, r.hostname, r.token) for r in rows]


def live(engine: Engine) -> list[tuple[str, str, str]]:
    """(org, hostname, token) of every live domain: what the poller re-verifies and renews."""
    with store.read(engine) as conn:
        rows = conn.execute(select(t.domains.c.org_id, t.domains.c.hostname, t.domains.c.token)
                            .where(t.domains.c.state == LIVE))
        return [(r.org_id, r.hostname, r.token) for r in rows]


def live_binding(engine: Engine, hostname: str) -> LiveBinding | None:
    """The serving gateway's lookup: the owning organization's binding of a live hostname, else None."""
    with store.read(engine) as conn:
        row = conn.execute(select(t.domains).join(t.owners, t.owners.c.domain_id == t.domains.c.id)
                           .where(t.owners.c.hostname == hostname, t.domains.c.state == LIVE)).first()
    if row is None or not (row.target or row.redirect_to):
        return None
    return LiveBinding(org_id=row.org_id, env=row.env, target=row.target, redirect_to=row.redirect_to)


def is_live(engine: Engine, hostname: str) -> bool:
    """Whether some organization has proven ownership of `hostname` (its certificate may be issued)."""
    with store.read(engine) as conn:
        return _owner(conn, hostname) is not None
