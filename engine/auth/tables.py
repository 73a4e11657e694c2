"""SQLAlchemy Core handles of the auth tables (the schema is assets/migrations/0003_auth.sql)."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, MetaData, Table, Text

metadata = MetaData()

orgs = Table(
    "auth_orgs",
    metadata,
    Column("id", Text, primary_key=True),
    Column("name", Text, nullable=False),
    Column("permissions", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
)
users = Table(
    "auth_users",
    metadata,
    Column("id", Text, primary_key=True),
    Column("email", Text, nullable=False),
    Column("password_hash", Text, nullable=False),
    Column("org_id", Text, nullable=False),
    Column("role", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
)
codes = Table(
    "auth_codes",
    metadata,
    Column("code_hash", Text, primary_key=True),
    Column("client_id", Text, nullable=False),
    Column("redirect_uri", Text, nullable=False),
    Column("scope", Text, nullable=False),
    Column("user_id", Text, nullable=False),
    Column("code_challenge", Text, nullable=False),
    Column("code_challenge_method", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=False),
    Column("used_at", BigInteger),
)
tokens = Table(
    "auth_tokens",
    metadata,
    Column("id", Text, primary_key=True),
    Column("token_hash", Text, nullable=False),
    Column("kind", Text, nullable=False),
    Column("name", Text),
    Column("user_id", Text),
    Column("org_id", Text, nullable=False),
    Column("scope", Text, nullable=False),
    Column("client_id", Text),
    Column("code_hash", Text),
    Column("parent_id", Text),
    Column("created_at", BigInteger, nullable=False),
    Column("expires_at", BigInteger, nullable=False),
    Column("revoked_at", BigInteger),
)
