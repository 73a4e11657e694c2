"""The migration runner, compatible with golang-migrate's PostgreSQL driver
(docs/reference-db.md#migrations-golang-migrate-compatible).

Same `schema_migrations` table (version bigint, dirty boolean; one row), same advisory lock id
(CRC-32 of "<schema>\\0<table>\\0<URL path>" times golang-migrate's salt), same dirty rule: the
version is recorded dirty before a file runs and clean after, so a failure leaves it dirty and
`up` refuses until `force`. One difference: each file runs in its own transaction together with
the clean mark, so a failing file leaves nothing half-applied (files that cannot run in a
transaction, e.g. CREATE INDEX CONCURRENTLY or explicit BEGIN/COMMIT, run statement by statement
as golang-migrate runs them).
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.database import statements as sql
from engine.database.dsn import Dsn, connect
from engine.database.errors import DatabaseAuthoringError, DirtyDatabase, MigrationFailed
from engine.database.files import MigrationFile, MigrationSet
from engine.progress import Reporter, tracked

TABLE = "schema_migrations"
LOCK_SALT = 1486364155  # golang-migrate database/util.go advisoryLockIDSalt
NIL_VERSION = -1  # golang-migrate's "no version"


def lock_id(database: str, schema: str, table: str = TABLE) -> int:
    """golang-migrate's GenerateAdvisoryLockId(database, schema, table): uint32 arithmetic."""
    key = "\x00".join([schema, table, database]).encode()
    return (zlib.crc32(key) * LOCK_SALT) & 0xFFFFFFFF


class Entry(BaseModel):
    version: int
    name: str
    file: str


class Applied(Entry):
    milliseconds: float
    transactional: bool


class MigrationStatus(BaseModel):
    database: str
    directory: str
    version: int | None
    dirty: bool
    applied: int
    total: int
    pending: list[Entry]
    unknown_version: bool
    ignored_down: list[str]


class UpResult(BaseModel):
    database: str
    directory: str
    applied_now: list[Applied]
    version: int | None
    unknown_version: bool


class VersionResult(BaseModel):
    database: str
    version: int | None
    dirty: bool


def _display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _entry(f: MigrationFile) -> Entry:
    return Entry(version=f.version, name=f.name, file=_display(f.path))


def force_commands(version: int, migrations: MigrationSet) -> dict[str, str]:
    """The exact repair for each case of a dirty version (`up` refuses a dirty version until `force`)."""
    prev = migrations.previous(version)
    return {
        "not_applied": f"framework db migrate force {prev if prev is not None else 'none'}",
        "applied": f"framework db migrate force {version}",
    }


def dirty_hint(version: int, migrations: MigrationSet) -> str:
    cmds = force_commands(version, migrations)
    return (f"if the migration applied not at all (or you reverted it): `{cmds['not_applied']}`, fix the file, "
            f"then `framework db migrate up`; if it applied partly and you completed it by hand: "
            f"`{cmds['applied']}`")


