"""`framework project shapes`, `project graph` and `project delete service` (docs/reference-project.md)."""

from __future__ import annotations

from typing import Any

import typer

from app.cli.database_views import JSON_OPTION, examples, out, run, sub_app
from app.registry import FRAMEWORK, PROJECT_DELETE

HELP = FRAMEWORK.groups["project"].commands
app = typer.Typer()  # its commands are added to the `project` group by register()
delete = sub_app(PROJECT_DELETE)


def register(project: typer.Typer) -> None:
    """Add shapes, graph and the `delete` group to the `project` group (app/cli/project.py)."""
    project.registered_commands += app.registered_commands
    project.add_typer(delete, name="delete")


@app.command("shapes", help=HELP["shapes"], epilog=examples(
    "framework project shapes", "framework project shapes --kind rpc,handler --grep Order",
    "framework project shapes --kind table --json",
    note="Kinds: rpc, message, enum (the protos, through buf's descriptor), table (the migrations' CREATE TABLE), "
         "handler (methods of internal/handlers/<svc>'s Handler), hook (a webhook's Handle, a worker's Run and "
         "Tick). --grep searches name and detail (a Python regular expression). Exit codes: 0 listed; 1 the "
         "protos do not compile; 2 bad --kind or --grep, or Go is missing."))
def shapes(ctx: typer.Context,
           grep: str | None = typer.Option(None, "--grep", help="A regular expression over name and detail."),
           kind: list[str] = typer.Option([], "--kind", help="Kinds to list (comma-separated or repeated)."),
           json_output: bool = JSON_OPTION) -> None:
    from app.cli.database_views import wants_json
    from app.cli.project_shapes_ops import execute

    raise typer.Exit(execute(grep, kind, wants_json(ctx, json_output)))


@app.command("graph", help=HELP["graph"], epilog=examples(
    "framework project graph", "framework project graph --env dev",
    note="Always JSON (one document; --json is accepted). Dangling references (a workload naming nothing of the "
         "project, an entity without a table, a webhook of an unknown service) are in `warnings` and never "
         "change the exit code. Exit codes: 0 printed; 1 an unknown --env or protos that do not compile."))
def graph(ctx: typer.Context, env: str | None = typer.Option(None, "--env", help="Only this environment."),
          json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from engine.inspection.graph import project_graph
        from engine.project import find_project

        return project_graph(find_project(), env), 0

    run(ctx, True, action, lambda _r: None)


@delete.command("service", help=PROJECT_DELETE.commands["service"], epilog=examples(
    "framework project delete service billing --dry-run", "framework project delete service billing --json",
    note="Refused while something depends on the service (a frontend calling its client, another service or a "
         "package importing its Connect client, a webhook of it). Exit codes: 0 deleted (or listed with "
         "--dry-run); 1 refused, unknown service, or generation failed (the checkout is left as it was)."))
def delete_service(ctx: typer.Context, name: str = typer.Argument(..., help="The service (its framework.yaml name)."),
                   dry_run: bool = typer.Option(False, "--dry-run", help="List the changes; write nothing."),
                   json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from engine.inspection.delete import delete_service as run_delete
        from engine.project import find_project

        return run_delete(find_project(), name, dry_run=dry_run), 0

    def human(result: Any) -> None:
        for f in result.files:
            out(f"{f['change']:8} {f['path']}")
        out(f"{'would delete' if result.dry_run else 'deleted'} service {name} (its proto is a types-only tombstone)")

    run(ctx, json_output, action, human)
