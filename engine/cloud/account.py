"""`framework login`, `framework logout` and `framework cloud status|token ...`
(docs/reference-auth.md#framework-login-logout-cloud): the control planes an environment declares
(`framework.ControlPlane`, default: the hosted service) and the credential a control-plane call uses (precedence in
engine.auth.credentials.resolve_control_plane)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from engine.auth import client, credentials
from engine.auth.login import DEFAULT_TIMEOUT_S, LoginResult, authorize, fixed_endpoints, metadata, store_token
from engine.errors import EngineError, UsageError

if TYPE_CHECKING:
    from engine.environments.model import EnvironmentSpec


class ControlPlaneRef(BaseModel):
    endpoint: str
    token_env: str
    declared_by: list[str]  # environments, or [] for --endpoint / the default


def _declaration(spec: EnvironmentSpec) -> tuple[str, str] | None:
    cp = spec.control_plane
    if cp is None:
        return None
    endpoint = cp.endpoint or credentials.DEFAULT_CONTROL_PLANE
    return credentials.normalize(endpoint), cp.token_env or credentials.CONTROL_PLANE_TOKEN_ENV


def declared_control_planes(start: Path | None = None) -> list[ControlPlaneRef]:
    """Every distinct control plane the project's environments declare; the default hosted
    service when none declares one (or outside a project)."""
    from engine.environments.evaluate import declared_names, evaluate_environment
    from engine.errors import ProjectNotFound
    from engine.project import find_project

    found: dict[str, ControlPlaneRef] = {}
    try:
        project = find_project(start)
        names = declared_names(project)
    except ProjectNotFound:
        names = []
    for name in names:
        declared = _declaration(evaluate_environment(project, name))
        if declared is None:
            continue
        ref = found.setdefault(declared[0], ControlPlaneRef(endpoint=declared[0], token_env=declared[1],
                                                            declared_by=[]))
        ref.declared_by.append(name)
    if not found:
        default = credentials.DEFAULT_CONTROL_PLANE
        return [ControlPlaneRef(endpoint=default, token_env=credentials.CONTROL_PLANE_TOKEN_ENV, declared_by=[])]
    return list(found.values())


def environment_control_plane(env: str, start: Path | None = None) -> ControlPlaneRef:
    from engine.environments.evaluate import evaluate_environment
    from engine.project import find_project

    declared = _declaration(evaluate_environment(find_project(start), env))
    if declared is None:
        raise UsageError(f"environment {env!r} declares no framework.ControlPlane",
                         hint="cloud commands need a hosted environment or one with a control plane")
    return ControlPlaneRef(endpoint=declared[0], token_env=declared[1], declared_by=[env])


class FrameworkLogin(BaseModel):
    endpoint: str
    declared_by: list[str]
    credential_source: str
    user: str | None = None
    organization: str | None = None
    scope: str = ""
    expires_at: str | None = None
    stored: bool


class FrameworkLoginResult(BaseModel):
    logins: list[FrameworkLogin]
    credentials_file: str
    warnings: list[str] = []


def _refs(endpoint: str | None, start: Path | None) -> list[ControlPlaneRef]:
    if endpoint:
        return [ControlPlaneRef(endpoint=credentials.normalize(endpoint), token_env=credentials.CONTROL_PLANE_TOKEN_ENV,
                                declared_by=[])]
    return declared_control_planes(start)


def login(endpoint: str | None = None, token: str | None = None, *, start: Path | None = None,
          timeout: float = DEFAULT_TIMEOUT_S, open_url: Callable[[str], None] | None = None) -> FrameworkLoginResult:
    """Interactive: authorization code + PKCE at <endpoint>/oauth/authorize and /oauth/token, one
    browser sign-in per distinct control plane. CI: --token (checked, then stored) or the declared
    token variable (checked, not stored)."""
    import os

    warnings = credentials.load().warnings  # a corrupt file is refused before any browser opens
    done: list[FrameworkLogin] = []
    for ref in _refs(endpoint, start):
        given = token or os.environ.get(ref.token_env)
        if given:
            source = "flag" if token else f"env:{ref.token_env}"
            resolved = credentials.Resolved(server=ref.endpoint, server_source="declared", token=given,
                                            token_source=source, credentials_file="")
            who = client.call(resolved, "GET", "/api/auth/whoami", client.WhoAmI, program="framework")
            if token:
                import time

                from engine.auth.models import parse_iso

                credentials.save(ref.endpoint, credentials.Entry(
                    access_token=token, scope=" ".join(who.scope), user=who.user, organization=who.organization,
                    expires_at=parse_iso(who.expires_at) if who.expires_at else time.time() + 3600,
                    program="framework", created_at=time.time()))
            done.append(FrameworkLogin(endpoint=ref.endpoint, declared_by=ref.declared_by, credential_source=source,
                                       user=who.user, organization=who.organization, scope=" ".join(who.scope),
                                       expires_at=who.expires_at, stored=bool(token)))
            continue
        metadata(ref.endpoint, elsewhere=credentials.CONTROL_PLANE_ELSEWHERE)  # not there: exit 2 before any browser
        doc = authorize(fixed_endpoints(ref.endpoint), "framework-cli", timeout=timeout, open_url=open_url,
                        headless=f"pass a token: framework login --endpoint {ref.endpoint} --token T (or --token - "
                                 f"to read it from stdin), or set ${ref.token_env}")
        result: LoginResult = store_token(ref.endpoint, "declared", doc, "framework")
        warnings += result.warnings
        done.append(FrameworkLogin(endpoint=ref.endpoint, declared_by=ref.declared_by, credential_source="browser",
                                   user=result.user, organization=result.organization, scope=result.scope,
                                   expires_at=result.expires_at, stored=True))
    return FrameworkLoginResult(logins=done, credentials_file=str(credentials.credentials_path()), warnings=warnings)


class FrameworkLogoutResult(BaseModel):
    removed: list[str]
    not_logged_in: list[str]
    credentials_file: str


def logout(endpoint: str | None = None, *, start: Path | None = None) -> FrameworkLogoutResult:
    removed: list[str] = []
    absent: list[str] = []
    for ref in _refs(endpoint, start):
        (removed if credentials.remove(ref.endpoint) else absent).append(ref.endpoint)
    return FrameworkLogoutResult(removed=removed, not_logged_in=absent,
                                 credentials_file=str(credentials.credentials_path()))


class CloudStatus(BaseModel):
    environment: str
    endpoint: str
    token_env: str
    credential_source: str | None
    user: str | None
    organization: str | None
    expired_login: bool
    credentials_file: str
    warnings: list[str] = []


def _resolve(env: str, token: str | None, start: Path | None) -> tuple[ControlPlaneRef, credentials.Resolved]:
    ref = environment_control_plane(env, start)
    resolved = credentials.resolve_control_plane(ref.endpoint, token_flag=token, token_env=ref.token_env,
                                                 declared=True)
    return ref, resolved


def cloud_status(env: str, token: str | None = None, *, start: Path | None = None) -> CloudStatus:
    """Endpoint and credential source; no network call."""
    ref, r = _resolve(env, token, start)
    stored = r.token_source == "credentials"
    return CloudStatus(environment=env, endpoint=ref.endpoint, token_env=ref.token_env,
                       credential_source=r.token_source, user=r.user if stored else None,
                       organization=r.organization if stored else None, expired_login=r.expired_login,
                       credentials_file=r.credentials_file, warnings=r.warnings)


def create_token(env: str, name: str, scopes: str, token: str | None = None, *,
                 start: Path | None = None) -> client.Secret:
    _, resolved = _resolve(env, token, start)
    wanted = [s.strip() for s in scopes.split(",") if s.strip()]
    if not wanted:
        raise UsageError("--scopes needs at least one scope, e.g. deploy:read,deploy:write")
    return client.call(resolved, "POST", "/api/cloud/tokens", client.Secret, {"name": name, "scopes": wanted},
                       program="framework")


def list_tokens(env: str, token: str | None = None, *, start: Path | None = None) -> client.TokenList:
    _, resolved = _resolve(env, token, start)
    found = client.call(resolved, "GET", "/api/cloud/tokens", client.Tokens, program="framework")
    return client.TokenList(server=resolved.server, tokens=found.tokens)


def revoke_token(env: str, ref: str, token: str | None = None, *, start: Path | None = None) -> client.Revoked:
    from urllib.parse import quote

    _, resolved = _resolve(env, token, start)
    if not ref:
        raise EngineError("name the token to revoke", code="usage", exit_code=2)
    return client.call(resolved, "POST", f"/api/cloud/tokens/{quote(ref, safe='')}/revoke", client.Revoked,
                       program="framework")
