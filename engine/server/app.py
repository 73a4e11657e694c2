"""The Starlette application of `platform server`: webhook ingestion and the admin API.

Ingestion answers (spec 1 Errors): 202 accepted (run starts asynchronously); one identical 404
for unknown trigger, wrong token and bad signature; 409 disabled (only after authentication);
413 body over 1 MiB counted on the bytes actually read; 503 when the delivery cannot be recorded.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from engine.db import store
from engine.errors import EngineError
from engine.hooks import automations as svc
from engine.hooks.models import TriggerDefinition
from engine.hooks.secrets import SecretBox, token_matches
from engine.server.ingest import GroupCommitter, Submission
from engine.server.worker import WorkerPool

MAX_BODY = 1024 * 1024  # spec 1 Limits: webhook body 1 MiB max
_TRIGGER_ID = re.compile(r"^trg_[0-9a-f]{16}$")


def not_found() -> Response:
    """The one 404 (status, body, headers) for unknown trigger, wrong token, bad signature."""
    return PlainTextResponse("Not Found", status_code=404)


_ANSWERS = {409: "Conflict: trigger is disabled", 413: "Payload Too Large: the limit is 1 MiB"}


@dataclass
class ServerState:
    engine: Engine
    box: SecretBox
    data_dir: Path
    committer: GroupCommitter
    workers: WorkerPool


async def _read_body(request: Request) -> tuple[bytes, bool]:
    """The body, or (partial, True) once more than 1 MiB has actually been read."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_BODY:
        return b"", True
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            return b"", True
        chunks.append(chunk)
    return b"".join(chunks), False


async def hook(request: Request) -> Response:
    state: ServerState = request.app.state.server
    trigger_id = request.path_params["trigger_id"]
    path_token = request.path_params.get("token")
    body, too_large = await _read_body(request)
    if not _TRIGGER_ID.match(trigger_id):
        return PlainTextResponse(_ANSWERS[413], status_code=413) if too_large else not_found()
    bearer = None
    authorization = request.headers.get("authorization")
    if authorization and authorization[:7].lower() == "bearer ":
        bearer = authorization[7:].strip()
    sub = Submission(trigger_id=trigger_id, path_token=path_token, bearer=bearer, body=body,
                     headers=list(request.headers.items()), query=list(request.query_params.multi_items()),
                     content_type=request.headers.get("content-type", ""), too_large=too_large)
    verdict = await state.committer.submit(sub)
    if verdict.status == 202:
        doc: dict[str, Any] = {"delivery": verdict.delivery_id, "status": "accepted"}
        if verdict.outcome == "retry":
            doc.update(status="retry", duplicate_of=verdict.duplicate_of)
        return JSONResponse(doc, status_code=202)
    if verdict.status == 404:
        return not_found()
    if verdict.status == 503:
        return PlainTextResponse("Service Unavailable: delivery not recorded; retry", status_code=503,
                                 headers={"Retry-After": "5"})
    return PlainTextResponse(_ANSWERS[verdict.status], status_code=verdict.status)


# --- admin API (the CLI reaches it with PLATFORM_SERVER_URL and PLATFORM_TOKEN) ---------------

def _base_url(request: Request) -> str:
    return os.environ.get("PLATFORM_PUBLIC_URL") or str(request.base_url).rstrip("/")


def _admin_ok(engine: Engine, presented: str | None) -> bool:
    with store.read(engine) as conn:
        row = conn.execute(select(store.api_tokens.c.token_hash).where(store.api_tokens.c.name == "admin")).first()
    return token_matches(presented, row[0] if row else None)


def _error(exc: EngineError) -> JSONResponse:
    status = {"not_found": 404, "conflict": 409}.get(exc.code, 400)
    return JSONResponse({"error": exc.to_dict(), "exit_code": exc.exit_code}, status_code=status)


def api(handler: Any) -> Any:
    async def endpoint(request: Request) -> Response:
        state: ServerState = request.app.state.server
        authorization = request.headers.get("authorization", "")
        presented = authorization[7:].strip() if authorization[:7].lower() == "bearer " else None
        if not await run_in_threadpool(_admin_ok, state.engine, presented):
            return JSONResponse({"error": {"code": "unauthorized", "message": "missing or invalid API token"}},
                                status_code=401, headers={"WWW-Authenticate": "Bearer"})
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
        raise EngineError(f"invalid trigger definition: {where}: {first['msg']}", code="usage",
                          exit_code=2) from None
    return svc.add_trigger(s.engine, r.path_params["automation"], definition, _base_url(r))


def _activate(s: ServerState, r: Request, doc: dict[str, Any]) -> Any:
    secret = doc.get("hmac_secret")
    return svc.activate(s.engine, s.box, r.path_params["automation"], r.path_params["trigger"],
                        str(secret) if secret else None, _base_url(r), rotate=r.path_params["verb"] == "rotate")


def _enable(s: ServerState, r: Request, doc: dict[str, Any]) -> Any:
    return svc.set_enabled(s.engine, r.path_params["automation"], r.path_params["trigger"],
                           r.path_params["verb"] == "enable", _base_url(r))


def _history(s: ServerState, r: Request, doc: dict[str, Any]) -> Any:
    try:
        limit = int(r.query_params.get("limit", "50"))
    except ValueError:
        limit = 50
    return svc.history(s.engine, r.path_params["automation"], r.query_params.get("trigger") or None, limit)


async def health(request: Request) -> Response:
    from engine import __version__

    return JSONResponse({"service": "platform-server", "version": __version__, "ready": True})


def build_app(state: ServerState) -> Starlette:
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        state.committer.start()
        state.workers.start()
        try:
            yield
        finally:
            state.committer.stop()
            state.workers.stop()

    routes = [
        Route("/hooks/{trigger_id}", hook, methods=["POST"]),
        Route("/hooks/{trigger_id}/{token}", hook, methods=["POST"]),
        Route("/health", health, methods=["GET"]),
        Route("/api/automations", api(_list), methods=["GET"]),
        Route("/api/automations", api(_create_automation), methods=["POST"]),
        Route("/api/automations/{automation}/triggers", api(_add_trigger), methods=["POST"]),
        Route("/api/automations/{automation}/triggers/{trigger}/{verb:str}",
              api(_dispatch_verb), methods=["POST"]),
        Route("/api/automations/{automation}/history", api(_history), methods=["GET"]),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.server = state
    return app


def _dispatch_verb(s: ServerState, r: Request, doc: dict[str, Any]) -> Any:
    verb = r.path_params["verb"]
    if verb in ("activate", "rotate"):
        return _activate(s, r, doc)
    if verb in ("enable", "disable"):
        return _enable(s, r, doc)
    raise svc.NotFound(f"unknown trigger action {verb!r}")
