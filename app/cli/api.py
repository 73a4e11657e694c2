"""`framework api curl` (docs/reference-authoring.md#commands)."""

from __future__ import annotations

from typing import Any

import typer

from app.cli import group_app
from app.cli.database_views import examples, out
from app.cli.options import JSON_OPTION
from app.registry import FRAMEWORK

app = group_app("framework", "api")
HELP = FRAMEWORK.groups["api"].commands


@app.command("curl", help=HELP["curl"], epilog=examples(
    "framework api curl shop.v1.ShopService.Ping", "framework api curl ShopService.Ping --body '{\"message\":\"hi\"}'",
    "framework api curl shop.Ping --port 9000 --json",
    note="The URL is http://127.0.0.1:<port>/<package>.<Service>/<Method>; the port is --port, else "
         "framework.yaml `port`, else 8080. The body comes from gen/framework_descriptor.json (run framework "
         "generate when it is stale). Exit codes: 0 printed; 1 unknown or ambiguous service or method; 2 bad usage."))
def curl(target: str = typer.Argument(..., help="<service>.<method>: full (pkg.v1.Service.Method) or short."),
         body: str | None = typer.Option(None, "--body", help="The JSON request body (default: zero values)."),
         port: int | None = typer.Option(None, "--port", min=1, max=65535, help="The service's port."),
         json_output: bool = JSON_OPTION) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.authoring.curl import curl as make
        from engine.project import find_project

        return make(find_project(), target, body=body, port=port), 0

    raise typer.Exit(run_command(json_output, action, lambda r: out(r.command)))