class Runner:
    """One connection to the database, with golang-migrate's table and lock."""

    def __init__(self, dsn: Dsn, table: str | None = None) -> None:
        self.dsn = dsn
        self.table = table or dsn.migrations_table
        self.conn: Any = None
        self.database = ""
        self.schema = ""

    def __enter__(self) -> Runner:
        self.conn = connect(self.dsn)
        row = self.conn.execute("SELECT current_database(), current_schema()").fetchone()
        self.database, self.schema = row[0], row[1] or "public"
        return self

    def __exit__(self, *exc: object) -> None:
        self.conn.close()

    @property
    def qualified(self) -> str:
        from psycopg import sql as psql

        return psql.SQL("{}.{}").format(psql.Identifier(self.schema), psql.Identifier(self.table)).as_string(self.conn)

    @property
    def lock_id(self) -> int:
        # The golang-migrate CLI names the database by the URL's path ("/app", slash included);
        # without one it asks the server (current_database()), as its WithInstance does.
        from urllib.parse import unquote

        return lock_id(unquote(self.dsn.parts.path) or self.database, self.schema, self.table)

    def lock(self) -> None:
        # Waits until the lock is free, as golang-migrate does: two `up`s run one after the other.
        self.conn.execute("SELECT pg_advisory_lock(%s)", (self.lock_id,))

    def unlock(self) -> None:
        self.conn.execute("SELECT pg_advisory_unlock(%s)", (self.lock_id,))

    def table_exists(self) -> bool:
        row = self.conn.execute(
            "SELECT count(1) FROM information_schema.tables WHERE table_schema = %s AND table_name = %s",
            (self.schema, self.table)).fetchone()
        return bool(row[0])

    def ensure_table(self) -> None:
        if not self.table_exists():
            self.conn.execute(f"CREATE TABLE IF NOT EXISTS {self.qualified} "
                              "(version bigint not null primary key, dirty boolean not null)")

    def state(self) -> tuple[int | None, bool]:
        if not self.table_exists():
            return None, False
        row = self.conn.execute(f"SELECT version, dirty FROM {self.qualified} LIMIT 1").fetchone()
        if row is None:
            return None, False
        version = None if row[0] == NIL_VERSION else int(row[0])
        return version, bool(row[1])

    def _write_version(self, version: int | None, dirty: bool) -> None:
        self.conn.execute(f"TRUNCATE {self.qualified}")
        if version is not None or dirty:
            self.conn.execute(f"INSERT INTO {self.qualified} (version, dirty) VALUES (%s, %s)",
                              (NIL_VERSION if version is None else version, dirty))

    def set_version(self, version: int | None, dirty: bool) -> None:
        """golang-migrate's SetVersion: truncate and insert in one transaction."""
        with self.conn.transaction():
            self._write_version(version, dirty)

    # -- applying one file ------------------------------------------------------------------

    def _version_sql(self, version: int | None, dirty: bool) -> str:
        """golang-migrate's SetVersion as SQL text (integers and booleans only: nothing to quote)."""
        text = f"TRUNCATE {self.qualified};"
        if version is not None or dirty:
            text += (f" INSERT INTO {self.qualified} (version, dirty) VALUES "
                     f"({NIL_VERSION if version is None else int(version)}, {'true' if dirty else 'false'});")
        return text

    def apply(self, f: MigrationFile, migrations: MigrationSet) -> Applied:
        import psycopg

        text = f.read()
        transactional = not (sql.may_need_no_transaction(text) and sql.needs_no_transaction(sql.split(text)))
        started = time.perf_counter()
        # The dirty mark, committed first (golang-migrate's rule); one multi-statement query is one
        # implicit transaction, so the mark and, below, the file with its clean mark are each all or nothing.
        self.conn.execute(self._version_sql(f.version, True))
        current: sql.Statement | None = None
        stmts: list[sql.Statement] = []
        try:
            if sql.is_empty(text):
                self.conn.execute(self._version_sql(f.version, False))
            elif transactional:
                # the file first, so the database's error positions are positions in the file
                self.conn.execute(f"{text}\n;{self._version_sql(f.version, False)}")
            else:
                stmts = sql.split(text)
                for current in stmts:
                    self.conn.execute(current.text)
                self.set_version(f.version, False)
        except psycopg.Error as exc:
            raise self._failure(f, text, stmts or sql.split(text), exc, transactional, current,
                                migrations) from exc
        return Applied(**_entry(f).model_dump(), milliseconds=round((time.perf_counter() - started) * 1000, 2),
                       transactional=transactional)

    def _locate(self, text: str, stmts: list[sql.Statement], exc: Any,
                current: sql.Statement | None) -> tuple[sql.Statement | None, int | None]:
        """The failing statement and line: from the error's position, else by replaying the
        statements one by one in a transaction that is rolled back."""
        import psycopg

        position = getattr(exc.diag, "statement_position", None)
        base = current.start if current is not None else 0
        if position:
            offset = base + int(position) - 1
            stmt = current or sql.statement_at(stmts, offset)
            return stmt, sql.line_of(text, offset)
        if current is not None:
            return current, current.line
        try:
            with self.conn.transaction():
                for s in stmts:
                    try:
                        self.conn.execute(s.text)
                    except psycopg.Error:
                        raise _Found(s) from None
                raise _Found(None)
        except _Found as found:
            return found.statement, found.statement.line if found.statement else None
        except psycopg.Error:
            return None, None

    def _failure(self, f: MigrationFile, text: str, stmts: list[sql.Statement], exc: Any, transactional: bool,
                 current: sql.Statement | None, migrations: MigrationSet) -> MigrationFailed:
        diag = exc.diag
        stmt, line = self._locate(text, stmts, exc, current)
        db_error = (diag.message_primary or str(exc)).strip()
        where = f"{_display(f.path)}:{line}" if line else _display(f.path)
        if transactional:
            applied = "none"
            state = "nothing of it was applied (the file ran in one transaction, rolled back)"
        elif current is not None and stmts and current is not stmts[0]:
            applied = "partly"
            state = "it applied partly (it cannot run in a transaction; statements before this one ran)"
        else:
            applied = "none"
            state = "nothing of it was applied (its first statement failed)"
        message = (f"migration {where} failed: {db_error} (SQLSTATE {diag.sqlstate})"
                   + (f"\n  statement: {sql.excerpt(stmt.text)}" if stmt else "")
                   + (f"\n  detail: {diag.message_detail}" if diag.message_detail else "")
                   + f"\n  the database is now dirty at version {f.version}; {state}")
        cmds = force_commands(f.version, migrations)
        if applied == "none":
            hint = (f"fix {_display(f.path)}, then `{cmds['not_applied']}` and `framework db migrate up` "
                    f"(or, if you apply its changes by hand instead: `{cmds['applied']}`)")
        else:
            hint = (f"repair the schema by hand: either undo what ran and `{cmds['not_applied']}`, "
                    f"or complete the rest and `{cmds['applied']}`")
        return MigrationFailed(message, version=f.version, file=_display(f.path), line=line,
                               statement=stmt.text.strip() if stmt else None, db_error=db_error,
                               sqlstate=diag.sqlstate, applied=applied, hint=hint, force_commands=cmds)


