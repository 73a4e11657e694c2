"""`framework project migrate import` (spec 3, Project / Database)."""

from __future__ import annotations

from typing import Any

import typer

from app.cli import group_app
from app.cli.database_views import JSON_OPTION, examples, out, run, sub_app
from app.registry import PROJECT_MIGRATE

app = group_app("framework", "project")
migrate = sub_app(PROJECT_MIGRATE)
app.add_typer(migrate, name="migrate")


def _render_import(result: Any) -> None:
    for item in result.imported:
        out(f"{item.source} -> {', '.join(item.files)}" + ("  (NO TRANSACTION)" if item.no_transaction else ""))
    for item in result.skipped:
        out(f"skipped {item.file}: {item.reason}")


@migrate.command("import", help=PROJECT_MIGRATE.commands["import"], epilog=examples(
    "framework project migrate import --from goose --src-dir old/migrations --dest-dir db/migrations",
    "framework project migrate import --from goose --src-dir old --dest-dir db/migrations --json",
    note="StatementBegin/StatementEnd blocks stay one statement; a NO TRANSACTION file becomes one file per "
         "statement. Exit codes: 0 imported; 1 unreadable sources; 2 bad input."))
def migrate_import(ctx: typer.Context, source: str = typer.Option(..., "--from", help="The tool: goose."),
                   src_dir: str = typer.Option(..., "--src-dir", help="The tool's migrations."),
                   dest_dir: str = typer.Option(..., "--dest-dir", help="Where .up.sql files are written."),
                   json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from pathlib import Path

        from engine.database.goose import import_goose
        from engine.errors import UsageError

        if source != "goose":
            raise UsageError(f"--from {source!r}: only goose is supported")
        return import_goose(Path(src_dir), Path(dest_dir)), 0

    run(ctx, json_output, action, _render_import)
