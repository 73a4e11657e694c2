"""`platform server` (docs/reference-webhooks.md#platform-server): the hosted side — webhook ingestion,
automations, runs."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from app.registry import PLATFORM

HELP = PLATFORM.groups["server"].help
EPILOG = (
    "Examples:\n\n  platform server --port 8080"
    "\n\n  platform server --host 0.0.0.0 --port 0 --data-dir ./data"
    "\n\n  platform server --port 8080 --gateway-port 8443"
    "\n\n  DATABASE_URL=postgresql://app@db/platform platform server"
)

app = typer.Typer(
    help=HELP,
    epilog=EPILOG,
    add_completion=False,
    invoke_without_command=True,
    context_settings={"help_option_names": ["--help", "-h"]},
    pretty_exceptions_enable=False,
)


@app.callback(invoke_without_command=True)
def server(
    ctx: typer.Context,
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on."),
    port: int = typer.Option(8080, "--port", help="Port to listen on (0: the system picks one)."),
    data_dir: Path | None = typer.Option(
        None,
        "--data-dir",
        help="Database (SQLite), secret key and run workspaces; "
        "default $PLATFORM_DATA_DIR or ~/.platform/server.",
    ),
    gateway_port: int | None = typer.Option(
        None,
        "--gateway-port",
        help="Port of the daemon gateway (gRPC); default: --port + 1 (0 when --port is 0). Printed at start.",
    ),
    workers: int = typer.Option(
        2,
        "--workers",
        min=0,
        max=64,
        help="Run workers in this process (0: ingest only; runs wait in the queue).",
    ),
    dns_resolver: str | None = typer.Option(
        None, "--dns-resolver", help="host:port of the DNS resolver domain verification asks "
        "(default $PLATFORM_DNS_RESOLVER, else the system's)."),
    gateway_http_port: int | None = typer.Option(
        None, "--gateway-http-port", help="Serve live domains over HTTP on this port (0: the system picks)."),
    gateway_https_port: int | None = typer.Option(
        None, "--gateway-https-port", help="Serve live domains over TLS on this port (certificates of the "
        "control plane's CA)."),
) -> None:
    if ctx.invoked_subcommand:  # `platform server user ...` / `org ...`: account administration
        return
    from app.output import run_command

    def action() -> tuple[None, int]:
        if dns_resolver is not None:
            from engine.domains.dnscheck import RESOLVER_ENV, parse_resolver

            parse_resolver(dns_resolver)  # a bad value is refused before the server starts
            os.environ[RESOLVER_ENV] = dns_resolver
        for name, value in (("HTTP", gateway_http_port), ("HTTPS", gateway_https_port)):
            if value is not None:
                os.environ[f"PLATFORM_GATEWAY_{name}_PORT"] = str(value)
        from engine.server.main import ServerConfig, default_data_dir, serve

        return None, serve(
            ServerConfig(host=host, port=port, data_dir=data_dir or default_data_dir(), workers=workers,
                         gateway_port=gateway_port)
        )

    raise typer.Exit(run_command(False, action, lambda _: None))


def _admin_groups() -> None:
    from app.cli.server_admin import org_app, user_app

    app.add_typer(user_app, name="user")
    app.add_typer(org_app, name="org")


_admin_groups()