class _Found(Exception):
    def __init__(self, statement: sql.Statement | None) -> None:
        self.statement = statement


def _unknown(version: int | None, migrations: MigrationSet) -> bool:
    return version is not None and migrations.by_version(version) is None


def status(dsn: Dsn, migrations: MigrationSet) -> MigrationStatus:
    """Opens the database without migrating or waiting (no lock, no table created)."""
    with Runner(dsn) as r:
        version, dirty = r.state()
    pending = [f for f in migrations.files if version is None or f.version > version]
    return MigrationStatus(
        database=dsn.redacted, directory=_display(migrations.directory), version=version, dirty=dirty,
        applied=len(migrations.files) - len(pending), total=len(migrations.files),
        pending=[_entry(f) for f in pending], unknown_version=_unknown(version, migrations),
        ignored_down=migrations.ignored_down)


def version(dsn: Dsn) -> VersionResult:
    with Runner(dsn) as r:
        v, dirty = r.state()
    return VersionResult(database=dsn.redacted, version=v, dirty=dirty)


def up(dsn: Dsn, migrations: MigrationSet, on_applied: Callable[[Applied], None] | None = None,
       report: Reporter | None = None) -> UpResult:
    """Apply every pending file in version order under the advisory lock; a dirty version
    refuses until `force` (the dirty rule). `report` hears each pending file as it starts."""
    applied: list[Applied] = []
    with Runner(dsn) as r:
        r.lock()
        try:
            r.ensure_table()
            current, dirty = r.state()
            if dirty:
                raise DirtyDatabase(
                    f"the database is dirty at version {current if current is not None else 'none'}: a migration "
                    "failed or was interrupted, and `up` refuses until `framework db migrate force <version>` is run",
                    version=current if current is not None else NIL_VERSION,
                    hint=dirty_hint(current if current is not None else NIL_VERSION, migrations),
                    force_commands=force_commands(current if current is not None else NIL_VERSION, migrations))
            pending = [f for f in migrations.files if current is None or f.version > current]
            for f in tracked(report, "migrate", pending, lambda f: f.filename):
                done = r.apply(f, migrations)
                applied.append(done)
                if on_applied:
                    on_applied(done)
            final, _ = r.state()
        finally:
            if not r.conn.closed:
                r.unlock()
    return UpResult(database=dsn.redacted, directory=_display(migrations.directory), applied_now=applied,
                    version=final, unknown_version=_unknown(final, migrations))


def force(dsn: Dsn, target: int | None, migrations: MigrationSet) -> VersionResult:
    """Record `target` as the clean version without running SQL (`db migrate force`, docs/reference-db.md#commands)."""
    if target is not None and migrations.by_version(target) is None:
        raise DatabaseAuthoringError(
            f"no migration file has version {target} in {_display(migrations.directory)}",
            hint="force names a version of a file, or `none` for no version")
    with Runner(dsn) as r:
        r.lock()
        try:
            r.ensure_table()
            r.set_version(target, False)
        finally:
            r.unlock()
    return VersionResult(database=dsn.redacted, version=target, dirty=False)
