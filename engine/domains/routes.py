"""The domain endpoints of the control plane, under /v1 like its others (engine.controlplane.routes:
JSON, bearer tokens, the organization is the credential's).

| path | scope |
|---|---|
| GET /v1/domains, GET /v1/domains/{hostname} | domain:read |
| POST /v1/domains `{"hostname"}` (claim), POST /v1/domains/{hostname}/verify | domain:write |
| POST /v1/domains/{hostname}/binding `{"env", "target"}` or `{"redirect_to"}`, DELETE .../binding | domain:write |
| DELETE /v1/domains/{hostname} | domain:write |
| GET /v1/gateway (the serving gateway's external address: `http`, `https`) | deploy:read |
| GET /gateway/ca.pem (the gateway's CA certificate, for clients to trust) | none |
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from engine.auth.tokens import Principal
from engine.controlplane.routes import endpoint
from engine.domains import service


def _engine(r: Request) -> Any:
    return r.app.state.domains.engine


def _org(p: Principal) -> str:
    assert p.org_id is not None
    return p.org_id


def _ls(r: Request, p: Principal, doc: Any) -> Any:
    return {"domains": [d.model_dump(mode="json") for d in service.list_domains(_engine(r), _org(p))]}


def _show(r: Request, p: Principal, doc: Any) -> Any:
    return service.show(_engine(r), _org(p), r.path_params["hostname"]).model_dump(mode="json")


def _add(r: Request, p: Principal, doc: Any) -> Any:
    return service.add(_engine(r), _org(p), str(doc.get("hostname") or "")).model_dump(mode="json")


def _verify(r: Request, p: Principal, doc: Any) -> Any:
    domains = r.app.state.domains
    was_live = service.show(_engine(r), _org(p), r.path_params["hostname"]).state == service.LIVE
    result = service.verify(_engine(r), _org(p), r.path_params["hostname"], domains.resolver)
    if result.state == service.LIVE and not was_live:
        domains.went_live(result.hostname)
    return result.model_dump(mode="json")


def _bind(r: Request, p: Principal, doc: Any) -> Any:
    return service.bind(_engine(r), _org(p), r.path_params["hostname"], env=doc.get("env") or None,
                        target=doc.get("target") or None,
                        redirect_to=doc.get("redirect_to") or None).model_dump(mode="json")


def _unbind(r: Request, p: Principal, doc: Any) -> Any:
    return service.unbind(_engine(r), _org(p), r.path_params["hostname"]).model_dump(mode="json")


def _rm(r: Request, p: Principal, doc: Any) -> Any:
    return service.remove(_engine(r), _org(p), r.path_params["hostname"]).model_dump(mode="json")


def _gateway(r: Request, p: Principal, doc: Any) -> Any:
    """The serving gateway's external address (what `framework env smoke` probes through)."""
    gateway = r.app.state.domains.gateway
    bound = gateway.bound if gateway is not None else {}
    host = gateway.host if gateway is not None else ""
    return {scheme: (f"{scheme}://{host}:{bound[scheme]}" if scheme in bound else None) for scheme in ("http", "https")}


async def ca_certificate(request: Request) -> Response:
    """The gateway CA certificate, for clients to trust (public: it is a certificate, not a key)."""
    return Response(request.app.state.domains.issuer.ca_pem(), media_type="application/x-pem-file")


def domain_routes() -> list[Route]:
    return [
        Route("/gateway/ca.pem", ca_certificate, methods=["GET"]),
        Route("/v1/gateway", endpoint("deploy:read", _gateway), methods=["GET"]),
        Route("/v1/domains", endpoint("domain:read", _ls), methods=["GET"]),
        Route("/v1/domains", endpoint("domain:write", _add), methods=["POST"]),
        Route("/v1/domains/{hostname}", endpoint("domain:read", _show), methods=["GET"]),
        Route("/v1/domains/{hostname}", endpoint("domain:write", _rm), methods=["DELETE"]),
        Route("/v1/domains/{hostname}/verify", endpoint("domain:write", _verify), methods=["POST"]),
        Route("/v1/domains/{hostname}/binding", endpoint("domain:write", _bind), methods=["POST"]),
        Route("/v1/domains/{hostname}/binding", endpoint("domain:write", _unbind), methods=["DELETE"]),
    ]
