"""SQLAlchemy Core handles of the domain tables (schema: assets/migrations/0006_domains.sql)."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, MetaData, Table, Text

metadata = MetaData()

domains = Table(
    "cp_domains", metadata,
    Column("id", Text, primary_key=True),
    Column("org_id", Text, nullable=False),
    Column("hostname", Text, nullable=False),
    Column("token", Text, nullable=False),
    Column("state", Text, nullable=False),
    Column("env", Text),
    Column("target", Text),
    Column("redirect_to", Text),
    Column("created_at", BigInteger, nullable=False),
    Column("verified_at", BigInteger),
    Column("checked_at", BigInteger),
    Column("check_result", Text),
)
owners = Table(
    "cp_domain_owners", metadata,
    Column("hostname", Text, primary_key=True),
    Column("org_id", Text, nullable=False),
    Column("domain_id", Text, nullable=False),
    Column("since", BigInteger, nullable=False),
)
