"""`framework env smoke <env>` (docs/reference-domains.md#framework-env-smoke-env): probe every ingress route
the environment declares (workload and frontend `framework.Route`s) and classify each:

- `FAIL`: a TLS transport error (handshake, certificate not valid for the route's host), any other
  transport error, a 5xx, or an API route (path under `/api`) answering without
  `Access-Control-Allow-Origin`;
- `WARN`: a plain 404 text page (`text/plain`): likely a misroute; any other 4xx;
- `PASS`: otherwise.

Where: a hosted environment (or one declaring a control plane) is probed through its control plane's
serving gateway (its external address from `GET /v1/gateway`: HTTPS with SNI = the route's host,
verified against the gateway CA the control plane exports; HTTP when it serves no TLS). A
self-managed (or local) Process environment is probed on its routes' ports on this machine
(http://127.0.0.1:<port><path>, Host = the route's host). Exit 1 when any route FAILs.

`--tag <label>` labels the run (e.g. the release under test); the last run per environment is kept
in `.framework/smoke/<env>.json` (written whole, temp file + rename) for the dashboard.
"""

from __future__ import annotations

import json
import os
import ssl
import time
from typing import Any, Literal

from pydantic import BaseModel

from engine.errors import InvalidInput
from engine.project import Project

Klass = Literal["PASS", "WARN", "FAIL"]


class RouteResult(BaseModel):
    owner: str
    host: str
    path: str
    url: str
    klass: Klass
    status: int | None = None
    reason: str


class SmokeResult(BaseModel):
    env: str
    via: str
    tag: str | None = None
    at: float
    routes: list[RouteResult]
    counts: dict[str, int]


def classify(path: str, status: int | None, headers: dict[str, str], error: BaseException | None
             ) -> tuple[Klass, str]:
    if error is not None:
        if _is_tls(error):
            return "FAIL", f"TLS transport error: {_why(error)}"
        return "FAIL", f"transport error: {_why(error)}"
    assert status is not None
    ctype = headers.get("content-type", "")
    if status >= 500:
        return "FAIL", f"server error {status}"
    if status == 404 and ctype.startswith("text/plain"):
        return "WARN", "plain 404 text page: likely a misroute"
    if status >= 400:
        return "WARN", f"answered {status}"
    if path.startswith("/api") and "access-control-allow-origin" not in headers:
        return "FAIL", "API route without Access-Control-Allow-Origin"
    return "PASS", f"answered {status}"


def _is_tls(error: BaseException) -> bool:
    seen: BaseException | None = error
    while seen is not None:
        if isinstance(seen, ssl.SSLError) or "SSL" in type(seen).__name__ or "CERTIFICATE" in str(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _why(error: BaseException) -> str:
    return str(error) or type(error).__name__


def _routes(spec: Any) -> list[tuple[str, Any, int | None]]:
    """(owner, route, port on this machine) of every declared ingress route."""
    found: list[tuple[str, Any, int | None]] = []
    for w in spec.workloads:
        for r in w.routes:
            port = next((p.port for p in w.ports if r.port in (None, p.name)), None)
            found.append((w.name, r, port))
    for f in spec.frontends:
        found.extend((f.name, r, f.port) for r in f.routes)
    return found


def _probe(verify: Any, url: str, host: str, path: str, sni: bool) -> RouteResult:
    """One request on its own connection: a pooled connection would carry another route's SNI."""
    import httpx

    headers = {"Host": host, "Origin": f"https://{host}"}
    extensions = {"sni_hostname": host} if sni else None
    try:
        with httpx.Client(verify=verify, timeout=10, follow_redirects=False) as client:
            r = client.get(url, headers=headers, extensions=extensions)
    except httpx.HTTPError as exc:
        klass, reason = classify(path, None, {}, exc)
        return RouteResult(owner="", host=host, path=path, url=url, klass=klass, reason=reason)
    lowered = {k.lower(): v for k, v in r.headers.items()}
    klass, reason = classify(path, r.status_code, lowered, None)
    return RouteResult(owner="", host=host, path=path, url=url, klass=klass, status=r.status_code, reason=reason)


def smoke(project: Project, env: str, tag: str | None = None) -> tuple[SmokeResult, int]:
    from engine.environments.evaluate import evaluate_environment

    spec = evaluate_environment(project, env)
    routes = _routes(spec)
    if not routes:
        raise InvalidInput(f"environment {env!r} declares no ingress routes (framework.Route) to probe")
    results: list[RouteResult] = []
    if spec.on_control_plane:
        base, verify, via = _gateway(env, spec)
        for owner, r, _ in routes:
            results.append(_probe(verify, base + r.path, r.host, r.path, base.startswith("https"))
                           .model_copy(update={"owner": owner}))
    else:
        via = "the routes' ports on this machine"
        for owner, r, port in routes:
            if port is None:
                results.append(RouteResult(owner=owner, host=r.host, path=r.path, url="", klass="FAIL",
                                           reason="the route names no port of its workload"))
                continue
            results.append(_probe(True, f"http://127.0.0.1:{port}{r.path}", r.host, r.path, False)
                           .model_copy(update={"owner": owner}))
    counts = {k: sum(1 for r in results if r.klass == k) for k in ("PASS", "WARN", "FAIL")}
    out = SmokeResult(env=env, via=via, tag=tag, at=time.time(), routes=results, counts=counts)
    _record(project, out)
    return out, 1 if counts["FAIL"] else 0


def _gateway(env: str, spec: Any) -> tuple[str, Any, str]:
    """(base URL, TLS verification, description) of the environment's control plane's gateway."""
    from engine.cloud.client import ControlPlaneClient

    client = ControlPlaneClient.for_spec(env, spec)
    try:
        gw = client.request("GET", "/v1/gateway")
        ca = client.http.get("/gateway/ca.pem").text if gw.get("https") else None
    finally:
        client.close()
    if gw.get("https"):
        return gw["https"], ssl.create_default_context(cadata=ca), f"the gateway {gw['https']} (TLS, its CA)"
    if gw.get("http"):
        return gw["http"], True, f"the gateway {gw['http']}"
    raise InvalidInput(f"the control plane {client.endpoint} runs no serving gateway",
                       hint="platform server --gateway-http-port / --gateway-https-port")


def _record(project: Project, result: SmokeResult) -> None:
    folder = project.root / ".framework" / "smoke"
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{result.env}.json.tmp"
    tmp.write_text(json.dumps(result.model_dump(mode="json"), indent=2))
    os.replace(tmp, folder / f"{result.env}.json")


def last_smoke(project: Project, env: str) -> dict[str, Any] | None:
    """The last recorded run for `env` (the dashboard's environment detail)."""
    try:
        return dict(json.loads((project.root / ".framework" / "smoke" / f"{env}.json").read_text()))
    except (OSError, ValueError):
        return None
