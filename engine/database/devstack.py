"""The dev database of `framework env up` (docs/reference-db.md#env-up-and-the-dashboard: a first-boot
database whose seedable tables are all empty is seeded; `--no-seed` skips seeding).

Called once the stack's processes are healthy: waits until the declared database accepts
connections, creates it when missing, migrates, then seeds when every seedable table is empty.
Returns the one-line state `env up` reports in its `seed` field.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from pydantic import BaseModel

from engine.database import dsn as dsns
from engine.database.errors import DatabaseAuthoringError
from engine.environments.model import EnvironmentSpec
from engine.errors import EngineError
from engine.project import Project

Progress = Callable[[str], None]


def _declared_ports(spec: EnvironmentSpec) -> set[int]:
    return {p.port for w in spec.workloads for p in w.ports}


def stack_dsn(spec: EnvironmentSpec, port_offset: int) -> dsns.Dsn | None:
    """The declared DATABASE_URL, moved by the stack's port block when it names a workload's port."""
    from engine.database.guard import declared_dsn

    declared = declared_dsn(spec)
    if declared is None or not port_offset or declared.port not in _declared_ports(spec):
        return declared
    parts = declared.parts
    netloc = parts.netloc.rsplit(":", 1)[0] + f":{declared.port + port_offset}"
    return dsns.Dsn(parts._replace(netloc=netloc).geturl())


def wait_ready(target: dsns.Dsn, timeout: float) -> None:
    """Until the server accepts connections (a listening PostgreSQL may still be starting up)."""
    import psycopg

    admin = target.with_database("postgres")
    deadline = time.monotonic() + timeout
    while True:
        try:
            with psycopg.connect(admin.url, autocommit=True, connect_timeout=2) as conn:
                if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (target.database,)).fetchone() is None:
                    from psycopg import sql

                    conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(target.database)))
                return
        except psycopg.OperationalError as exc:
            if time.monotonic() > deadline:
                raise DatabaseAuthoringError(f"{target.redacted} did not accept connections within "
                                             f"{timeout:g}s: {str(exc).strip().splitlines()[-1]}") from exc
            time.sleep(0.1)


def prepare_dev_database(project: Project, spec: EnvironmentSpec, port_offset: int, no_seed: bool,
                         progress: Progress | None = None, timeout: float = 60.0) -> str:
    from engine.database import files, runner
    from engine.database.seeds import apply as seeds

    say = progress or (lambda _m: None)
    target = stack_dsn(spec, port_offset)
    if target is None:
        return "no database declared (no workload has DATABASE_URL)"
    if not target.is_loopback:
        return f"skipped: {target.redacted} is not on this machine"
    migrations_dir = project.root / files.MIGRATIONS_DIR
    try:
        wait_ready(target, timeout)
        state = "no migrations"
        if migrations_dir.is_dir():
            up = runner.up(target, files.load(migrations_dir), on_applied=lambda a: say(f"migrated {a.file}"))
            state = f"migrated to {up.version}" if up.version is not None else "no migrations"
        if no_seed:
            return f"{state}; seeding disabled (--no-seed)"
        if not seeds.all_empty(target):
            return f"{state}; not seeded: seedable tables already hold rows"
        say("seeding the dev database (first boot)")
        result = seeds.apply(target, project.root, project.config)
        for warning in result.warnings:
            say(f"warning: {warning}")
        return f"{state}; seeded {sum(result.inserted.values())} rows (first boot)"
    except EngineError as exc:  # the stack runs; the failure is reported, not hidden
        say(f"dev database: {exc.message}")
        return f"failed: {exc.message}"


class DatabaseState(BaseModel):
    """Migration state and seed counts of an environment's declared database (dashboard detail)."""

    dsn: str
    reachable: bool
    error: str | None = None
    version: int | None = None
    dirty: bool = False
    applied: int = 0
    pending: int = 0
    seeded: dict[str, int] = {}

    def summary(self) -> str:
        if not self.reachable:
            return f"Database {self.dsn}: not reachable ({self.error})"
        version = "none" if self.version is None else str(self.version)
        seeded = ", ".join(f"{t} {n}" for t, n in self.seeded.items()) or "nothing"
        return (f"Database {self.dsn}\n  migrations: version {version}{' (DIRTY)' if self.dirty else ''}, "
                f"{self.applied} applied, {self.pending} pending\n  seeded rows: {seeded}")


def database_state(project: Project, spec: EnvironmentSpec) -> DatabaseState | None:
    """None when the environment declares no database (same engine calls as `db migrate status`
    and `db seed status`)."""
    from engine.database import files, runner
    from engine.database.guard import declared_dsn
    from engine.database.seeds import apply as seeds

    target = declared_dsn(spec)
    if target is None:
        return None
    try:
        migrations = project.root / files.MIGRATIONS_DIR
        status = runner.status(target, files.load(migrations)) if migrations.is_dir() else None
        counts = seeds.status(target)
    except EngineError as exc:
        return DatabaseState(dsn=target.redacted, reachable=False, error=exc.message)
    return DatabaseState(dsn=target.redacted, reachable=True, version=status.version if status else None,
                         dirty=bool(status and status.dirty), applied=status.applied if status else 0,
                         pending=len(status.pending) if status else 0,
                         seeded={t.table: t.seeded for t in counts.tables})
