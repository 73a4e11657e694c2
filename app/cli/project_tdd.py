"""`framework project migrate tdd` (docs/reference-project.md#project-migrate-tdd): `commands`, merged into the
`project migrate` group by app/cli/project.py."""

from __future__ import annotations

from typing import Any

import typer

from app.cli.database_views import JSON_OPTION, examples, out
from app.registry import PROJECT_MIGRATE

commands = typer.Typer(add_completion=False, pretty_exceptions_enable=False)


def render(result: Any) -> None:
    """The diff of each rewritten file (dry run or not), then one line per file: rewritten, skipped (why)."""
    import sys

    for item in result.files:
        if item.diff:
            sys.stdout.write(item.diff)
    for item in result.files:
        if item.status == "skipped":
            where = f"{item.path}:{item.line}" if item.line else item.path
            out(f"skipped    {where}: {item.reason}")
        elif item.status == "rewritten":
            out(f"{'would rewrite' if result.dry_run else 'rewritten':10} {item.path}")
            for change in item.changes:
                out(f"    {change}")
    if not result.files:
        out("no hand-written handler tests in scope")
        return
    unchanged = sum(1 for f in result.files if f.status == "unchanged")
    out(f"{len(result.rewritten)} {'to rewrite' if result.dry_run else 'rewritten'}, {unchanged} unchanged "
        f"(nothing to move), {len(result.skipped)} left alone")


@commands.command("tdd", help=PROJECT_MIGRATE.commands["tdd"], epilog=examples(
    "framework project migrate tdd --dry-run", "framework project migrate tdd",
    "framework project migrate tdd --path internal/handlers/order", "framework project migrate tdd --json",
    note="Hand-rolled handler tests (a Handler built by hand and called directly, or served on a test server of "
         "their own) move onto the generated harness (NewHarness, NewHarnessFor); comments and assertions stay. "
         "--dry-run prints the unified diff of each file and writes nothing. Exit codes: 0 every file in scope "
         "is on the harness; 1 files left alone (each listed with its reason), or no descriptor cache; 2 bad "
         "--path, or the Go toolchain missing."))
def tdd(ctx: typer.Context,
        dry_run: bool = typer.Option(False, "--dry-run", help="Print the diff of each file; write nothing."),
        path: str | None = typer.Option(None, "--path", help="Only this directory or _test.go file."),
        json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from engine.codemods.tdd import exit_code, migrate_tdd
        from engine.project import find_project

        result = migrate_tdd(find_project(), path=path, dry_run=dry_run)
        return result, exit_code(result)

    from app.cli.database_views import wants_json
    from app.output import run_command

    raise typer.Exit(run_command(wants_json(ctx, json_output), action, render, partial_error=_left_alone))


def _left_alone(result: Any) -> dict[str, Any]:
    n = len(result.skipped)
    return {"code": "files_left_alone", "message": f"{n} file{'s' if n != 1 else ''} left alone (reasons above)",
            "hint": "rewrite them by hand onto NewHarness / NewHarnessFor, or fix what the reason names"}
