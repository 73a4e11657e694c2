"""HTTP routes of the authorization server and the token API, mounted by engine.server.app.

- GET  /.well-known/oauth-authorization-server   RFC 8414 metadata
- GET  /oauth/authorize     sign-in and consent page (sets the CSRF cookie)
- POST /oauth/authorize     the form: CSRF double-submit check, sign-in (argon2), allow or deny
- POST /oauth/token         authorization_code + PKCE S256 -> access token
- /api/auth/...             token create/list/revoke, framework-credential, whoami
- /api/cloud/tokens...      organization automation tokens
"""

from __future__ import annotations

import hmac
import json
import os
import secrets
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs, urlsplit

from authlib.oauth2.rfc6749.errors import OAuth2Error
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from engine.auth import api as token_api
from engine.auth.accounts import find_account
from engine.auth.oauth import AuthorizationServer, Reply, metadata
from engine.auth.oauth import Request as OAuthRequest
from engine.auth.pages import consent_page, error_page
from engine.auth.passwords import verify_password
from engine.auth.tokens import Principal, Verifier
from engine.errors import EngineError

CSRF_COOKIE = "platform_csrf"
_PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",  # no-referrer would make the form's Origin "null"
    # form-action covers the redirect that follows the form: the loopback client is its target.
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; "
    "form-action 'self' http://127.0.0.1:* http://[::1]:*",
}


def issuer(request: Request) -> str:
    return os.environ.get("PLATFORM_PUBLIC_URL") or str(request.base_url).rstrip("/")


def bearer(request: Request) -> str | None:
    authorization = request.headers.get("authorization", "")
    return authorization[7:].strip() or None if authorization[:7].lower() == "bearer " else None


async def principal_of(request: Request) -> Principal | None:
    """The one verifier: cached answers without a thread hop, the database in the threadpool."""
    verifier: Verifier = request.app.state.verifier
    presented = bearer(request)
    hit = verifier.cached(presented)
    if hit is not False:
        return hit  # type: ignore[return-value]
    return await run_in_threadpool(verifier.verify, presented)


def unauthorized() -> JSONResponse:
    return JSONResponse(
        {"error": {"code": "unauthorized", "message": "missing, invalid, expired or revoked API token"}},
        status_code=401, headers={"WWW-Authenticate": "Bearer"},
    )


def insufficient_scope(scope: str) -> JSONResponse:
    """A valid token without the scope (RFC 6750 3.1), e.g. a control-plane token on the admin API."""
    return JSONResponse(
        {"error": {"code": "insufficient_scope", "message": f"this token does not carry {scope}",
                   "hint": "use a login (platform auth login) or an API token"}},
        status_code=403, headers={"WWW-Authenticate": f'Bearer error="insufficient_scope", scope="{scope}"'},
    )


def _reply(reply: Reply, extra: dict[str, str] | None = None) -> Response:
    headers = dict(reply.headers)
    headers.update(extra or {})
    location = headers.pop("Location", None)
    if location:
        return RedirectResponse(location, status_code=302, headers={"Cache-Control": "no-store"})
    return Response(reply.body, status_code=reply.status, headers=headers, media_type="application/json")


def _oauth_request(request: Request, data: dict[str, list[str]]) -> OAuthRequest:
    return OAuthRequest(request.method, str(request.url), dict(request.headers), data)


async def well_known(request: Request) -> Response:
    return JSONResponse(metadata(issuer(request)), headers={"Cache-Control": "no-store"})


def _server(request: Request) -> AuthorizationServer:
    return request.app.state.authorization_server  # type: ignore[no-any-return]


def _validate(request: Request, data: dict[str, list[str]]) -> tuple[Any, OAuthRequest] | Response:
    """The consent grant for an authorization request, or the response that refuses it."""
    try:
        oauth_request = _oauth_request(request, data)  # refuses plain http off loopback (insecure_transport)
        return _server(request).get_consent_grant(oauth_request), oauth_request
    except OAuth2Error as error:
        if error.redirect_uri:  # client and redirect URI were validated: tell the client
            return _reply(_server(request).handle_error_response(oauth_request, error))
        return HTMLResponse(error_page(error.description or error.error), status_code=400, headers=_PAGE_HEADERS)


def _page(request: Request, data: dict[str, list[str]], csrf: str, status: int = 200, error: str | None = None,
          email: str = "") -> Response:
    params = {k: v[0] for k, v in data.items() if v}
    scopes = ["platform:api", "your organization's deploy, secret and domain permissions"]
    response = HTMLResponse(consent_page(params, csrf, issuer(request), scopes, error, email), status_code=status,
                            headers=_PAGE_HEADERS)
    response.set_cookie(CSRF_COOKIE, csrf, httponly=True, samesite="strict", path="/oauth",
                        secure=request.url.scheme == "https")
    return response


