"""`framework gate ...` (docs/reference-deploy.md#commands)."""

from __future__ import annotations

import sys
from typing import Any

import typer

from app.cli import group_app
from app.cli.options import JSON_OPTION
from app.registry import FRAMEWORK

app = group_app("framework", "gate")
HELP = FRAMEWORK.groups["gate"].commands


def _render_record(r: Any) -> None:
    for g in r.recorded:
        sys.stdout.write(f"recorded {g.name} {g.status} on {r.env} ({r.promotion_id}, release {r.release})\n")
    for g in r.already_recorded:
        sys.stdout.write(f"already recorded {g.name} (run {g.run_id}) on {r.promotion_id}\n")


@app.command(
    "record",
    help=HELP["record"],
    epilog=(
        "Examples:\n\n  framework gate record dev --name smoke --status passed --summary '12 routes'\n\n"
        "  framework gate record dev --from smoke.json --release v1.2.0\n\n"
        "Exit codes: 0 recorded (a failed gate too); 1 invalid input or nothing to record against; "
        "3 the environment moved on from --promotion/--release."
    ),
)
def gate_record(
    env: str = typer.Argument(..., help="Environment name."),
    from_file: str | None = typer.Option(
        None, "--from", help="Gate-shaped JSON or any --json output ('-': stdin)."
    ),
    name: str | None = typer.Option(None, "--name", help="Check name."),
    status: str | None = typer.Option(None, "--status", help="passed, failed, skipped, error or pending."),
    summary: str | None = typer.Option(None, "--summary", help="One-line summary."),
    run_id: str | None = typer.Option(
        None, "--run-id", help="Run id (default: CI run id and attempt, else 'local')."
    ),
    promotion: str | None = typer.Option(None, "--promotion", help="Refuse (exit 3) unless this is current."),
    release: str | None = typer.Option(
        None, "--release", help="Refuse (exit 3) unless this release is current."
    ),
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.deploy.gates import record
        from engine.project import find_project

        return record(
            find_project(),
            env,
            from_file=from_file,
            name=name,
            status=status,
            summary=summary,
            run_id=run_id,
            promotion=promotion,
            release=release,
        ), 0

    raise typer.Exit(run_command(json_output, action, _render_record))


def _render_one(r: Any) -> None:
    if r.promotion_id is None:
        sys.stdout.write(f"{r.env} has no promotion\n")
        return
    sys.stdout.write(f"{r.env} {r.promotion_id} (release {r.release})\n")
    for g in r.gates:
        when = "promote" if g.at_promote else "later"
        sys.stdout.write(f"  {g.name:<16} {g.status:<8} {when:<8} {g.run_id:<12} {g.summary}\n")


def _render_list(r: Any) -> None:
    for one in getattr(r, "environments", [r]):
        _render_one(one)
    for s in getattr(r, "skipped", []):
        sys.stderr.write(f"{s.env}: skipped ({s.reason})\n")


@app.command(
    "list",
    help=HELP["list"],
    epilog=(
        "Without an environment: every declared environment's current gates (JSON: `environments`, "
        "a list of the one-environment documents, and `skipped`).\n\n"
        "Examples:\n\n  framework gate list\n\n  framework gate list dev\n\n  framework gate list dev --json"
    ),
)
def gate_list(
    env: str | None = typer.Argument(None, help="Environment name (default: every environment)."),
    promotion: str | None = typer.Option(None, "--promotion", help="Default: the current promotion."),
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.deploy.gates import list_all_gates, list_gates
        from engine.project import find_project

        if env is None:
            return list_all_gates(find_project(), promotion), 0
        return list_gates(find_project(), env, promotion), 0

    raise typer.Exit(run_command(json_output, action, _render_list))
