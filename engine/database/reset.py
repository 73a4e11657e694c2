"""`db reset` (docs/reference-db.md#db-reset): drop, recreate, migrate, seed the environment's own
development database. The caller confirms (host and database name typed, or --yes)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel

from engine.database import files, runner
from engine.database.dsn import Dsn, connect
from engine.database.errors import DatabaseAuthoringError
from engine.database.seeds import apply as seeds
from engine.project import Project


class ResetResult(BaseModel):
    database: str
    migrated: int
    version: int | None
    seeded: dict[str, int]
    custom_applied: list[str]
    warnings: list[str]


def confirmation_text(target: Dsn) -> str:
    """What the user types to confirm: host and database name."""
    return f"{target.host}/{target.database}"


def recreate(target: Dsn) -> None:
    from psycopg import sql

    if not target.database:
        raise DatabaseAuthoringError(f"{target.redacted} names no database")
    admin = target.with_database("postgres")
    with connect(admin) as conn:
        name = sql.Identifier(target.database).as_string(conn)
        import psycopg

        try:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
            conn.execute(f"CREATE DATABASE {name}")
        except psycopg.Error as exc:
            raise DatabaseAuthoringError(f"cannot recreate {target.database}: {exc.diag.message_primary or exc}") \
                from exc


def reset(project: Project, target: Dsn, anchor: datetime | None = None,
          on_step: Any = None) -> ResetResult:
    step = on_step or (lambda _msg: None)
    step(f"dropping and recreating {target.database}")
    recreate(target)
    step("migrating")
    up = runner.up(target, files.load(project.root / files.MIGRATIONS_DIR))
    step("seeding")
    seeded = seeds.apply(target, project.root, project.config, anchor)
    return ResetResult(database=target.redacted, migrated=len(up.applied_now), version=up.version,
                       seeded=seeded.inserted, custom_applied=seeded.custom_applied, warnings=seeded.warnings)
