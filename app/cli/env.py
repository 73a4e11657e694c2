"""`framework env ...` (spec 2, framework env)."""

from __future__ import annotations

from typing import Any

import typer

from app.cli import group_app
from app.registry import FRAMEWORK

app = group_app("framework", "env")
HELP = FRAMEWORK.groups["env"].commands

JSON_OPTION = typer.Option(False, "--json", help="Print one JSON document (ok, exit_code, error, payload).")


def _render_env_list(result: Any) -> None:
    from rich.table import Table

    from app.output import stdout_console

    console = stdout_console()
    if not result.environments:
        console.print(f"no environments declared under {result.root}/deploy/kcl/<env>/main.k")
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("NAME", "KIND", "TARGET", "WORKLOADS", "FILE"):
        table.add_column(column)
    for env in result.environments:
        if env.error:
            table.add_row(env.name, "[red]error[/]", "-", "-", env.file)
        else:
            table.add_row(env.name, env.kind or "-", env.target or "-", ", ".join(env.workloads) or "-", env.file)
    console.print(table)
    from app.output import diagnose

    for env in result.failed:
        diagnose(str((env.error or {}).get("message")), label=f"error in {env.name}")


def _env_list_error(result: Any) -> dict[str, Any]:
    failed = result.failed
    return {
        "code": "kcl_error",
        "message": f"{len(failed)} of {len(result.environments)} environments failed to evaluate: "
                   + ", ".join(env.name for env in failed),
    }


@app.command("list", help=HELP["list"], epilog="Examples:\n\n  framework env list\n\n  framework env list --json")
def env_list(json_output: bool = JSON_OPTION) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.environments import list_environments
        from engine.project import find_project

        result = list_environments(find_project())
        return result, (1 if result.failed else 0)

    raise typer.Exit(run_command(json_output, action, _render_env_list, partial_error=_env_list_error))
