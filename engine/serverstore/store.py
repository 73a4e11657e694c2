"""SQLAlchemy Core store: engine creation per dialect, the tables of the embedded migrations.

The tables here mirror `assets/migrations/*.sql` (the migrations are the schema; these are only
the Core handles used to query it).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import BigInteger, Boolean, Column, Integer, MetaData, Table, Text, create_engine, event
from sqlalchemy.engine import Connection, Engine

metadata = MetaData()

automations = Table(
    "automations",
    metadata,
    Column("id", Text, primary_key=True),
    Column("name", Text, nullable=False),
    Column("workflow_name", Text, nullable=False),
    Column("workflow_source", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
)
triggers = Table(
    "triggers",
    metadata,
    Column("id", Text, primary_key=True),
    Column("automation_id", Text, nullable=False),
    Column("name", Text, nullable=False),
    Column("definition", Text, nullable=False),
    Column("enabled", Boolean, nullable=False),
    Column("token_hash", Text),
    Column("hmac_secret_sealed", Text),
    Column("activated_at", BigInteger),
    Column("rotated_at", BigInteger),
    Column("created_at", BigInteger, nullable=False),
)
deliveries = Table(
    "deliveries",
    metadata,
    Column("id", Text, primary_key=True),
    Column("trigger_id", Text, nullable=False),
    Column("automation_id", Text, nullable=False),
    Column("received_at", BigInteger, nullable=False),
    Column("status_code", Integer, nullable=False),
    Column("outcome", Text, nullable=False),
    Column("auth_method", Text),
    Column("dedupe_key", Text),
    Column("duplicate_of", Text),
    Column("payload", Text),
    Column("body_bytes", Integer, nullable=False),
    Column("run_id", Text),
    Column("detail", Text),
    Column("updated_at", BigInteger, nullable=False),
    Column("decided_at", BigInteger),  # when the recorder decided the answer (0008_delivery_decided_at.sql)
)
delivery_keys = Table(
    "delivery_keys",
    metadata,
    Column("trigger_id", Text, primary_key=True),
    Column("dedupe_key", Text, primary_key=True),
    Column("delivery_id", Text, nullable=False),
)
run_queue = Table(
    "run_queue",
    metadata,
    Column("delivery_id", Text, primary_key=True),
    Column("automation_id", Text, nullable=False),
    Column("state", Text, nullable=False),
    Column("enqueued_at", BigInteger, nullable=False),
    Column("lease_owner", Text),
    Column("lease_until", BigInteger),
    Column("attempts", Integer, nullable=False),
)
runs = Table(
    "runs",
    metadata,
    Column("id", Text, primary_key=True),
    Column("automation_id", Text, nullable=False),
    Column("delivery_id", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("started_at", BigInteger, nullable=False),
    Column("finished_at", BigInteger),
    Column("steps", Integer, nullable=False),
    Column("error", Text),
    Column("record", Text),
)
api_tokens = Table(
    "api_tokens",
    metadata,
    Column("name", Text, primary_key=True),
    Column("token_hash", Text, nullable=False),
    Column("created_at", BigInteger, nullable=False),
)


def now_us() -> int:
    return time.time_ns() // 1000


def open_engine(
    url: str, *, pool_size: int = 5, connect_timeout: int = 10, synchronous: str | None = None
) -> Engine:
    """An Engine for `url` (already normalised by engine.serverstore.url). `synchronous` (SQLite): FULL
    unless said otherwise here or in PLATFORM_SQLITE_SYNCHRONOUS."""
    if url.startswith("sqlite"):
        busy_ms = int(os.environ.get("PLATFORM_DB_BUSY_TIMEOUT_MS", "10000"))
        synchronous = (synchronous or os.environ.get("PLATFORM_SQLITE_SYNCHRONOUS", "FULL")).upper()
        if synchronous not in ("FULL", "NORMAL", "EXTRA"):
            synchronous = "FULL"
        engine = create_engine(
            url, connect_args={"check_same_thread": False, "timeout": busy_ms / 1000, "isolation_level": None}
        )

        @event.listens_for(engine, "connect")
        def _pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            # WAL lets readers run beside the single writer; FULL makes every commit durable.
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute(f"PRAGMA synchronous={synchronous}")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute(f"PRAGMA busy_timeout={busy_ms}")
            # Statement journals of multi-row inserts in memory, not a temp file per transaction.
            cur.execute("PRAGMA temp_store=MEMORY")
            cur.close()

        @event.listens_for(engine, "begin")
        def _begin(conn: Connection) -> None:
            # Writers take the lock up front (no read-to-write upgrade deadlocks).
            immediate = conn.get_execution_options().get("immediate")
            conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

        return engine
    return create_engine(
        url,
        pool_size=pool_size,
        max_overflow=pool_size,
        pool_pre_ping=True,
        connect_args={"connect_timeout": connect_timeout},
    )


def insert_ignore(conn: Connection, table: Any) -> Any:
    """INSERT ... ON CONFLICT DO NOTHING on either store (the primary key decides a race)."""
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(table).on_conflict_do_nothing()
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert(table).on_conflict_do_nothing()


def is_postgres(engine: Engine) -> bool:
    return engine.dialect.name == "postgresql"


@contextmanager
def write(engine: Engine) -> Iterator[Connection]:
    """One write transaction (BEGIN IMMEDIATE on SQLite)."""
    with engine.connect().execution_options(immediate=True) as conn, conn.begin():
        yield conn


@contextmanager
def read(engine: Engine) -> Iterator[Connection]:
    with engine.connect() as conn, conn.begin():
        yield conn