async def authorize_page(request: Request) -> Response:
    data = parse_qs(request.url.query, keep_blank_values=False)
    checked = await run_in_threadpool(_validate, request, data)
    if isinstance(checked, Response):
        return checked
    return _page(request, data, request.cookies.get(CSRF_COOKIE) or secrets.token_urlsafe(32))


def _same_origin(request: Request) -> bool:
    origin = request.headers.get("origin")
    if not origin or origin == "null":
        return origin is None
    ours = urlsplit(issuer(request))
    theirs = urlsplit(origin)
    return (theirs.scheme, theirs.netloc) == (ours.scheme, ours.netloc) or (
        theirs.netloc == request.headers.get("host", "")
    )


async def authorize_submit(request: Request) -> Response:
    body = (await request.body()).decode("utf-8", errors="replace")
    form = parse_qs(body, keep_blank_values=True)
    field = {k: v[0] for k, v in form.items() if v}
    cookie = request.cookies.get(CSRF_COOKIE, "")
    sent = field.get("csrf_token", "")
    if not cookie or not hmac.compare_digest(cookie.encode(), sent.encode()) or not _same_origin(request):
        return HTMLResponse(error_page("the sign-in form expired or did not come from this server; start again"),
                            status_code=403, headers=_PAGE_HEADERS)
    data = {k: v for k, v in form.items() if k not in ("csrf_token", "email", "password", "decision")}
    checked = await run_in_threadpool(_validate, request, data)
    if isinstance(checked, Response):
        return checked
    grant, oauth_request = checked
    server = _server(request)
    if field.get("decision") != "allow":
        reply = await run_in_threadpool(server.create_authorization_response, oauth_request, None, grant)
        return _reply(reply)
    email = field.get("email", "")
    account = await run_in_threadpool(find_account, server.engine, email)
    ok = await run_in_threadpool(verify_password, account.password_hash if account else None,
                                 field.get("password", ""))
    if not ok or account is None:
        return _page(request, data, cookie, status=401, error="wrong email or password", email=email)
    reply = await run_in_threadpool(server.create_authorization_response, oauth_request, account, grant)
    return _reply(reply)


async def token(request: Request) -> Response:
    body = (await request.body()).decode("utf-8", errors="replace")
    try:
        oauth_request = _oauth_request(request, parse_qs(body, keep_blank_values=False))
    except OAuth2Error as error:  # plain http off loopback
        return JSONResponse({"error": error.error, "error_description": error.description}, status_code=400)
    reply = await run_in_threadpool(_server(request).create_token_response, oauth_request)
    return _reply(reply, {"Cache-Control": "no-store", "Pragma": "no-cache"})


Handler = Callable[[Request, Principal, dict[str, Any]], Any]


def authed(handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        principal = await principal_of(request)
        if principal is None:
            return unauthorized()
        doc: Any = {}
        if request.method == "POST":
            try:
                doc = json.loads(await request.body() or b"{}")
            except ValueError:
                return JSONResponse({"error": {"code": "usage", "message": "request body is not JSON"}}, 400)
        try:
            result = await run_in_threadpool(handler, request, principal, doc if isinstance(doc, dict) else {})
        except EngineError as exc:
            status = {"not_found": 404, "conflict": 409, "forbidden": 403, "usage": 400}.get(exc.code, 400)
            return JSONResponse({"error": exc.to_dict(), "exit_code": exc.exit_code}, status_code=status)
        return JSONResponse(result.model_dump(mode="json"), headers={"Cache-Control": "no-store"})

    return endpoint


def auth_routes() -> list[Route]:
    return [
        Route("/.well-known/oauth-authorization-server", well_known, methods=["GET"]),
        Route("/oauth/authorize", authorize_page, methods=["GET"]),
        Route("/oauth/authorize", authorize_submit, methods=["POST"]),
        Route("/oauth/token", token, methods=["POST"]),
        Route("/api/auth/whoami", authed(token_api.whoami), methods=["GET"]),
        Route("/api/auth/tokens", authed(token_api.create_api_token), methods=["POST"]),
        Route("/api/auth/tokens", authed(token_api.list_api_tokens), methods=["GET"]),
        Route("/api/auth/tokens/{ref}/revoke", authed(token_api.revoke_api_token), methods=["POST"]),
        Route("/api/auth/framework-credential", authed(token_api.framework_credential), methods=["POST"]),
        Route("/api/cloud/tokens", authed(token_api.create_automation_token), methods=["POST"]),
        Route("/api/cloud/tokens", authed(token_api.list_automation_tokens), methods=["GET"]),
        Route("/api/cloud/tokens/{ref}/revoke", authed(token_api.revoke_automation_token), methods=["POST"]),
    ]
