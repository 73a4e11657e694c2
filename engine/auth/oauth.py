"""The OAuth 2.0 authorization server of `platform server` (authlib): authorization code with
PKCE S256 only, for the two public native clients `platform-cli` and `framework-cli`, which may
redirect to a loopback address on any port (RFC 8252 7.3).

Codes are one-time (the exchange that sets `used_at` wins, across processes), expire after
CODE_TTL_S, and are bound to client, redirect URI and code challenge. A replayed code is refused
and revokes the token its first exchange issued (RFC 6749 4.1.2).
"""

from __future__ import annotations

import ipaddress
import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from authlib.oauth2 import AuthorizationServer as _AuthorizationServer
from authlib.oauth2.rfc6749 import ClientMixin, OAuth2Payload, OAuth2Request
from authlib.oauth2.rfc6749.errors import InvalidRequestError
from authlib.oauth2.rfc6749.grants import AuthorizationCodeGrant
from authlib.oauth2.rfc7636 import CodeChallenge
from sqlalchemy import select, update
from sqlalchemy.engine import Engine

from engine.auth import tables as t
from engine.auth.accounts import API_SCOPE, PERMISSIONS, Account, account_by_id
from engine.auth.bearer import token_hash
from engine.auth.tokens import ACCESS_TTL_S, mint, revoke_from_code
from engine.serverstore import store

CODE_TTL_S = 300
CLIENT_IDS = ("platform-cli", "framework-cli")
SCOPES = (API_SCOPE, *PERMISSIONS)


def is_loopback_redirect(uri: str | None) -> bool:
    """http://127.0.0.1:<port>/... or http://[::1]:<port>/... (an IP literal, not `localhost`:
    RFC 8252 8.3), with no user info or fragment."""
    if not uri:
        return False
    try:
        parts = urlsplit(uri)
        host = ipaddress.ip_address(parts.hostname or "")
        port = parts.port
    except ValueError:
        return False
    return (
        parts.scheme == "http" and host.is_loopback and port is not None and not parts.username
        and not parts.fragment and "@" not in parts.netloc
    )


class Client(ClientMixin):  # type: ignore[misc]
    """A public native client: no secret, PKCE required, loopback redirects only."""

    def __init__(self, client_id: str) -> None:
        self.client_id = client_id

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> None:
        return None

    def get_allowed_scope(self, scope: str | None) -> str:
        return API_SCOPE

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return is_loopback_redirect(redirect_uri)

    def check_client_secret(self, client_secret: str) -> bool:
        return False

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method == "none"

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type == "authorization_code"


@dataclass
class Code:
    code_hash: str
    client_id: str
    redirect_uri: str
    scope: str
    user_id: str
    code_challenge: str
    code_challenge_method: str

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope


class S256Only(CodeChallenge):  # type: ignore[misc]
    """PKCE with S256 only: a missing challenge or method, or `plain`, is refused at authorize."""

    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]

    def validate_code_challenge(self, grant: Any, redirect_uri: str) -> None:
        data = grant.request.payload.data
        if not data.get("code_challenge"):
            raise InvalidRequestError("PKCE is required: missing 'code_challenge'")
        if data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("PKCE method must be S256 ('plain' is refused)")
        super().validate_code_challenge(grant, redirect_uri)


