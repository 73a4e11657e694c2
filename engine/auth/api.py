"""The token API behind /api/auth and /api/cloud/tokens: who may mint, list and revoke what.

- API tokens (`platform auth token create`): only a consented browser login (kind `access`) mints
  one; a token never mints a token. Named `platform-cli@<name>`; a new one replaces the old.
- Control-plane tokens (`platform auth framework-credential`): from a login, API or daemon token;
  deploy, secret and domain authority only; at most 1 hour and never past the parent's expiry.
- Organization automation tokens (`framework cloud token create`): no acting user; minted only
  by an organization admin's browser login (machine credentials refused).
"""

from __future__ import annotations

import re
import time
from typing import Any

from sqlalchemy.engine import Engine

from engine.auth.accounts import PERMISSIONS, account_by_id
from engine.auth.models import Minted, Revoked, WhoAmI
from engine.auth.models import Tokens as TokenList
from engine.auth.tokens import (
    ACCESS_TTL_S,
    API_TOKEN_NAME,
    AUTOMATION_TTL_S,
    CONTROL_PLANE_TTL_S,
    USER_KINDS,
    Principal,
    Verifier,
    list_tokens,
    mint,
    revoke,
    revoke_named,
)
from engine.errors import EngineError
from engine.serverstore import store

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class Forbidden(EngineError):
    code = "forbidden"
    exit_code = 1


def _engine(request: Any) -> Engine:
    return request.app.state.server.engine  # type: ignore[no-any-return]


def _verifier(request: Any) -> Verifier:
    return request.app.state.verifier  # type: ignore[no-any-return]


def _name(doc: dict[str, Any]) -> str:
    name = str(doc.get("name") or "")
    if not _NAME.match(name):
        raise EngineError("invalid token name", code="usage", exit_code=2,
                          hint="1-64 letters, digits, '.', '_' or '-'")
    return name


def _human(principal: Principal, what: str) -> None:
    if principal.kind != "access":
        raise Forbidden(
            f"{what} needs a consented browser login; a token never mints a token "
            f"(this request used a {principal.kind} token)",
            hint="sign in with `platform auth login` (and unset PLATFORM_TOKEN)",
        )


def _user(principal: Principal) -> None:
    if principal.kind not in USER_KINDS or principal.org_id is None:
        raise Forbidden(f"a {principal.kind} token cannot do this", hint="sign in with `platform auth login`")


def whoami(request: Any, principal: Principal, doc: dict[str, Any]) -> WhoAmI:
    from engine.auth.models import iso

    account = account_by_id(_engine(request), principal.user_id) if principal.user_id else None
    return WhoAmI(kind=principal.kind, user=account.email if account else None,
                  organization=account.org if account else None, role=account.role if account else None,
                  scope=sorted(principal.scopes),
                  expires_at=iso(principal.expires_at_us) if principal.expires_at_us else None)


def create_api_token(request: Any, principal: Principal, doc: dict[str, Any]) -> Minted:
    _human(principal, "creating an API token")
    assert principal.org_id and principal.user_id
    return _replace(request, kind="api", org_id=principal.org_id, name=API_TOKEN_NAME.format(name=_name(doc)),
                    user_id=principal.user_id, scope="platform:api", ttl_s=ACCESS_TTL_S, parent_id=principal.token_id)


def _replace(request: Any, *, kind: str, org_id: str, name: str, user_id: str | None, scope: str, ttl_s: int,
             parent_id: str) -> Minted:
    """Mint a named token, revoking a live one of the same name in the same transaction."""
    with store.write(_engine(request)) as conn:
        replaced = revoke_named(conn, org_id=org_id, kind=kind, name_or_id=name, user_id=user_id)
        minted = mint(conn, kind=kind, org_id=org_id, user_id=user_id, scope=scope, ttl_s=ttl_s, name=name,
                      parent_id=parent_id)
    if replaced:
        _verifier(request).settle()
    return minted


def list_api_tokens(request: Any, principal: Principal, doc: dict[str, Any]) -> TokenList:
    _user(principal)
    assert principal.org_id
    return TokenList(tokens=list_tokens(_engine(request), org_id=principal.org_id, kind="api",
                                        user_id=principal.user_id))


def _ref(request: Any, prefix: str = "") -> str:
    ref = str(request.path_params["ref"])
    return ref if ref.startswith("tok_") or ref.startswith(prefix) else prefix + ref


def revoke_api_token(request: Any, principal: Principal, doc: dict[str, Any]) -> Revoked:
    _user(principal)
    assert principal.org_id
    ids = revoke(_engine(request), _verifier(request), org_id=principal.org_id, kind="api",
                 name_or_id=_ref(request, "platform-cli@"), user_id=principal.user_id)
    return Revoked(revoked=ids)


def framework_credential(request: Any, principal: Principal, doc: dict[str, Any]) -> Minted:
    _user(principal)
    assert principal.org_id
    scope = " ".join(p for p in PERMISSIONS if p in principal.scopes)
    ttl = CONTROL_PLANE_TTL_S
    if principal.expires_at_us is not None:
        ttl = min(ttl, int(principal.expires_at_us / 1e6 - time.time()))
    if ttl <= 0:
        raise Forbidden("the credential has expired", hint="sign in again with `platform auth login`")
    with store.write(_engine(request)) as conn:
        return mint(conn, kind="control_plane", org_id=principal.org_id, user_id=principal.user_id, scope=scope,
                    ttl_s=ttl, name="framework-credential", parent_id=principal.token_id)


def _org_admin(request: Any, principal: Principal) -> None:
    _human(principal, "minting an organization automation token")
    account = account_by_id(_engine(request), principal.user_id or "")
    if account is None or account.role != "admin":
        raise Forbidden("only an organization admin may do this")


def create_automation_token(request: Any, principal: Principal, doc: dict[str, Any]) -> Minted:
    _org_admin(request, principal)
    assert principal.org_id
    name = _name(doc)
    raw = doc.get("scopes")
    scopes = [s.strip() for s in (raw if isinstance(raw, list) else str(raw or "").split(",")) if s.strip()]
    unknown = [s for s in scopes if s not in PERMISSIONS]
    if unknown or not scopes:
        raise EngineError(f"unknown scope {unknown[0]!r}" if unknown else "name at least one scope", code="usage",
                          exit_code=2, hint="comma-separated, from: " + ", ".join(PERMISSIONS))
    return _replace(request, kind="automation", org_id=principal.org_id, name=name, user_id=None,
                    scope=" ".join(scopes), ttl_s=AUTOMATION_TTL_S, parent_id=principal.token_id)


def list_automation_tokens(request: Any, principal: Principal, doc: dict[str, Any]) -> TokenList:
    _user(principal)
    assert principal.org_id
    return TokenList(tokens=list_tokens(_engine(request), org_id=principal.org_id, kind="automation"))


def revoke_automation_token(request: Any, principal: Principal, doc: dict[str, Any]) -> Revoked:
    _org_admin(request, principal)
    assert principal.org_id
    return Revoked(revoked=revoke(_engine(request), _verifier(request), org_id=principal.org_id, kind="automation",
                                  name_or_id=_ref(request)))
