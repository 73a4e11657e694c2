"""`framework ci ...` (spec 2, framework ci and doctor)."""

from __future__ import annotations

from typing import Any

import typer

from app.cli import group_app
from app.registry import FRAMEWORK

app = group_app("framework", "ci")
HELP = FRAMEWORK.groups["ci"].commands


def _render_validation(result: Any) -> None:
    from app.output import stdout_console

    console = stdout_console()
    for env in result.environments:
        if env.status == "ok":
            console.print(f"ok     {env.env} ({env.runtime}, {env.objects} objects)", markup=False)
        else:
            console.print(f"error  {env.env}: {(env.error or {}).get('message')}", markup=False)


def _validation_error(result: Any) -> dict[str, Any]:
    failed = result.failed
    return {
        "code": "kcl_invalid",
        "message": f"{len(failed)} of {len(result.environments)} environments do not "
        f"render deployable manifests: {', '.join(e.env for e in failed)}",
    }


@app.command(
    "validate-kcl",
    help=HELP["validate-kcl"],
    epilog=("Examples:\n\n  framework ci validate-kcl\n\n  framework ci validate-kcl --json"),
)
def validate_kcl(json_output: bool = typer.Option(False, "--json", help="Print one JSON document.")) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.environments.render.validate import validate_kcl as validate
        from engine.project import find_project

        result = validate(find_project())
        return result, (1 if result.failed else 0)

    raise typer.Exit(run_command(json_output, action, _render_validation, partial_error=_validation_error))
