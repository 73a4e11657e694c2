"""Calls the CLIs make to the token API (with the credential the precedence rules resolve)."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from engine.auth import credentials
from engine.auth.models import Minted, Revoked, TokenInfo, Tokens, WhoAmI
from engine.errors import EngineError

__all__ = ["Revoked", "TokenInfo", "Tokens", "WhoAmI"]
Secret = Minted  # a token minted for the caller; printed once (the spec's one place)

M = TypeVar("M", bound=BaseModel)


class LogoutResult(BaseModel):
    server: str
    server_source: str
    removed: bool
    credentials_file: str


class TokenList(BaseModel):
    server: str
    tokens: list[TokenInfo]


def answer(response: Any) -> Any:
    """The JSON document of a server answer ({} when it is not JSON)."""
    try:
        return response.json()
    except ValueError:
        return {}


def refusal(response: Any, doc: Any) -> EngineError:
    """The server's error document as an EngineError (message, hint, code, exit code)."""
    err = doc.get("error") if isinstance(doc, dict) else None
    err = err if isinstance(err, dict) else {}
    return EngineError(str(err.get("message") or f"server answered {response.status_code}"),
                       hint=err.get("hint"), code=str(err.get("code") or "server_error"),
                       exit_code=int(doc.get("exit_code") or 1) if isinstance(doc, dict) else 1)


def validated(model: type[M], doc: Any, server: str) -> M:
    """A 200 answer as `model`; an answer of another shape (another service listening at that address)
    is a clear error naming the server (exit 2), not a validation traceback."""
    from pydantic import ValidationError

    try:
        return model.model_validate(doc)
    except ValidationError:
        raise EngineError(f"{server} answered, but not as a platform server does (no {model.__name__} document)",
                          code="unexpected_answer", exit_code=2,
                          hint="another service may listen at that address: point to a platform server "
                               "(--server, PLATFORM_SERVER_URL, or `framework login --endpoint`)") from None


def call(resolved: credentials.Resolved, method: str, path: str, model: type[M],
         body: dict[str, Any] | None = None, program: str = "platform") -> M:
    import httpx

    token = resolved.require(program)
    try:
        response = httpx.request(method, resolved.server + path, json=body, timeout=30,
                                 headers={"Authorization": f"Bearer {token}"})
    except httpx.HTTPError as exc:
        raise EngineError(f"cannot reach {resolved.server}: {exc}", code="server_unreachable", exit_code=2,
                          hint="is the server running?") from None
    doc = answer(response)
    if response.status_code == 401:
        raise EngineError(f"{resolved.server} refused the credential from {resolved.token_source} "
                          "(invalid, expired, revoked, or for another server)", code="unauthorized",
                          exit_code=2 if program == "framework" else 1,
                          hint="sign in again" + (" (platform auth login)" if program == "platform" else ""))
    if response.status_code != 200:
        raise refusal(response, doc)
    return validated(model, doc, resolved.server)


def logout(server_flag: str | None) -> LogoutResult:
    resolved = credentials.resolve_platform(server_flag, read_file=False)
    removed = credentials.remove(resolved.server)
    return LogoutResult(server=resolved.server, server_source=resolved.server_source, removed=removed,
                        credentials_file=str(credentials.credentials_path()))


class Status(BaseModel):
    server: str
    server_source: str
    logged_in: bool
    credential_source: str | None
    user: str | None
    organization: str | None
    expires_at: str | None
    expired: bool
    credentials_file: str
    warnings: list[str] = []


def status(server_flag: str | None) -> Status:
    """The credential that would be used, and where the server came from; no network call."""
    from engine.auth.models import iso

    r = credentials.resolve_platform(server_flag)
    return Status(server=r.server, server_source=r.server_source, logged_in=r.token is not None,
                  credential_source=r.token_source, user=r.user if r.token_source == "credentials" else None,
                  organization=r.organization if r.token_source == "credentials" else None,
                  expires_at=iso(int(r.expires_at * 1e6)) if r.expires_at and r.token_source != "env:PLATFORM_TOKEN"
                  else None,
                  expired=r.expired_login, credentials_file=r.credentials_file, warnings=r.warnings)


def create_token(server_flag: str | None, name: str) -> Secret:
    return call(credentials.resolve_platform(server_flag), "POST", "/api/auth/tokens", Secret, {"name": name})


def list_tokens(server_flag: str | None) -> TokenList:
    resolved = credentials.resolve_platform(server_flag)
    found = call(resolved, "GET", "/api/auth/tokens", Tokens)
    return TokenList(server=resolved.server, tokens=found.tokens)


def revoke_token(server_flag: str | None, ref: str) -> Revoked:
    from urllib.parse import quote

    return call(credentials.resolve_platform(server_flag), "POST", f"/api/auth/tokens/{quote(ref, safe='')}/revoke",
                Revoked)


def framework_credential(server_flag: str | None) -> Secret:
    """Exchange the login (or PLATFORM_TOKEN) for a control-plane token: deploy, secret and domain
    authority only, at most 1 hour."""
    secret = call(credentials.resolve_platform(server_flag), "POST", "/api/auth/framework-credential", Secret, {})
    if secret.expires_in > 3600:
        raise EngineError("the server issued a control-plane token valid for more than 1 hour; refused")
    return secret
