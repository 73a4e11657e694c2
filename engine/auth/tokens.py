"""Tokens the server issues, and the one verifier every bearer check goes through.

Tokens are `plt_<43 url-safe chars>` (the brand prefix `plt_`, 256 random bits). Only their
sha256 is stored; a presented token is hashed, looked up by that hash (indexed, unique) and the
hashes compared with hmac.compare_digest. The first-start admin token (table api_tokens) is
checked by the same verifier, as kind `admin`.

The in-process cache and revocation across processes: a verified token is cached for `ttl`
seconds (default 1 s, PLATFORM_AUTH_CACHE_TTL_MS), counted from *before* the database read that
filled the entry. A revocation commits, then waits `ttl` before it answers. Any entry filled in
any process from a read before the commit expires before the revocation returns, so once
`revoke` has answered no server process accepts the token (no clocks compared: each process
measures its own interval). Expiry is checked on every use, cached or not. Failures are never
cached (a token created in another process works at once). A wrong token costs one indexed
lookup.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

from sqlalchemy import and_, or_, select, update
from sqlalchemy.engine import Connection, Engine

from engine.auth import tables as t
from engine.auth.accounts import new_id
from engine.auth.bearer import hash_matches, new_token, token_hash
from engine.auth.models import Minted, TokenInfo, iso
from engine.errors import NotFound
from engine.serverstore import store

TOKEN_PREFIX = "plt"
DAY_S = 86_400
ACCESS_TTL_S = 90 * DAY_S  # access token and API token: 90 days (docs/reference-auth.md#token-kinds)
CONTROL_PLANE_TTL_S = 3_600  # at most 1 hour
AUTOMATION_TTL_S = 90 * DAY_S
API_TOKEN_NAME = "platform-cli@{name}"
# Kinds a person holds (a browser login, or what it minted); control-plane and automation
# tokens have no acting session.
USER_KINDS = ("access", "api", "daemon")


@dataclass(frozen=True)
class Principal:
    """Who a verified token speaks for."""

    token_id: str
    kind: str  # admin | access | api | daemon | control_plane | automation
    org_id: str | None
    user_id: str | None
    scopes: frozenset[str]
    expires_at_us: int | None
    name: str | None = None

    def has(self, scope: str) -> bool:
        return self.kind == "admin" or scope in self.scopes


def mint(
    conn: Connection,
    *,
    kind: str,
    org_id: str,
    scope: str,
    ttl_s: int,
    user_id: str | None = None,
    name: str | None = None,
    client_id: str | None = None,
    code_hash: str | None = None,
    parent_id: str | None = None,
) -> Minted:
    token = new_token(TOKEN_PREFIX)
    now = store.now_us()
    token_id = new_id("tok")
    conn.execute(
        t.tokens.insert().values(
            id=token_id, token_hash=token_hash(token), kind=kind, name=name, user_id=user_id, org_id=org_id,
            scope=scope, client_id=client_id, code_hash=code_hash, parent_id=parent_id, created_at=now,
            expires_at=now + ttl_s * 1_000_000,
        )
    )
    return Minted(id=token_id, kind=kind, name=name, token=token, scope=scope,
                  expires_at=iso(now + ttl_s * 1_000_000), expires_in=ttl_s)


def cache_ttl_s() -> float:
    return int(os.environ.get("PLATFORM_AUTH_CACHE_TTL_MS", "1000")) / 1000


class Verifier:
    """Bearer token -> Principal (or None), with the short-TTL cache described above."""

    def __init__(self, engine: Engine, ttl_s: float | None = None, max_entries: int = 4096) -> None:
        self.engine = engine
        self.ttl = cache_ttl_s() if ttl_s is None else ttl_s
        self.max_entries = max_entries
        self._cache: dict[str, tuple[Principal, float]] = {}
        self._lock = threading.Lock()

    def cached(self, presented: str | None) -> Principal | None | bool:
        """The cached answer, or False when the database must be asked (cheap: no I/O)."""
        if not presented:
            return None
        digest = token_hash(presented)
        hit = self._cache.get(digest)
        if hit is not None and hit[1] > time.monotonic():
            principal = hit[0]
            if principal.expires_at_us is None or principal.expires_at_us > time.time_ns() // 1000:
                return principal
            return None
        return False

    def verify(self, presented: str | None) -> Principal | None:
        hit = self.cached(presented)
        if hit is not False:
            return hit  # type: ignore[return-value]
        assert presented
        digest = token_hash(presented)
        started = time.monotonic()
        principal = lookup(self.engine, digest)
        if principal is not None and self.ttl > 0:
            with self._lock:
                if len(self._cache) >= self.max_entries:
                    self._cache.pop(next(iter(self._cache)))
                self._cache[digest] = (principal, started + self.ttl)
        return principal

    def forget(self, presented_hash: str | None = None) -> None:
        with self._lock:
            if presented_hash is None:
                self._cache.clear()
            else:
                self._cache.pop(presented_hash, None)

    def settle(self) -> None:
        """Wait until no process can still hold an entry read before now (after a revocation)."""
        self.forget()
        if self.ttl > 0:
            time.sleep(self.ttl)


def lookup(engine: Engine, digest: str) -> Principal | None:
    now = store.now_us()
    with store.read(engine) as conn:
        row = conn.execute(
            select(t.tokens.c.id, t.tokens.c.token_hash, t.tokens.c.kind, t.tokens.c.org_id, t.tokens.c.user_id,
                   t.tokens.c.scope, t.tokens.c.expires_at, t.tokens.c.revoked_at, t.tokens.c.name)
            .where(t.tokens.c.token_hash == digest)
        ).first()
        if row is None:
            admin = conn.execute(
                select(store.api_tokens.c.token_hash).where(store.api_tokens.c.name == "admin")
            ).first()
            if admin is not None and hash_matches(digest, admin[0]):
                return Principal(token_id="admin", kind="admin", org_id=None, user_id=None,
                                 scopes=frozenset({"platform:api"}), expires_at_us=None, name="admin")
            return None
    if not hash_matches(digest, row[1]) or row[7] is not None or row[6] <= now:
        return None
    return Principal(token_id=row[0], kind=row[2], org_id=row[3], user_id=row[4], scopes=frozenset(row[5].split()),
                     expires_at_us=row[6], name=row[8])


def list_tokens(engine: Engine, *, org_id: str, kind: str, user_id: str | None = None) -> list[TokenInfo]:
    cond = and_(t.tokens.c.org_id == org_id, t.tokens.c.kind == kind)
    if user_id is not None:
        cond = and_(cond, t.tokens.c.user_id == user_id)
    with store.read(engine) as conn:
        rows = conn.execute(
            select(t.tokens.c.id, t.tokens.c.kind, t.tokens.c.name, t.tokens.c.scope, t.tokens.c.created_at,
                   t.tokens.c.expires_at, t.tokens.c.revoked_at)
            .where(cond, t.tokens.c.revoked_at.is_(None), t.tokens.c.expires_at > store.now_us())
            .order_by(t.tokens.c.created_at)
        ).all()
    return [TokenInfo(id=r[0], kind=r[1], name=r[2], scope=r[3], created_at=iso(r[4]), expires_at=iso(r[5]),
                      revoked=r[6] is not None) for r in rows]


def revoke_named(
    conn: Connection, *, org_id: str, kind: str, name_or_id: str, user_id: str | None = None
) -> list[str]:
    """Revoke live tokens of `kind` named `name_or_id` (or with that id); their ids."""
    cond = and_(
        t.tokens.c.org_id == org_id,
        t.tokens.c.kind == kind,
        t.tokens.c.revoked_at.is_(None),
        or_(t.tokens.c.name == name_or_id, t.tokens.c.id == name_or_id),
    )
    if user_id is not None:
        cond = and_(cond, t.tokens.c.user_id == user_id)
    ids = [r[0] for r in conn.execute(select(t.tokens.c.id).where(cond)).all()]
    if ids:
        conn.execute(update(t.tokens).where(t.tokens.c.id.in_(ids)).values(revoked_at=store.now_us()))
    return ids


def revoke(engine: Engine, verifier: Verifier, *, org_id: str, kind: str, name_or_id: str,
           user_id: str | None = None) -> list[str]:
    with store.write(engine) as conn:
        ids = revoke_named(conn, org_id=org_id, kind=kind, name_or_id=name_or_id, user_id=user_id)
    if not ids:
        raise NotFound(f"no {kind} token {name_or_id!r}")
    verifier.settle()
    return ids


def revoke_from_code(conn: Connection, code_hash: str) -> None:
    """A replayed code: revoke what its first exchange issued (RFC 6749 4.1.2)."""
    conn.execute(
        update(t.tokens).where(t.tokens.c.code_hash == code_hash, t.tokens.c.revoked_at.is_(None))
        .values(revoked_at=store.now_us())
    )
