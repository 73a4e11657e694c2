"""`platform db migrate status|up` (docs/reference-webhooks.md#commands)."""

from __future__ import annotations

from typing import Any

import typer

from app.cli import group_app
from app.cli.options import JSON_OPTION
from app.registry import PLATFORM

app = group_app("platform", "db")
HELP = PLATFORM.groups["db"].commands
migrate = typer.Typer(
    help=HELP["migrate"],
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(migrate, name="migrate")

ENV_NOTE = "\n\n  DATABASE_URL is required; DATABASE_DRIVER (postgres or sqlite) is optional."


def _render_status(result: Any) -> None:
    print(f"database: {result.database}")
    print(f"applied: {result.applied} of {result.embedded} embedded migrations")
    for m in result.missing:
        print(f"missing: {m.version}_{m.name}")
    for v in result.unknown:
        print(f"unknown (applied, not embedded in this build): {v}")
    if not result.missing:
        print("current")


def _render_up(result: Any) -> None:
    for m in result.applied_now:
        print(f"applied {m.version}_{m.name}")
    if not result.applied_now:
        print(f"already current ({result.applied} applied)")


@migrate.command(
    "status",
    help="Report how many migrations are applied and list the missing ones "
    "(opens the database without migrating or waiting).",
    epilog="Examples:\n\n  DATABASE_URL=postgresql://app@db/platform platform db migrate status"
    "\n\n  platform db migrate status --json" + ENV_NOTE,
)
def migrate_status(json_output: bool = JSON_OPTION) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.serverstore.commands import migrate_status as run

        return run(), 0

    raise typer.Exit(run_command(json_output, action, _render_status))


@migrate.command(
    "up",
    help="Apply every pending embedded migration, then exit (exit 0 when already current; safe to re-run).",
    epilog="Examples:\n\n  DATABASE_URL=postgresql://app@db/platform platform db migrate up"
    "\n\n  platform db migrate up --json" + ENV_NOTE,
)
def migrate_up(json_output: bool = JSON_OPTION) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from app.progress import sink
        from engine.serverstore.commands import migrate_up as run

        with sink(json_output) as shown:  # a bar on a terminal; silent in --json and pipes
            return run(shown.step), 0

    raise typer.Exit(run_command(json_output, action, _render_up))