class CodeGrant(AuthorizationCodeGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = ["none"]
    engine: Engine  # set on the subclass made per server

    def save_authorization_code(self, code: str, request: Any) -> None:
        data = request.payload.data
        now = store.now_us()
        with store.write(self.engine) as conn:
            conn.execute(t.codes.insert().values(
                code_hash=token_hash(code), client_id=request.payload.client_id,
                redirect_uri=request.payload.redirect_uri, scope=request.scope or API_SCOPE,
                user_id=request.user.id, code_challenge=data["code_challenge"],
                code_challenge_method=data["code_challenge_method"], created_at=now,
                expires_at=now + CODE_TTL_S * 1_000_000,
            ))

    def query_authorization_code(self, code: str, client: Client) -> Code | None:
        digest = token_hash(code)
        with store.write(self.engine) as conn:
            row = conn.execute(select(t.codes).where(t.codes.c.code_hash == digest)).mappings().first()
            if row is None:
                return None
            taken = conn.execute(
                update(t.codes).where(t.codes.c.code_hash == digest, t.codes.c.used_at.is_(None))
                .values(used_at=store.now_us())
            ).rowcount
            if taken != 1:
                revoke_from_code(conn, digest)  # replay: refuse, and revoke what the first use issued
                return None
        if row["client_id"] != client.get_client_id() or row["expires_at"] <= store.now_us():
            return None
        return Code(**{k: row[k] for k in Code.__dataclass_fields__})

    def delete_authorization_code(self, authorization_code: Code) -> None:
        pass  # consumed (used_at set) by query_authorization_code

    def authenticate_user(self, authorization_code: Code) -> Account | None:
        return account_by_id(self.engine, authorization_code.user_id)

    def generate_token(self, user: Account | None = None, scope: str | None = None, grant_type: str | None = None,
                       expires_in: int | None = None, include_refresh_token: bool = True) -> dict[str, Any]:
        assert user is not None
        code: Code = self.request.authorization_code
        granted = " ".join([API_SCOPE, *user.permissions])
        with store.write(self.engine) as conn:
            minted = mint(conn, kind="access", org_id=user.org_id, user_id=user.id, scope=granted,
                          ttl_s=ACCESS_TTL_S, client_id=code.client_id, code_hash=code.code_hash)
        return {
            "access_token": minted.token, "token_type": "Bearer", "expires_in": minted.expires_in,
            "scope": granted, "user": user.email, "organization": user.org, "token_id": minted.id,
        }


class Payload(OAuth2Payload):  # type: ignore[misc]
    def __init__(self, data: dict[str, list[str]]) -> None:
        self._lists = defaultdict(list, data)
        self._data = {k: v[0] for k, v in data.items() if v}

    @property
    def data(self) -> dict[str, str]:
        return self._data

    @property
    def datalist(self) -> defaultdict[str, list[str]]:
        return self._lists


class Request(OAuth2Request):  # type: ignore[misc]
    """An OAuth2Request from what the Starlette handler read (query or form, as lists)."""

    def __init__(self, method: str, uri: str, headers: dict[str, str], data: dict[str, list[str]]) -> None:
        super().__init__(method=method, uri=uri, headers=headers)
        self.payload = Payload(data)

    @property
    def args(self) -> dict[str, str]:
        return self.payload.data if self.method == "GET" else {}

    @property
    def form(self) -> dict[str, str]:
        return self.payload.data if self.method == "POST" else {}


@dataclass
class Reply:
    status: int
    body: str
    headers: list[tuple[str, str]]


class AuthorizationServer(_AuthorizationServer):  # type: ignore[misc]
    def __init__(self, engine: Engine) -> None:
        super().__init__(scopes_supported=list(SCOPES))
        self.engine = engine
        self.register_grant(type("BoundCodeGrant", (CodeGrant,), {"engine": engine}), [S256Only(required=True)])

    def query_client(self, client_id: str) -> Client | None:
        return Client(client_id) if client_id in CLIENT_IDS else None

    def save_token(self, token: dict[str, Any], request: Any) -> None:
        pass  # minted (stored hashed) by CodeGrant.generate_token

    def create_oauth2_request(self, request: Any) -> OAuth2Request:
        return request

    def handle_response(self, status: int, body: Any, headers: list[tuple[str, str]]) -> Reply:
        text = body if isinstance(body, str) else json.dumps(body)
        return Reply(status, text, list(headers))

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        pass


def metadata(issuer: str) -> dict[str, Any]:
    """RFC 8414 authorization server metadata."""
    from authlib.oauth2.rfc8414 import AuthorizationServerMetadata

    doc = AuthorizationServerMetadata({
        "issuer": issuer,
        "authorization_endpoint": f"{issuer}/oauth/authorize",
        "token_endpoint": f"{issuer}/oauth/token",
        "scopes_supported": list(SCOPES),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code"],
        "token_endpoint_auth_methods_supported": ["none"],
        "code_challenge_methods_supported": ["S256"],
    })
    doc.validate()
    return dict(doc)
