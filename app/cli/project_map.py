"""`framework project map` and `framework project audit` (docs/reference-project.md#project-map,
docs/reference-project.md#project-audit): `commands`, merged into the `project` group by app/cli/project.py."""

from __future__ import annotations

from typing import Any

import typer

from app.cli.database_views import JSON_OPTION, examples, out, wants_json
from app.registry import FRAMEWORK

HELP = FRAMEWORK.groups["project"].commands
commands = typer.Typer(add_completion=False, pretty_exceptions_enable=False)

@commands.command("map", help=HELP["map"], epilog=examples(
    "framework project map", "framework project map --depth 2", "framework project map --filter drifted,disowned",
    "framework project map --filter 'internal/*' --json",
    note="Ownerships: user, generated (forge space: rewritten by framework generate), scaffold (scaffold-once, "
         "yours from birth), drifted (a generated file edited by hand or deleted), disowned. Exit codes: 0 mapped; "
         "1 not a project or its records do not read; 2 bad --depth or --filter."))
def project_map(ctx: typer.Context,
                depth: int | None = typer.Option(None, "--depth", help="Entries this deep at most (1: top level)."),
                filter_: str | None = typer.Option(None, "--filter",
                                                   help="Ownerships (user,generated,scaffold,drifted,disowned) or "
                                                        "path globs, comma-separated."),
                json_output: bool = JSON_OPTION) -> None:
    from app.cli.project_map_ops import execute

    raise typer.Exit(execute(depth, filter_, wants_json(ctx, json_output)))


def render_audit(report: Any) -> None:
    for category in report.categories:
        out(f"{category.status.upper():8} {category.name}: {category.summary}")
        for f in category.findings:
            where = f"{f.file}:{f.line}" if f.file and f.line else (f.file or "")
            out(f"    {f.severity:7} {where + ': ' if where else ''}{f.message}")
    out(f"{report.errors} errors, {report.warnings} warnings")


@commands.command("audit", help=HELP["audit"], epilog=examples(
    "framework project audit", "framework project audit --json", "framework project audit --no-lint",
    note="Categories: drift, orphaned-handlers, migrations-entities, disowned (info), version-pin, lint; each ok, "
         "warning, error or skipped. Exit codes: 0 no category reports an error (warnings never gate); 1 a "
         "category reports an error, or not a project."))
def project_audit(ctx: typer.Context,
                  no_lint: bool = typer.Option(False, "--no-lint", help="Leave the lint summary out (skipped)."),
                  json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from engine.inspection.audit import audit
        from engine.project import find_project

        report = audit(find_project(), lint=not no_lint)
        return report, report.exit_code

    def failed(report: Any) -> dict[str, Any]:
        bad = [c.name for c in report.categories if c.status == "error"]
        return {"code": "audit_failed", "message": f"{report.errors} errors in {', '.join(bad)}",
                "hint": "each category names the command that shows or fixes it"}

    from app.output import run_command

    raise typer.Exit(run_command(wants_json(ctx, json_output), action, render_audit, partial_error=failed))
