"""Typed errors of database authoring, with their exit codes (docs/reference-db.md)."""

from __future__ import annotations

from engine.errors import EngineError


class DatabaseAuthoringError(EngineError):
    """The database cannot be reached or does not hold what a command needs."""

    code = "database_error"


class DirtyDatabase(EngineError):
    """The dirty rule: `db migrate up` fails on a dirty version until `db migrate force <version>` is run."""

    code = "dirty"

    def __init__(self, message: str, *, version: int, hint: str | None = None,
                 force_commands: dict[str, str] | None = None) -> None:
        super().__init__(message, hint=hint)
        self.version = version
        self.force_commands = force_commands or {}

    def to_dict(self) -> dict[str, object]:
        doc = super().to_dict()
        doc["version"] = self.version
        doc["force_commands"] = self.force_commands
        return doc


class MigrationFailed(DirtyDatabase):
    """A migration file failed: the file, line, statement and the database's error."""

    code = "migration_failed"

    def __init__(self, message: str, *, version: int, file: str, line: int | None, statement: str | None,
                 db_error: str, sqlstate: str | None, applied: str, hint: str | None = None,
                 force_commands: dict[str, str] | None = None) -> None:
        super().__init__(message, version=version, hint=hint, force_commands=force_commands)
        self.file = file
        self.line = line
        self.statement = statement
        self.db_error = db_error
        self.sqlstate = sqlstate
        self.applied = applied

    def to_dict(self) -> dict[str, object]:
        doc = super().to_dict()
        doc.update(file=self.file, line=self.line, statement=self.statement, db_error=self.db_error,
                   sqlstate=self.sqlstate, applied=self.applied)
        return doc


class Refused(EngineError):
    """A guarded command refused to run (dev only, wrong DSN, pending migrations, default branch...)."""

    code = "refused"
