"""`framework ledger metrics [env]` (docs/reference-metrics.md): the four delivery measures, rendered."""

from __future__ import annotations

import sys
from typing import Any

import typer

from app.cli.options import JSON_OPTION


def render(m: Any) -> None:
    from engine.ledger.metrics import duration, percent

    out = sys.stdout
    out.write(f"{m.ledger} (project {m.project}), {m.since} to {m.until}, by {m.bucket}\n")
    if not m.environments:
        out.write("no promotions in this ledger\n")
    for e in m.environments:
        df, lt, cfr, ttr = e.deployment_frequency, e.lead_time, e.change_failure_rate, e.time_to_restore
        out.write(f"\n{e.env}\n")
        out.write(f"  deployment frequency  {df.count} healthy ({df.per_day:.2f}/day)\n")
        out.write(f"  lead time             median {duration(lt.median_seconds)}, p90 {duration(lt.p90_seconds)} "
                  f"over {lt.count}" + (f" ({lt.without_commit_time} without a commit time)"
                                        if lt.without_commit_time else "") + "\n")
        out.write(f"  change failure rate   {percent(cfr.rate)} ({cfr.failed} of {cfr.promotions}: rollout "
                  f"{cfr.by_rollout}, gate {cfr.by_gate}, BEHIND within 24h {cfr.by_behind})\n")
        out.write(f"  time to restore       median {duration(ttr.median_seconds)}, p90 {duration(ttr.p90_seconds)} "
                  f"over {ttr.count} restored of {ttr.incidents} incidents\n")
    out.write("\nhow each figure is counted: docs/reference-metrics.md (--json carries it as `counted`)\n")


def register(app: Any, help_text: dict[str, str]) -> None:
    @app.command(
        "metrics",
        help=help_text["metrics"],
        epilog="Examples:\n\n  framework ledger metrics\n\n"
        "  framework ledger metrics prod --since 2026-11-01 --bucket week --json",
    )
    def ledger_metrics(
        env: str | None = typer.Argument(None, help="Only this environment (default: every one in the ledger)."),
        since: str | None = typer.Option(None, "--since", help="Start: ISO-8601 date/time (UTC) or epoch seconds "
                                         "(default: 30 days before --until)."),
        until: str | None = typer.Option(None, "--until", help="End, exclusive (default: now)."),
        bucket: str = typer.Option("day", "--bucket", help="Series bucket: day or week (UTC)."),
        json_output: bool = JSON_OPTION,
    ) -> None:
        from app.output import run_command

        def action() -> tuple[Any, int]:
            from engine.ledger.metrics import metrics
            from engine.project import find_project

            return metrics(find_project(), env, since=since, until=until, bucket=bucket), 0

        raise typer.Exit(run_command(json_output, action, render))
