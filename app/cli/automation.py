"""`platform automation ...` (docs/reference-webhooks.md#commands): automations around a workflow, their
delivery history."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from app.cli import group_app
from app.cli.options import JSON_OPTION
from app.registry import PLATFORM

app = group_app("platform", "automation")
HELP = PLATFORM.groups["automation"].commands
SERVER_NOTE = "\n\n  The server is PLATFORM_SERVER_URL; the API token is PLATFORM_TOKEN."
LIMIT_OPTION = typer.Option(50, "--limit", min=1, max=1000, help="Newest deliveries to show.")
BEFORE_OPTION = typer.Option(None, "--before", help="Older page: the previous page's next_before.")


def run_history(automation: str, trigger: str | None, limit: int, before: str | None, json_output: bool) -> int:
    """`automation history` and `trigger history`: one page of deliveries through the server's cursor."""
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.hooks.client import history as fetch

        return fetch(automation, trigger, limit, before), 0

    return run_command(json_output, action, render_history)


def render_history(result: Any) -> None:
    from rich.table import Table

    from app.output import stdout_console

    if not result.deliveries:
        print(f"no deliveries for {result.automation}" + (f" / {result.trigger}" if result.trigger else ""))
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("RECEIVED", "TRIGGER", "STATUS", "OUTCOME", "AUTH", "RUN", "DETAIL"):
        table.add_column(column)
    for d in result.deliveries:
        run = f"{d.run.id} {d.run.status}" if d.run else "-"
        detail = d.detail or (f"retry of {d.duplicate_of}" if d.duplicate_of else "")
        table.add_row(
            d.received_at, d.trigger, str(d.status_code), d.outcome, d.auth_method or "-", run, detail
        )
    stdout_console().print(table)
    if result.next_before:
        print(f"older deliveries: --before {result.next_before}")


def _render_list(result: Any) -> None:
    if not result.automations:
        print("no automations; create one with: platform automation create <name> --workflow <file.yaml>")
        return
    for a in result.automations:
        print(f"{a.name}  workflow={a.workflow_name}  triggers={len(a.triggers)}")
        for t in a.triggers:
            state = "enabled" if t.enabled else "disabled"
            state += "" if t.activated else " (not activated)"
            print(f"  {t.name}  {state}  {t.url or '-'}")


@app.command(
    "create",
    help=HELP["create"],
    epilog="Examples:\n\n  platform automation create triage --workflow workflows/triage.yaml" + SERVER_NOTE,
)
def create(
    name: str = typer.Argument(..., help="Automation name."),
    workflow: Path = typer.Option(..., "--workflow", help="Workflow YAML file the runs execute."),
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.errors import EngineError
        from engine.hooks.client import create_automation

        try:
            source = workflow.read_text()
        except OSError as exc:
            raise EngineError(
                f"cannot read workflow {workflow}: {exc.strerror}", code="usage", exit_code=2
            ) from None
        return create_automation(name, source), 0

    raise typer.Exit(
        run_command(
            json_output, action, lambda a: print(f"created automation {a.name} (workflow {a.workflow_name})")
        )
    )


@app.command("list", help=HELP["list"], epilog="Examples:\n\n  platform automation list --json" + SERVER_NOTE)
def list_(json_output: bool = JSON_OPTION) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.hooks.client import list_automations

        return list_automations(), 0

    raise typer.Exit(run_command(json_output, action, _render_list))


@app.command(
    "history",
    help=HELP["history"],
    epilog="Examples:\n\n  platform automation history triage\n\n  platform automation history triage "
    "--limit 200 --json" + SERVER_NOTE,
)
def history(
    automation: str = typer.Argument(..., help="Automation name."),
    limit: int = LIMIT_OPTION,
    before: str | None = BEFORE_OPTION,
    json_output: bool = JSON_OPTION,
) -> None:
    raise typer.Exit(run_history(automation, None, limit, before, json_output))
