"""The application of `platform server`: the webhook front door (engine.server.hooks_asgi)
ahead of a Starlette app serving the admin API and /health."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy.engine import Engine
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from engine.auth.oauth import AuthorizationServer
from engine.auth.routes import auth_routes, insufficient_scope, principal_of, unauthorized
from engine.auth.tokens import Verifier
from engine.controlplane.serve import ControlPlane, controlplane_routes
from engine.domains.serve import Domains, domain_routes
from engine.errors import EngineError, NotFound
from engine.hooks import automations as svc
from engine.hooks.models import TriggerDefinition
from engine.hooks.secrets import SecretBox
from engine.server.gateway.routes import daemon_routes
from engine.server.hooks_asgi import HookFrontDoor
from engine.server.recorder import RecorderClient
from engine.server.runner import RunnerClient


@dataclass
class ServerState:
    engine: Engine
    box: SecretBox
    data_dir: Path
    committer: RecorderClient
    workers: RunnerClient
    gateway: Any = None  # engine.server.gateway.service.Gateway (the daemon gateway), when serving


# --- admin API (the CLI reaches it with PLATFORM_SERVER_URL and PLATFORM_TOKEN) ---------------


def _base_url(request: Request) -> str:
    return os.environ.get("PLATFORM_PUBLIC_URL") or str(request.base_url).rstrip("/")


def _error(exc: EngineError) -> JSONResponse:
    status = {"not_found": 404, "conflict": 409}.get(exc.code, 400)
    return JSONResponse({"error": exc.to_dict(), "exit_code": exc.exit_code}, status_code=status)


def api(handler: Any) -> Any:
    async def endpoint(request: Request) -> Response:
        state: ServerState = request.app.state.server
        principal = await principal_of(request)  # the one verifier (admin token, logins, API tokens)
        if principal is None or not principal.has("platform:api"):
            return unauthorized() if principal is None else insufficient_scope("platform:api")
        try:
            doc = await request.json() if request.method == "POST" else {}
        except ValueError:
            return JSONResponse({"error": {"code": "usage", "message": "request body is not JSON"}}, 400)
        try:
            result = await run_in_threadpool(handler, state, request, doc if isinstance(doc, dict) else {})
        except EngineError as exc:
            return _error(exc)
        return JSONResponse(result.model_dump(mode="json"))

    return endpoint


def _create_automation(s: ServerState, r: Request, doc: dict[str, Any]) -> Any:
    return svc.create_automation(s.engine, str(doc.get("name", "")), str(doc.get("workflow", "")))


def _list(s: ServerState, r: Request, doc: dict[str, Any]) -> Any:
    return svc.list_automations(s.engine, _base_url(r))


def _add_trigger(s: ServerState, r: Request, doc: dict[str, Any]) -> Any:
    from pydantic import ValidationError

    try:
        definition = TriggerDefinition.model_validate(doc.get("definition") or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise EngineError(
            f"invalid trigger definition: {where}: {first['msg']}", code="usage", exit_code=2
        ) from None
    return svc.add_trigger(s.engine, r.path_params["automation"], definition, _base_url(r))


def _activate(s: ServerState, r: Request, doc: dict[str, Any]) -> Any:
    secret = doc.get("hmac_secret")
    return svc.activate(
        s.engine,
        s.box,
        r.path_params["automation"],
        r.path_params["trigger"],
        str(secret) if secret else None,
        _base_url(r),
        rotate=r.path_params["verb"] == "rotate",
    )


def _enable(s: ServerState, r: Request, doc: dict[str, Any]) -> Any:
    return svc.set_enabled(
        s.engine,
        r.path_params["automation"],
        r.path_params["trigger"],
        r.path_params["verb"] == "enable",
        _base_url(r),
    )


def _history(s: ServerState, r: Request, doc: dict[str, Any]) -> Any:
    try:
        limit = int(r.query_params.get("limit", "50"))
    except ValueError:
        limit = 50
    return svc.history(
        s.engine,
        r.path_params["automation"],
        r.query_params.get("trigger") or None,
        limit,
        r.query_params.get("before") or None,
    )


def _stats(s: ServerState, r: Request, doc: dict[str, Any]) -> Any:
    from engine.hooks.stats import trigger_stats

    raw = r.query_params.get("minutes", "60")
    if not raw.isdigit():
        raise EngineError(f"minutes must be a whole number, not {raw[:40]!r}", code="usage", exit_code=2)
    return trigger_stats(s.engine, r.path_params["automation"], r.path_params["trigger"], int(raw))


def _replay(s: ServerState, r: Request, doc: dict[str, Any]) -> Any:
    delivery = svc.replay(s.engine, r.path_params["automation"], r.path_params["delivery"])
    s.workers.wake()
    return delivery


async def health(request: Request) -> Response:
    from engine import __version__

    return JSONResponse({"service": "platform-server", "version": __version__, "ready": True})


def build_app(state: ServerState) -> Any:
    controlplane = ControlPlane.create(state.engine, state.data_dir)
    domains = Domains.create(state.engine, state.data_dir)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await state.committer.start()
        if state.gateway is not None:
            await state.gateway.start()
        state.workers.start()
        supervisor = asyncio.ensure_future(state.workers.supervise())
        controlplane.converger.start()
        await domains.start()
        try:
            yield
        finally:
            await domains.stop()
            controlplane.converger.stop()
            supervisor.cancel()
            if state.gateway is not None:
                await state.gateway.stop()
            await state.committer.stop()
            state.workers.stop()

    routes = [
        Route("/health", health, methods=["GET"]),
        Route("/api/automations", api(_list), methods=["GET"]),
        Route("/api/automations", api(_create_automation), methods=["POST"]),
        Route("/api/automations/{automation}/triggers", api(_add_trigger), methods=["POST"]),
        Route(
            "/api/automations/{automation}/triggers/{trigger}/{verb:str}",
            api(_dispatch_verb),
            methods=["POST"],
        ),
        Route("/api/automations/{automation}/history", api(_history), methods=["GET"]),
        Route("/api/automations/{automation}/triggers/{trigger}/stats", api(_stats), methods=["GET"]),
        Route(
            "/api/automations/{automation}/deliveries/{delivery}/replay", api(_replay), methods=["POST"]
        ),
        *auth_routes(),
        *daemon_routes(),
        *controlplane_routes(),
        *domain_routes(),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.server = state
    app.state.gateway = state.gateway
    app.state.verifier = Verifier(state.engine)
    app.state.authorization_server = AuthorizationServer(state.engine)
    controlplane.mount(app)
    domains.mount(app)
    return HookFrontDoor(app, state.committer)


def _dispatch_verb(s: ServerState, r: Request, doc: dict[str, Any]) -> Any:
    verb = r.path_params["verb"]
    if verb in ("activate", "rotate"):
        return _activate(s, r, doc)
    if verb in ("enable", "disable"):
        return _enable(s, r, doc)
    raise NotFound(f"unknown trigger action {verb!r}")
