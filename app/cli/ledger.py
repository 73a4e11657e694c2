"""`framework ledger ...` (docs/reference-deploy.md#commands)."""

from __future__ import annotations

import sys
from typing import Any

import typer

from app.cli import group_app
from app.cli.options import JSON_OPTION
from app.registry import FRAMEWORK

app = group_app("framework", "ledger")
HELP = FRAMEWORK.groups["ledger"].commands


@app.command(
    "show",
    help=HELP["show"],
    epilog="Examples:\n\n  framework ledger show\n\n  framework ledger show dev --json",
)
def ledger_show(
    env: str | None = typer.Argument(None, help="Only this environment."),
    limit: int = typer.Option(50, "--limit", help="At most this many rows per table."),
    json_output: bool = JSON_OPTION,
) -> None:
    from app.cli.ledger_show_ops import run

    raise typer.Exit(run(env, limit, json_output))


@app.command(
    "where",
    help=HELP["where"],
    epilog="Examples:\n\n  framework ledger where dev\n\n  framework ledger where prod --json",
)
def ledger_where(
    env: str = typer.Argument(..., help="Environment name."), json_output: bool = JSON_OPTION
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.ledger.transfer import where
        from engine.project import find_project

        return where(find_project(), env), 0

    raise typer.Exit(
        run_command(
            json_output,
            action,
            lambda r: sys.stdout.write(
                f"{r.env}: {r.backend} ledger at {r.location}\n  chosen by {r.declaration}\n"
            ),
        )
    )


@app.command(
    "export",
    help=HELP["export"],
    epilog="Examples:\n\n  framework ledger export --dir /tmp/ledger\n\n"
    "  framework ledger export --dir /tmp/ledger --env dev",
)
def ledger_export(
    directory: str = typer.Option(..., "--dir", help="Directory to write <env>.jsonl files into."),
    env: str | None = typer.Option(None, "--env", help="Only this environment."),
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.ledger.transfer import export
        from engine.project import find_project

        return export(find_project(), directory, env), 0

    raise typer.Exit(
        run_command(
            json_output,
            action,
            lambda r: sys.stdout.write(
                "".join(f"{e}: {n} promotion(s) -> {r.dir}/{e}.jsonl\n" for e, n in r.files.items())
                or "nothing to export\n"
            ),
        )
    )


def _render_import(r: Any) -> None:
    sys.stdout.write(f"source {r.source}" + ("" if r.applied else " (dry run: pass --apply to write)") + "\n")
    for e in r.environments:
        state = e.refused or (f"{e.imported} imported" if r.applied else f"{e.imported} would be imported")
        sys.stdout.write(f"  {e.env:<12} {e.found} found, {e.already_present} already present: {state}\n")


@app.command(
    "import",
    help=HELP["import"],
    epilog=(
        "Examples:\n\n  framework ledger import --from-git\n\n"
        "  framework ledger import --from-git --rev main --apply\n\n"
        "  framework ledger import --from-file-ledger /tmp/ledger --apply"
    ),
)
def ledger_import(
    from_git: bool = typer.Option(False, "--from-git", help="Read committed .framework/promotions history."),
    rev: str = typer.Option("origin/main", "--rev", help="Revision to read with --from-git."),
    from_file_ledger: str | None = typer.Option(None, "--from-file-ledger", help="Directory of <env>.jsonl."),
    apply: bool = typer.Option(False, "--apply", help="Write (default: dry run)."),
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.ledger.transfer import import_ledger
        from engine.project import find_project

        r = import_ledger(
            find_project(), from_git=from_git, rev=rev, file_ledger=from_file_ledger, apply=apply
        )
        return r, (1 if any(e.refused for e in r.environments) else 0)

    raise typer.Exit(
        run_command(
            json_output,
            action,
            _render_import,
            partial_error=lambda r: {
                "code": "import_refused",
                "message": "; ".join(e.refused for e in r.environments if e.refused),
            },
        )
    )


def _render_timeline(t: Any) -> None:
    state = "in flight" if t.in_flight else (t.outcome or t.phase)
    sys.stdout.write(f"{t.env}: release {t.release}, promotion {t.promotion_id or '-'}, {state}, "
                     f"{t.duration:g}s\n")
    if not t.workloads:
        sys.stdout.write("no phase records for this rollout (applies before phase records were kept)\n")
        return
    sys.stdout.write(f"  {'workload':<20} {'phase':<12} {'from':>10} {'to':>10} {'lasted':>10}\n")
    for w in t.workloads:
        for s in w.spans:
            sys.stdout.write(f"  {w.name:<20} {s.phase:<12} {s.start:>9.3f}s {s.end:>9.3f}s {s.seconds:>9.3f}s\n")


@app.command(
    "timeline",
    help=HELP["timeline"],
    epilog="Examples:\n\n  framework ledger timeline dev\n\n  framework ledger timeline dev <promotion-id> --json",
)
def ledger_timeline(
    env: str = typer.Argument(..., help="Environment name."),
    promotion: str | None = typer.Argument(None, help="This promotion's rollout (default: the latest)."),
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.ledger.timeline import timeline
        from engine.project import find_project

        return timeline(find_project(), env, promotion), 0

    raise typer.Exit(run_command(json_output, action, _render_timeline))


from app.cli.ledger_metrics import register  # noqa: E402 - `ledger metrics`, in its own module

register(app, HELP)
