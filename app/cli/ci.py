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


@app.command("migration-safety", help=HELP["migration-safety"], epilog=(
    "Examples:\n\n  framework ci migration-safety\n\n  framework ci migration-safety --since origin/main"
    "\n\n  framework ci migration-safety db/migrations/2025*.up.sql --json"
    "\n\nExit codes: 0 no error-level finding; 1 an error-level finding (warnings never gate); 2 bad input."))
def migration_safety(paths: list[str] = typer.Argument(None, help="Files to check (default: db/migrations/*.up.sql)."),
                     since: str | None = typer.Option(None, "--since", help="Only migrations added or changed "
                                                      "since this git revision (e.g. origin/main)."),
                     json_output: bool = typer.Option(False, "--json", help="Print one JSON document.")) -> None:
    from app.cli.database_views import render_safety, safety_error
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.database.safety import run

        report = run(paths or [], since)
        return report, (1 if report.errors else 0)

    raise typer.Exit(run_command(json_output, action, render_safety, partial_error=safety_error))


def _render_verify(result: Any) -> None:
    import sys

    for f in result.findings:
        sys.stdout.write(f"{f.path}: {f.check}: {f.problem}\n")
    for note in result.notes:
        sys.stdout.write(f"note: {note}\n")
    sys.stdout.write(f"{result.checked} generated files checked, {len(result.findings)} findings "
                     f"(commit policy: {result.policy})\n")


@app.command("verify-generated", help=HELP["verify-generated"], epilog=(
    "Examples:\n\n  framework ci verify-generated\n\n  framework ci verify-generated --json"
    "\n\nChecks: every generated file's framework:hash marker matches its content; regenerating in a temporary "
    "copy changes nothing; framework.yaml generate.commit (true: generated files tracked by git; false: ignored) "
    "holds. Exit codes: 0 clean; 1 any finding (each offending file is named)."))
def verify_generated(json_output: bool = typer.Option(False, "--json", help="Print one JSON document.")) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.authoring.verify import verify_generated as verify
        from engine.project import find_project

        result = verify(find_project())
        return result, (1 if result.findings else 0)

    def error(result: Any) -> dict[str, Any]:
        return {"code": "generated_files_invalid",
                "message": f"{len(result.findings)} generated-file findings: "
                           + ", ".join(sorted({f.path for f in result.findings}))}

    raise typer.Exit(run_command(json_output, action, _render_verify, partial_error=error))
