"""`platform runs ...`: the recorded runs the dashboard's Runs screen shows (same engine calls)."""

from __future__ import annotations

import time
from typing import Any

import typer

from app.cli import group_app
from app.cli.options import JSON_OPTION
from app.registry import PLATFORM

app = group_app("platform", "runs")
HELP = PLATFORM.groups["runs"].commands


def _when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)) if ts else "-"


def _render_list(page: Any) -> None:
    from rich.table import Table

    from app.output import stdout_console

    console = stdout_console()
    if not page.runs:
        console.print(f"no runs recorded under {page.home} (start one with: platform run <workflow>)")
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("ID", "WORKFLOW", "STATUS", "STEPS", "TOOL CALLS", "STARTED"):
        table.add_column(column)
    for run in page.runs:
        table.add_row(run.id, run.workflow, run.status, str(run.steps), str(run.tool_calls), _when(run.started_at))
    console.print(table)
    if page.next_before:
        console.print(f"more: platform runs list --before {page.next_before}")


@app.command("list", help=HELP["list"],
             epilog="Examples:\n\n  platform runs list\n\n  platform runs list --limit 20 --json\n\n"
                    "  platform runs list --before <next_before>")
def runs_list(
    limit: int = typer.Option(50, "--limit", min=1, help="Runs per page."),
    before: str = typer.Option("", "--before", help="Cursor: the previous page's next_before."),
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.runs.store import list_runs

        return list_runs(limit=limit, before=before), 0

    raise typer.Exit(run_command(json_output, action, _render_list))


def _render_show(result: dict[str, Any]) -> None:
    from app.cli.run import print_step
    from engine.runs.records import RunStep

    run = result["run"]
    print(f"run {run['id']}  workflow {run['workflow']}  status {run['status']}  started {_when(run['started_at'])}")
    for step in run["steps"]:
        print_step(RunStep.model_validate(step))
    if run.get("plan"):
        print(f"plan: {run['plan'].get('title') or run['plan'].get('name') or ''}".rstrip())
    for task in run.get("tasks") or []:
        print(f"  [{task.get('status', '?')}] {task.get('title') or task.get('content') or task.get('id')}")
    if run.get("error"):
        print(f"error: {run['error']}")


@app.command("show", help=HELP["show"],
             epilog="Examples:\n\n  platform runs show run-20261121-200102-1a2b3c\n\n  platform runs show <id> --json")
def runs_show(run_id: str = typer.Argument(..., metavar="RUN_ID"), json_output: bool = JSON_OPTION) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.runs.store import load_run

        return {"run": load_run(run_id).model_dump(mode="json")}, 0

    raise typer.Exit(run_command(json_output, action, _render_show))
