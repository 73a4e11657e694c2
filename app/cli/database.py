"""`framework db ...`: the project's database authoring (docs/reference-db.md).

Not `platform db` (the server's own store: app/cli/db.py). Sub-groups are built here from
app/registry.py's DB_* tables; seeds, reset, introspect and squash are in app/cli/database_more.py.
"""

from __future__ import annotations

from typing import Any

import typer

from app.cli import group_app
from app.cli.database_views import DIR_OPTION, DSN_OPTION, JSON_OPTION, examples, out, run, sub_app
from app.registry import DB_MIGRATE, DB_MIGRATION

app = group_app("framework", "db")

# -- db migrate ---------------------------------------------------------------------------------

migrate = sub_app(DB_MIGRATE)
app.add_typer(migrate, name="migrate")
MIGRATE_NOTE = ("Compatible with golang-migrate (schema_migrations table, advisory lock, dirty rule).\n"
                "Exit codes: 0 done; 1 dirty database, failed migration or unreachable database; 2 bad input.")


def _render_status(result: Any) -> None:
    version = "none" if result.version is None else str(result.version)
    out(f"database: {result.database}")
    out(f"version: {version}{' (dirty)' if result.dirty else ''}")
    out(f"applied: {result.applied} of {result.total} files in {result.directory}")
    for entry in result.pending:
        out(f"pending: {entry.version}_{entry.name}")
    if result.unknown_version:
        out(f"warning: version {version} is not among the files")
    if not result.pending and not result.dirty:
        out("current")


@migrate.command("status", help=DB_MIGRATE.commands["status"],
                 epilog=examples("framework db migrate status", "framework db migrate status --dsn "
                                 "postgresql://app@127.0.0.1/app --json", note=MIGRATE_NOTE))
def migrate_status(ctx: typer.Context, dsn: str | None = DSN_OPTION, directory: str | None = DIR_OPTION,
                   json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from engine.database import dsn as dsns
        from engine.database import files, runner
        from engine.database.authoring import migrations_dir

        target = dsns.resolve(dsn)
        assert target is not None
        return runner.status(target, files.load(migrations_dir(directory))), 0

    run(ctx, json_output, action, _render_status)


def _render_up(result: Any) -> None:
    for entry in result.applied_now:
        out(f"applied {entry.version}_{entry.name} ({entry.milliseconds:.0f} ms)")
    if not result.applied_now:
        out(f"already current (version {result.version if result.version is not None else 'none'})")
    if result.unknown_version:
        out(f"warning: version {result.version} is not among the files")


@migrate.command("up", help=DB_MIGRATE.commands["up"],
                 epilog=examples("framework db migrate up", "DATABASE_URL=postgresql://app@127.0.0.1/app "
                                 "framework db migrate up --json", note=MIGRATE_NOTE))
def migrate_up(ctx: typer.Context, dsn: str | None = DSN_OPTION, directory: str | None = DIR_OPTION,
               json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from app.progress import sink
        from engine.database import dsn as dsns
        from engine.database import files, runner
        from engine.database.authoring import migrations_dir

        target = dsns.resolve(dsn)
        assert target is not None
        migrations = files.load(migrations_dir(directory))
        # a bar on a terminal, silent in --json and pipes; the result lists what was applied either way
        with sink(json_output) as shown:
            return runner.up(target, migrations, report=shown.step), 0

    run(ctx, json_output, action, _render_up)


def _render_version(result: Any) -> None:
    out("none" if result.version is None else f"{result.version}{' (dirty)' if result.dirty else ''}")


@migrate.command("version", help=DB_MIGRATE.commands["version"],
                 epilog=examples("framework db migrate version", "framework db migrate version --json",
                                 note=MIGRATE_NOTE))
def migrate_version(ctx: typer.Context, dsn: str | None = DSN_OPTION, json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from engine.database import dsn as dsns
        from engine.database import runner

        target = dsns.resolve(dsn)
        assert target is not None
        return runner.version(target), 0

    run(ctx, json_output, action, _render_version)


@migrate.command("force", help=DB_MIGRATE.commands["force"],
                 epilog=examples("framework db migrate force 20250107101630", "framework db migrate force none",
                                 note="`none` (or -- -1) records no version. " + MIGRATE_NOTE))
def migrate_force(ctx: typer.Context, version: str = typer.Argument(..., help="A file's version, or none."),
                  dsn: str | None = DSN_OPTION, directory: str | None = DIR_OPTION,
                  json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from engine.database import dsn as dsns
        from engine.database import files, runner
        from engine.database.authoring import migrations_dir
        from engine.errors import UsageError

        if version.strip().lower() in ("none", "-1"):
            target_version = None
        elif version.strip().isdigit():
            target_version = int(version)
        else:
            raise UsageError(f"version {version!r} is not a number",
                             hint="e.g. framework db migrate force 20250107101630")
        target = dsns.resolve(dsn)
        assert target is not None
        return runner.force(target, target_version, files.load(migrations_dir(directory))), 0

    run(ctx, json_output, action, _render_version)


# -- db migration -------------------------------------------------------------------------------

migration = sub_app(DB_MIGRATION)
app.add_typer(migration, name="migration")


@migration.command("new", help=DB_MIGRATION.commands["new"],
                   epilog=examples("framework db migration new add_users",
                                   "framework db migration new add_orders --dsn postgresql://app@127.0.0.1/app"))
def migration_new(ctx: typer.Context, name: str = typer.Argument(..., help="What the migration does (snake_case)."),
                  dsn: str | None = typer.Option(None, "--dsn", help="Read the live schema for the context comments."),
                  directory: str | None = DIR_OPTION, json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from engine.database import dsn as dsns
        from engine.database.authoring import migrations_dir, new_migration

        return new_migration(name, migrations_dir(directory), dsns.parse(dsn) if dsn else None), 0

    run(ctx, json_output, action, lambda r: out(r.file))


def _render_rebase(result: Any) -> None:
    for move in result.moves:
        out(f"{'git mv' if move.git else 'moved'} {move.old} -> {move.new}")
    for name in result.unchanged:
        out(f"unchanged {name} (already after version {result.current_version})")
    if not result.moves and not result.unchanged:
        out("nothing to rebase")


@migration.command("rebase", help=DB_MIGRATION.commands["rebase"],
                   epilog=examples("framework db migration rebase db/migrations/20250101000000_add_x.up.sql",
                                   "framework db migration rebase --all-pending --dsn postgresql://app@127.0.0.1/app",
                                   note="Exit codes: 0 done; 1 refused (already on the default branch); 2 bad input."))
def migration_rebase(ctx: typer.Context, paths: list[str] = typer.Argument(None, help="Migration files to re-version."),
                     all_pending: bool = typer.Option(False, "--all-pending",
                                                      help="Every file not on the default branch."),
                     dsn: str | None = typer.Option(None, "--dsn", help="Current version from this database "
                                                    "(default: the newest version on the default branch)."),
                     base: str | None = typer.Option(None, "--base", help="Default branch (default: origin/HEAD, "
                                                     "main or master)."),
                     directory: str | None = DIR_OPTION, json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from engine.database import dsn as dsns
        from engine.database.authoring import migrations_dir, rebase

        return rebase(paths or [], all_pending, migrations_dir(directory), dsns.parse(dsn) if dsn else None, base), 0

    run(ctx, json_output, action, _render_rebase)


from app.cli.database_more import register  # noqa: E402 - the rest of the group, one module each

register(app)
