"""`platform daemon ls` (spec 2 Endpoints: daemon ls). The daemon itself is not in this build."""

from __future__ import annotations

from typing import Any

import typer

from app.cli import group_app
from app.cli.options import JSON_OPTION
from app.registry import PLATFORM

app = group_app("platform", "daemon")
HELP = PLATFORM.groups["daemon"].commands


def _render(result: Any) -> None:
    from rich.table import Table

    from app.output import stdout_console

    if not result.instances:
        print(f"no daemon instances under {result.home}")
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("INSTANCE", "RUNNING", "RECORD STATE", "NOTE"):
        table.add_column(column)
    for i in result.instances:
        record = (i.state or "(no state)") if i.record is not None else "-"
        table.add_row(i.name, "RUNNING" if i.running else "-", record, i.note)
    stdout_console().print(table)


@app.command(
    "ls",
    help=HELP["ls"],
    epilog="Examples:\n\n  platform daemon ls\n\n  platform daemon ls --json\n\n"
    "  Instances live in ~/.platform/instances (PLATFORM_INSTANCES_DIR overrides); RUNNING is read "
    "from each instance's lock, the record state from its runtime record.",
)
def ls(json_output: bool = JSON_OPTION) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.daemon.instances import list_instances

        return list_instances(), 0

    raise typer.Exit(run_command(json_output, action, _render))
