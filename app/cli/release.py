"""`framework release ...` (docs/reference-deploy.md#commands)."""

from __future__ import annotations

import sys
from typing import Any

import typer

from app.cli import group_app
from app.cli.options import JSON_OPTION
from app.registry import FRAMEWORK

app = group_app("framework", "release")
HELP = FRAMEWORK.groups["release"].commands


def _render_where(result: Any) -> None:
    if not result.cut:
        sys.stdout.write(f"release {result.version} was never cut here\n")
    if not result.environments:
        sys.stdout.write(f"release {result.version} is not bound to any environment\n")
    for row in result.environments:
        sys.stdout.write(f"{row['env']:<16} {row['promotion_id']}  by {row['who']}\n")


def _render_verify(result: Any) -> None:
    for c in result.checks:
        sys.stdout.write(f"{c.outcome:<13} {c.kind:<6} {c.workload:<12} {c.coordinate}  {c.detail}\n")
    if not result.checks:
        sys.stdout.write(f"release {result.version} has no artifacts\n")


def _render_list(result: Any) -> None:
    for r in result.releases:
        commit = (r.commit or "-")[:10] + ("+dirty" if r.dirty else "")
        sys.stdout.write(f"{r.version:<32} {commit:<16} {', '.join(r.workloads)}\n")
    if not result.releases:
        sys.stdout.write("no releases cut yet (framework env build <env> --release <version>)\n")


@app.command(
    "list",
    help=HELP["list"],
    epilog="Examples:\n\n  framework release list\n\n  framework release list --json\n\nExit codes: 0 listed.",
)
def release_list(json_output: bool = JSON_OPTION) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.project import find_project
        from engine.releases.store import release_list as listing

        return listing(find_project()), 0

    raise typer.Exit(run_command(json_output, action, _render_list))


@app.command(
    "where",
    help=HELP["where"],
    epilog=(
        "Examples:\n\n  framework release where v1.2.0\n\n  framework release where v1.2.0 --env prod --json\n\n"
        "Exit codes: 0 bound somewhere; 1 exists but unbound, or never cut; 2 ledger unreadable."
    ),
)
def release_where(
    version: str = typer.Argument(..., help="Release version."),
    env: str | None = typer.Option(None, "--env", help="Only this environment."),
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.ledger.bound import release_where as where
        from engine.project import find_project

        return where(find_project(), version, env)

    raise typer.Exit(
        run_command(
            json_output,
            action,
            _render_where,
            partial_error=lambda r: {
                "code": "unbound" if r.cut else "never_cut",
                "message": f"release {r.version} "
                + ("is not bound to any environment" if r.cut else "was never cut"),
            },
        )
    )


@app.command(
    "verify",
    help=HELP["verify"],
    epilog=(
        "Examples:\n\n  framework release verify v1.2.0\n\n  framework release verify v1.2.0 --strict --json\n\n"
        "Exit codes: 0 nothing failed; 1 at least one FAILED (or --strict with UNVERIFIABLE); 2 a check could "
        "not complete and nothing failed."
    ),
)
def release_verify(
    version: str = typer.Argument(..., help="Release version."),
    strict: bool = typer.Option(False, "--strict", help="UNVERIFIABLE counts as a failure."),
    timeout: float = typer.Option(10.0, "--timeout", help="Seconds per registry request."),
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.project import find_project
        from engine.releases.verify import verify

        return verify(find_project(), version, strict=strict, timeout=timeout)

    def why(r: Any) -> dict[str, Any]:
        bad = [c for c in r.checks if c.outcome in ("FAILED", "UNREACHABLE", "UNVERIFIABLE")]
        return {
            "code": "verify_failed",
            "message": "; ".join(f"{c.coordinate}: {c.outcome}" for c in bad[:5]),
        }

    raise typer.Exit(run_command(json_output, action, _render_verify, partial_error=why))
