"""Connected clusters on the control plane (docs/reference-cluster.md#cluster-connect-and-disconnect).

`framework cluster connect` records a cluster here with the token of the deploy service account it
created; the token stays on the control plane (a deploy that needs it fetches a kubeconfig with a
deploy:promote credential) and is never returned by the list. Disconnect asks the control plane to
revoke the credential first: it deletes the service account with the service account's own token
(bound tokens of a deleted account are refused at once by the API server), empties the stored
token, and only then does the caller delete what connect created and the record.
"""

from __future__ import annotations

import ssl
from typing import Any

from sqlalchemy import delete, insert, select, update
from sqlalchemy.engine import Engine

from engine.controlplane import tables as t
from engine.errors import Conflict, EngineError, InvalidInput, NotFound
from engine.serverstore import store

FIELDS = ("context", "server", "ca", "insecure", "auth", "namespace", "service_account")


def _public(row: Any) -> dict[str, Any]:
    doc = {k: getattr(row, k) for k in ("name", *FIELDS, "created_at", "updated_at", "revoked_at")}
    doc["credential"] = "revoked" if row.revoked_at else ("stored" if row.token else "none")
    return doc


def _row(conn: Any, org_id: str, name: str) -> Any:
    row = conn.execute(select(t.clusters).where(t.clusters.c.org_id == org_id, t.clusters.c.name == name)).first()
    if row is None:
        raise NotFound(f"no connected cluster {name!r} in your organization", hint="framework cluster connect <name>")
    return row


def put_cluster(engine: Engine, org_id: str, name: str, doc: dict[str, Any]) -> dict[str, Any]:
    """Record (or update: re-running connect) a cluster and its deploy credential."""
    token = str(doc.get("token") or "")
    if not token or not str(doc.get("server") or "").startswith("https://"):
        raise InvalidInput("a connected cluster needs an https server and a token")
    values = {k: doc.get(k) for k in FIELDS}
    values["insecure"] = bool(values["insecure"])
    now = store.now_us()
    with store.write(engine) as conn:
        found = conn.execute(select(t.clusters.c.created_at).where(
            t.clusters.c.org_id == org_id, t.clusters.c.name == name)).first()
        if found is None:
            conn.execute(insert(t.clusters).values(org_id=org_id, name=name, token=token, created_at=now,
                                                   updated_at=now, **values))
        else:
            conn.execute(update(t.clusters).where(t.clusters.c.org_id == org_id, t.clusters.c.name == name)
                         .values(token=token, updated_at=now, revoked_at=None, **values))
        row = _row(conn, org_id, name)
    return {"cluster": _public(row), "updated": found is not None}


def list_clusters(engine: Engine, org_id: str) -> dict[str, Any]:
    with store.read(engine) as conn:
        rows = conn.execute(select(t.clusters).where(t.clusters.c.org_id == org_id).order_by(t.clusters.c.name)).all()
    return {"clusters": [_public(r) for r in rows]}


def kubeconfig(engine: Engine, org_id: str, name: str) -> dict[str, Any]:
    """The kubeconfig a deploy uses (context named as connected); refused once the credential is revoked."""
    with store.read(engine) as conn:
        row = _row(conn, org_id, name)
    if row.revoked_at or not row.token:
        raise Conflict(f"the credential of cluster {name!r} was revoked", hint=f"framework cluster connect {name}")
    cluster: dict[str, Any] = {"server": row.server}
    if row.insecure:
        cluster["insecure-skip-tls-verify"] = True
    elif row.ca:
        import base64

        cluster["certificate-authority-data"] = base64.b64encode(row.ca.encode()).decode()
    return {"apiVersion": "v1", "kind": "Config", "clusters": [{"name": name, "cluster": cluster}],
            "users": [{"name": f"framework-{name}", "user": {"token": row.token}}],
            "contexts": [{"name": row.context, "context": {"cluster": name, "user": f"framework-{name}"}}]}


def revoke(engine: Engine, org_id: str, name: str) -> dict[str, Any]:
    """Revoke the stored credential on the cluster itself, then forget it here."""
    import httpx

    with store.read(engine) as conn:
        row = _row(conn, org_id, name)
    if row.token and not row.revoked_at:
        verify: Any = False if row.insecure else (ssl.create_default_context(cadata=row.ca) if row.ca else True)
        url = f"{row.server.rstrip('/')}/api/v1/namespaces/{row.namespace}/serviceaccounts/{row.service_account}"
        try:
            answer = httpx.delete(url, headers={"Authorization": f"Bearer {row.token}"}, verify=verify, timeout=20)
        except httpx.HTTPError as exc:
            raise EngineError(f"cannot reach cluster {name!r} to revoke its credential: {exc}", exit_code=2,
                              code="cluster_unreachable") from exc
        if answer.status_code not in (200, 202, 401, 404):  # 401/404: already refused or gone
            raise EngineError(f"cluster {name!r} refused the revocation: HTTP {answer.status_code} "
                              f"{answer.text[:200]}", code="revoke_failed")
    with store.write(engine) as conn:
        conn.execute(update(t.clusters).where(t.clusters.c.org_id == org_id, t.clusters.c.name == name)
                     .values(token="", revoked_at=store.now_us()))
        row = _row(conn, org_id, name)
    return {"cluster": _public(row)}


def delete_cluster(engine: Engine, org_id: str, name: str) -> dict[str, Any]:
    with store.write(engine) as conn:
        row = _row(conn, org_id, name)
        if row.token and not row.revoked_at:
            raise Conflict(f"cluster {name!r} still holds a credential: revoke it first",
                           hint=f"framework cluster disconnect {name}")
        conn.execute(delete(t.clusters).where(t.clusters.c.org_id == org_id, t.clusters.c.name == name))
    return {"deleted": name}
