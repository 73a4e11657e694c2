"""SQLAlchemy Core handles of the control plane's tables (the schema is
assets/migrations/0004_controlplane.sql)."""

from __future__ import annotations

from sqlalchemy import BigInteger, Boolean, Column, Float, MetaData, Table, Text

metadata = MetaData()

billing = Table(
    "cp_billing", metadata,
    Column("org_id", Text, primary_key=True),
    Column("enabled", Boolean, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
)
blobs = Table(
    "cp_blobs", metadata,
    Column("org_id", Text, primary_key=True),
    Column("digest", Text, primary_key=True),
    Column("size", BigInteger, nullable=False),
    Column("content", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
)
releases = Table(
    "cp_releases", metadata,
    Column("org_id", Text, primary_key=True),
    Column("version", Text, primary_key=True),
    Column("project", Text, nullable=False),
    Column("fingerprint", Text, nullable=False),
    Column("document", Text, nullable=False),
    Column("created_at", Float, nullable=False),
)
envs = Table(
    "cp_envs", metadata,
    Column("id", Text, primary_key=True),
    Column("org_id", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("state", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("converged_id", Text),
    Column("stopped_targets", Text, nullable=False),
    Column("lease_owner", Text),
    Column("lease_until", BigInteger),
)
promotions = Table(
    "cp_promotions", metadata,
    Column("id", Text, primary_key=True),
    Column("env_id", Text, nullable=False),
    Column("org_id", Text, nullable=False),
    Column("seq", BigInteger, nullable=False),
    Column("env", Text, nullable=False),
    Column("release", Text, nullable=False),
    Column("images", Text, nullable=False),
    Column("bundle", Text, nullable=False),
    Column("direction", Text, nullable=False),
    Column("previous_id", Text),
    Column("plan_digest", Text),
    Column("supersede", Boolean, nullable=False),
    Column("source", Text, nullable=False),
    Column("who", Text, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("run_id", Text),
)
current = Table(
    "cp_current", metadata,
    Column("env_id", Text, primary_key=True),
    Column("promotion_id", Text, nullable=False),
)
applies = Table(
    "cp_applies", metadata,
    Column("env_id", Text, primary_key=True),
    Column("seq", BigInteger, primary_key=True),
    Column("promotion_id", Text),
    Column("release", Text, nullable=False),
    Column("owner", Text),
    Column("started_at", Float, nullable=False),
    Column("finished_at", Float),
    Column("phase", Text, nullable=False),
    Column("outcome", Text),
    Column("resources", Text, nullable=False),
    Column("superseded", Boolean, nullable=False),
)
gates = Table(
    "cp_gates", metadata,
    Column("env_id", Text, primary_key=True),
    Column("seq", BigInteger, primary_key=True),
    Column("promotion_id", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("summary", Text, nullable=False),
    Column("run_id", Text, nullable=False),
    Column("at_promote", Boolean, nullable=False),
    Column("recorded_at", Float, nullable=False),
)
clusters = Table(  # assets/migrations/0009_cp_clusters.sql
    "cp_clusters", metadata,
    Column("org_id", Text, primary_key=True),
    Column("name", Text, primary_key=True),
    Column("context", Text, nullable=False),
    Column("server", Text, nullable=False),
    Column("ca", Text),
    Column("insecure", Boolean, nullable=False),
    Column("auth", Text, nullable=False),
    Column("namespace", Text, nullable=False),
    Column("service_account", Text, nullable=False),
    Column("token", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
    Column("updated_at", BigInteger, nullable=False),
    Column("revoked_at", BigInteger),
)
