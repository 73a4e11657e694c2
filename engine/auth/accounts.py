"""Organizations, users and the permissions an organization grants (`platform server org add`,
`org grant`, `user add`). Each is one transaction on the server store."""

from __future__ import annotations

import re
import secrets

from pydantic import BaseModel
from sqlalchemy import select, update
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from engine.auth import tables as t
from engine.auth.passwords import hash_password
from engine.errors import Conflict, NotFound, UsageError
from engine.serverstore import store

# The deploy, secret and domain authority an organization may grant
# (docs/reference-auth.md#accounts-platform-server-org-addgrant-platform-server-user-add: names beyond
# `deploy:read` / `deploy:write` are this build's, in the same pattern). Promote needs more than
# gate recording: `deploy:promote`.
PERMISSIONS = (
    "deploy:read",
    "deploy:write",
    "deploy:promote",
    "secret:read",
    "secret:write",
    "domain:read",
    "domain:write",
)
API_SCOPE = "platform:api"
ROLES = ("admin", "member")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
_ORG_NAME = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
MIN_PASSWORD = 8


class Org(BaseModel):
    id: str
    name: str
    permissions: list[str]


class User(BaseModel):
    id: str
    email: str
    org: str
    role: str


def new_id(prefix: str) -> str:
    return f"{prefix}_{secrets.token_hex(8)}"


def add_org(engine: Engine, name: str) -> Org:
    if not _ORG_NAME.match(name):
        raise UsageError(f"invalid organization name {name!r}", hint="lowercase letters, digits and '-'")
    org = Org(id=new_id("org"), name=name, permissions=[])
    try:
        with store.write(engine) as conn:
            conn.execute(t.orgs.insert().values(id=org.id, name=name, permissions="", created_at=store.now_us()))
    except IntegrityError:
        raise Conflict(f"organization {name!r} already exists") from None
    return org


def _org_row(conn: object, name: str) -> tuple[str, str]:
    row = conn.execute(select(t.orgs.c.id, t.orgs.c.permissions).where(t.orgs.c.name == name)).first()  # type: ignore[attr-defined]
    if row is None:
        raise NotFound(f"no organization {name!r}", hint="create it with: platform server org add <name>")
    return row[0], row[1]


def grant(engine: Engine, org_name: str, permissions: list[str], *, remove: bool = False) -> Org:
    unknown = [p for p in permissions if p not in PERMISSIONS]
    if unknown or not permissions:
        raise UsageError(
            f"unknown permission {unknown[0]!r}" if unknown else "name at least one permission",
            hint="one of: " + ", ".join(PERMISSIONS),
        )
    with store.write(engine) as conn:
        org_id, current = _org_row(conn, org_name)
        held = set(current.split())
        held = held - set(permissions) if remove else held | set(permissions)
        ordered = [p for p in PERMISSIONS if p in held]
        conn.execute(update(t.orgs).where(t.orgs.c.id == org_id).values(permissions=" ".join(ordered)))
    return Org(id=org_id, name=org_name, permissions=ordered)


def add_user(engine: Engine, email: str, password: str, org_name: str, role: str = "member") -> User:
    if not _EMAIL.match(email):
        raise UsageError(f"invalid email {email!r}")
    if role not in ROLES:
        raise UsageError(f"invalid role {role!r}", hint="admin or member")
    if len(password) < MIN_PASSWORD:
        raise UsageError(f"the password is shorter than {MIN_PASSWORD} characters")
    hashed = hash_password(password)
    user_id = new_id("usr")
    try:
        with store.write(engine) as conn:
            org_id, _ = _org_row(conn, org_name)
            conn.execute(
                t.users.insert().values(
                    id=user_id, email=email.lower(), password_hash=hashed, org_id=org_id, role=role,
                    created_at=store.now_us(),
                )
            )
    except IntegrityError:
        raise Conflict(f"user {email!r} already exists") from None
    return User(id=user_id, email=email.lower(), org=org_name, role=role)


class Account(BaseModel):
    """A user with what a sign-in needs: the password hash and the organization's grants."""

    id: str
    email: str
    password_hash: str
    org_id: str
    org: str
    role: str
    permissions: list[str]


def find_account(engine: Engine, email: str) -> Account | None:
    query = (
        select(t.users.c.id, t.users.c.email, t.users.c.password_hash, t.users.c.org_id, t.orgs.c.name,
               t.users.c.role, t.orgs.c.permissions)
        .join(t.orgs, t.orgs.c.id == t.users.c.org_id)
    )
    with store.read(engine) as conn:
        row = conn.execute(query.where(t.users.c.email == email.strip().lower())).first()
    if row is None:
        return None
    return Account(id=row[0], email=row[1], password_hash=row[2], org_id=row[3], org=row[4], role=row[5],
                   permissions=row[6].split())


def account_by_id(engine: Engine, user_id: str) -> Account | None:
    query = (
        select(t.users.c.id, t.users.c.email, t.users.c.password_hash, t.users.c.org_id, t.orgs.c.name,
               t.users.c.role, t.orgs.c.permissions)
        .join(t.orgs, t.orgs.c.id == t.users.c.org_id)
        .where(t.users.c.id == user_id)
    )
    with store.read(engine) as conn:
        row = conn.execute(query).first()
    if row is None:
        return None
    return Account(id=row[0], email=row[1], password_hash=row[2], org_id=row[3], org=row[4], role=row[5],
                   permissions=row[6].split())


def org_permissions(engine: Engine, org_id: str) -> list[str]:
    with store.read(engine) as conn:
        row = conn.execute(select(t.orgs.c.permissions).where(t.orgs.c.id == org_id)).first()
    return row[0].split() if row else []


def server_store(data_dir: object = None) -> Engine:
    """The store `platform server` would open (DATABASE_URL, else SQLite in the data dir), migrated."""
    from pathlib import Path

    from engine.serverstore.migrations import up
    from engine.serverstore.url import database_url, default_data_dir

    directory = Path(str(data_dir)) if data_dir else default_data_dir()
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    engine = store.open_engine(database_url(directory))
    up(engine)
    return engine
