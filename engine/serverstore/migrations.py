"""Embedded SQL migrations (`platform db`, docs/reference-webhooks.md#commands): `status` opens without migrating
or waiting; `up` applies every pending migration, is safe to re-run and to run from several processes."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from pydantic import BaseModel
from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from engine.paths import assets_dir
from engine.progress import Reporter, tracked
from engine.serverstore.url import DatabaseError, redact

_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
_ADVISORY_LOCK = 0x706C6174  # 'plat': serialises `up` across processes on PostgreSQL
_CREATE_LEDGER = """CREATE TABLE IF NOT EXISTS schema_migrations (
    version TEXT PRIMARY KEY, name TEXT NOT NULL, checksum TEXT NOT NULL, applied_at BIGINT NOT NULL)"""


class Migration(BaseModel):
    version: str
    name: str
    checksum: str


class MigrationStatus(BaseModel):
    database: str
    applied: int
    embedded: int
    missing: list[Migration]
    unknown: list[str]
    current: bool


class MigrationResult(BaseModel):
    database: str
    applied_now: list[Migration]
    applied: int
    current: bool = True


def migrations_dir() -> Path:
    return assets_dir() / "migrations"


def embedded() -> list[Migration]:
    found = []
    for path in sorted(migrations_dir().glob("*.sql")):
        match = _NAME.match(path.name)
        if match:
            found.append(
                Migration(
                    version=match[1], name=match[2], checksum=hashlib.sha256(path.read_bytes()).hexdigest()
                )
            )
    return found


def _statements(version: str) -> list[str]:
    path = next(migrations_dir().glob(f"{version}_*.sql"))
    lines = [ln for ln in path.read_text().splitlines() if not ln.lstrip().startswith("--")]
    return [s.strip() for s in re.split(r";\s*(?:\n|$)", "\n".join(lines)) if s.strip()]


def _applied(conn: Connection) -> dict[str, str]:
    rows = conn.execute(text("SELECT version, checksum FROM schema_migrations")).all()
    return {r[0]: r[1] for r in rows}


def _has_ledger(conn: Connection) -> bool:
    from sqlalchemy import inspect

    return bool(inspect(conn).has_table("schema_migrations"))


def status(engine: Engine) -> MigrationStatus:
    """Read-only: never creates the ledger table, never takes a lock."""
    try:
        with engine.connect() as conn:
            if engine.dialect.name == "postgresql":
                conn.exec_driver_sql("SET lock_timeout = '1s'")
            applied = _applied(conn) if _has_ledger(conn) else {}
    except SQLAlchemyError as exc:
        raise DatabaseError(f"cannot read {redact(str(engine.url))}: {_reason(exc)}") from exc
    emb = embedded()
    missing = [m for m in emb if m.version not in applied]
    unknown = sorted(set(applied) - {m.version for m in emb})
    return MigrationStatus(
        database=redact(engine.url.render_as_string(hide_password=True)),
        applied=len(applied),
        embedded=len(emb),
        missing=missing,
        unknown=unknown,
        current=not missing,
    )


def up(engine: Engine, report: Reporter | None = None) -> MigrationResult:
    """Apply pending migrations, each in its own transaction with its ledger row; `report` hears each
    pending one (engine/progress.py)."""
    done: list[Migration] = []
    try:
        with engine.connect().execution_options(immediate=True) as conn:
            with conn.begin():
                _lock(conn)  # CREATE TABLE IF NOT EXISTS itself races on PostgreSQL
                conn.exec_driver_sql(_CREATE_LEDGER)
            with conn.begin():
                known = _applied(conn)
            pending = [m for m in embedded() if m.version not in known]
            for migration in tracked(report, "migrate", pending, lambda m: f"{m.version}_{m.name}"):
                with conn.begin():
                    _lock(conn)
                    if migration.version in _applied(conn):
                        continue  # applied meanwhile by another process, or earlier
                    for statement in _statements(migration.version):
                        conn.exec_driver_sql(statement)
                    conn.execute(
                        text(
                            "INSERT INTO schema_migrations (version, name, checksum, applied_at) "
                            "VALUES (:v, :n, :c, :t)"
                        ),
                        {
                            "v": migration.version,
                            "n": migration.name,
                            "c": migration.checksum,
                            "t": _now_us(),
                        },
                    )
                    done.append(migration)
            total = len(_applied(conn))
    except SQLAlchemyError as exc:
        raise DatabaseError(f"cannot migrate {redact(str(engine.url))}: {_reason(exc)}") from exc
    return MigrationResult(
        database=engine.url.render_as_string(hide_password=True), applied_now=done, applied=total
    )


def _lock(conn: Connection) -> None:
    """Serialise `up` across processes for this transaction (SQLite: BEGIN IMMEDIATE already does)."""
    if conn.dialect.name == "postgresql":
        conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _ADVISORY_LOCK})


def _now_us() -> int:
    from engine.serverstore.store import now_us

    return now_us()


def _reason(exc: SQLAlchemyError) -> str:
    orig = getattr(exc, "orig", None)
    return str(orig or exc).strip().splitlines()[0]
