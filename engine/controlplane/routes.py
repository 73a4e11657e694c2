"""The control-plane HTTP interface, versioned under /v1
(docs/reference-hosted.md#the-http-interface-v1-json-bearer-tokens;
the paths follow the field: JSON, bearer tokens, one scope per verb).

| path | scope |
|---|---|
| GET  /v1/releases, /v1/releases/{version}, /v1/releases/{version}/where | deploy:read |
| POST /v1/blobs/missing, PUT /v1/blobs/{digest}, POST /v1/releases | deploy:write |
| GET  /v1/status?env=a&env=b (many environments, one round trip), /v1/envs/{env}/ledger | deploy:read |
| POST /v1/envs/{env}/promotions (compare-and-set on current.promotion_id) | deploy:promote |
| POST /v1/envs/{env}/gates (gate recording: deliberately weaker than promote) | deploy:write |
| POST /v1/envs/{env}/stop, /v1/envs/{env}/start, DELETE /v1/envs/{env} | deploy:promote |
| GET /v1/clusters | deploy:read |
| POST /v1/clusters/{name}, GET .../kubeconfig, POST .../revoke, DELETE /v1/clusters/{name} | deploy:promote |

The organization is always the credential's: no request carries an organization field, and every
read and write filters on it, so one organization never sees another's releases or environments.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from engine.auth.routes import insufficient_scope, issuer, principal_of, unauthorized
from engine.auth.tokens import Principal
from engine.controlplane import ledger, releases, state
from engine.errors import EngineError, NotFound
from engine.promotions.rules import Gate

Handler = Callable[[Request, Principal, Any], Any]
_STATUS = {"not_found": 404, "conflict": 409, "promotion_conflict": 409, "forbidden": 403, "usage": 400,
           "not_entitled": 402}


def _ctx(request: Request) -> Any:
    return request.app.state.controlplane


def endpoint(scope: str, handler: Handler, raw: bool = False) -> Callable[[Request], Awaitable[Response]]:
    async def serve(request: Request) -> Response:
        principal = await principal_of(request)
        if principal is None:
            return unauthorized()
        if principal.org_id is None:
            return JSONResponse({"error": {"code": "forbidden", "message": "control-plane calls need an "
                                           "organization's credential (a login or an organization token)"}}, 403)
        if not principal.has(scope):
            return insufficient_scope(scope)
        body: Any = {}
        if raw:
            body = await request.body()
        elif request.method == "POST":
            try:
                body = json.loads(await request.body() or b"{}")
            except ValueError:
                return JSONResponse({"error": {"code": "usage", "message": "request body is not JSON"}}, 400)
            if not isinstance(body, dict):
                body = {}
        try:
            result = await run_in_threadpool(handler, request, principal, body)
        except EngineError as exc:
            return JSONResponse({"error": exc.to_dict(), "exit_code": exc.exit_code},
                                status_code=_STATUS.get(exc.code, 400))
        return JSONResponse(result, headers={"Cache-Control": "no-store"})

    return serve


def _actor(p: Principal) -> str:
    return f"{p.kind}:{p.name or p.user_id or p.token_id}"


def _org(p: Principal) -> str:
    assert p.org_id is not None
    return p.org_id


# -- releases ----------------------------------------------------------------------------------


def list_releases(r: Request, p: Principal, doc: Any) -> Any:
    return {"releases": releases.list_releases(_ctx(r).engine, _org(p))}


def get_release(r: Request, p: Principal, doc: Any) -> Any:
    found = releases.get_release(_ctx(r).engine, _org(p), r.path_params["version"])
    if found is None:
        raise NotFound(f"release {r.path_params['version']!r} is not on the control plane")
    return found


def release_where(r: Request, p: Principal, doc: Any) -> Any:
    version = r.path_params["version"]
    bound = ledger.bound_envs(_ctx(r).engine, _org(p), version)
    exists = releases.get_release(_ctx(r).engine, _org(p), version) is not None
    return {"version": version, "exists": exists, "bound": [b.model_dump(mode="json") for b in bound]}


def missing(r: Request, p: Principal, doc: Any) -> Any:
    return {"missing": releases.missing_blobs(_ctx(r).engine, _org(p), list(doc.get("digests") or []))}


def put_blob(r: Request, p: Principal, body: Any) -> Any:
    return releases.put_blob(_ctx(r).engine, _org(p), r.path_params["digest"], bytes(body))


def put_release(r: Request, p: Principal, doc: Any) -> Any:
    return releases.put_release(_ctx(r).engine, _org(p), dict(doc.get("release") or {}))


# -- environments ------------------------------------------------------------------------------


def status(r: Request, p: Principal, doc: Any) -> Any:
    names = r.query_params.getlist("env")
    ctx = _ctx(r)
    return {"environments": state.statuses(ctx.engine, _org(p), names, issuer(r), ctx.root)}


def env_ledger(r: Request, p: Principal, doc: Any) -> Any:
    from engine.serverstore import store

    ctx, name = _ctx(r), r.path_params["env"]
    limit = min(int(r.query_params.get("limit") or 20), 200)
    before = r.query_params.get("before")
    with store.read(ctx.engine) as conn:
        env = ledger.find_env(conn, _org(p), name)
        current = ledger.current_of(conn, env) if env else None
        applies = ledger.applies_of(conn, env.id, limit=limit) if env else []
    history = ledger.history(ctx.engine, _org(p), name, limit, int(before) if before else None)
    return {"env": name, "exists": env is not None, "current_id": current.id if current else None,
            "current": current.model_dump(mode="json") if current else None,
            "promotions": [h.model_dump(mode="json") for h in history], "applies": applies}


def promote(r: Request, p: Principal, doc: Any) -> Any:
    if not doc.get("release"):
        raise EngineError("a promotion names its release", code="usage")
    ctx, name = _ctx(r), r.path_params["env"]
    if releases.get_release(ctx.engine, _org(p), str(doc["release"])) is None:
        raise NotFound(f"release {doc['release']!r} is not on the control plane; upload it first")
    promotion = ledger.promote(ctx.engine, _org(p), name, doc, _actor(p))
    status = state.statuses(ctx.engine, _org(p), [name], issuer(r), ctx.root)[0]
    return {"promotion": promotion.model_dump(mode="json"), "queued": status["queued"]}


def record_gates(r: Request, p: Principal, doc: Any) -> Any:
    gates = [Gate.model_validate(g) for g in doc.get("gates") or []]
    added = ledger.record_gates(_ctx(r).engine, _org(p), r.path_params["env"], str(doc.get("promotion_id") or ""),
                                gates)
    return {"added": added}


def stop(r: Request, p: Principal, doc: Any) -> Any:
    ctx = _ctx(r)
    return state.stop(ctx.engine, _org(p), r.path_params["env"], list(doc.get("targets") or []), ctx.root)


def start(r: Request, p: Principal, doc: Any) -> Any:
    return state.start(_ctx(r).engine, _org(p), r.path_params["env"], list(doc.get("targets") or []), issuer(r))


def delete(r: Request, p: Principal, doc: Any) -> Any:
    ctx = _ctx(r)
    return state.delete_env(ctx.engine, _org(p), r.path_params["env"], ctx.root)


def _clusters() -> Any:
    from engine.controlplane import clusters

    return clusters


def put_cluster(r: Request, p: Principal, doc: Any) -> Any:
    return _clusters().put_cluster(_ctx(r).engine, _org(p), r.path_params["name"], doc)


def list_clusters(r: Request, p: Principal, doc: Any) -> Any:
    return _clusters().list_clusters(_ctx(r).engine, _org(p))


def cluster_kubeconfig(r: Request, p: Principal, doc: Any) -> Any:
    return _clusters().kubeconfig(_ctx(r).engine, _org(p), r.path_params["name"])


def revoke_cluster(r: Request, p: Principal, doc: Any) -> Any:
    return _clusters().revoke(_ctx(r).engine, _org(p), r.path_params["name"])


def delete_cluster(r: Request, p: Principal, doc: Any) -> Any:
    return _clusters().delete_cluster(_ctx(r).engine, _org(p), r.path_params["name"])


async def billing_page(request: Request) -> Response:
    """The action URL a queued deploy names: what a person does to let it go live."""
    from html import escape

    org = escape(request.path_params["org"])
    return HTMLResponse(f"<!doctype html><title>Billing</title><h1>Billing for {org}</h1><p>Hosted deploys of "
                        f"{org} wait until billing is enabled. An administrator enables it with "
                        f"<code>platform server org billing {org} --enable</code>; queued deploys then go live "
                        "by themselves.</p>", headers={"Cache-Control": "no-store"})


def controlplane_routes() -> list[Route]:
    return [
        Route("/v1/releases", endpoint("deploy:read", list_releases), methods=["GET"]),
        Route("/v1/releases", endpoint("deploy:write", put_release), methods=["POST"]),
        Route("/v1/releases/{version}", endpoint("deploy:read", get_release), methods=["GET"]),
        Route("/v1/releases/{version}/where", endpoint("deploy:read", release_where), methods=["GET"]),
        Route("/v1/blobs/missing", endpoint("deploy:write", missing), methods=["POST"]),
        Route("/v1/blobs/{digest}", endpoint("deploy:write", put_blob, raw=True), methods=["PUT"]),
        Route("/v1/status", endpoint("deploy:read", status), methods=["GET"]),
        Route("/v1/envs/{env}/ledger", endpoint("deploy:read", env_ledger), methods=["GET"]),
        Route("/v1/envs/{env}/promotions", endpoint("deploy:promote", promote), methods=["POST"]),
        Route("/v1/envs/{env}/gates", endpoint("deploy:write", record_gates), methods=["POST"]),
        Route("/v1/envs/{env}/stop", endpoint("deploy:promote", stop), methods=["POST"]),
        Route("/v1/envs/{env}/start", endpoint("deploy:promote", start), methods=["POST"]),
        Route("/v1/envs/{env}", endpoint("deploy:promote", delete), methods=["DELETE"]),
        # connected clusters (docs/reference-cluster.md#cluster-connect-and-disconnect)
        Route("/v1/clusters", endpoint("deploy:read", list_clusters), methods=["GET"]),
        Route("/v1/clusters/{name}", endpoint("deploy:promote", put_cluster), methods=["POST"]),
        Route("/v1/clusters/{name}/kubeconfig", endpoint("deploy:promote", cluster_kubeconfig), methods=["GET"]),
        Route("/v1/clusters/{name}/revoke", endpoint("deploy:promote", revoke_cluster), methods=["POST"]),
        Route("/v1/clusters/{name}", endpoint("deploy:promote", delete_cluster), methods=["DELETE"]),
        Route("/billing/{org}", billing_page, methods=["GET"]),
    ]
