"""`platform auth ...` (docs/reference-auth.md#platform-auth): login, logout, status, tokens, the
control-plane credential and the local OAuth callback server."""

from __future__ import annotations

from typing import Any

import typer

from app.cli import group_app
from app.cli.options import JSON_OPTION
from app.registry import PLATFORM

app = group_app("platform", "auth")
HELP = PLATFORM.groups["auth"].commands
SERVER_OPTION = typer.Option(
    None, "--server", help="Server URL; else PLATFORM_SERVER_URL, else the built-in default (http://127.0.0.1:8080)."
)
NOTE = ("\n\n  PLATFORM_TOKEN, when set, is the credential everywhere (no login needed)."
        "\n\n  Logins are kept in $XDG_CONFIG_HOME/framework/credentials.json (mode 0600), one per server.")

token_app = typer.Typer(help=HELP["token"], no_args_is_help=True, add_completion=False,
                        pretty_exceptions_enable=False, context_settings={"help_option_names": ["--help", "-h"]})
app.add_typer(token_app, name="token")


def _warn(result: Any) -> None:
    from app.output import diagnose

    for warning in getattr(result, "warnings", None) or []:
        diagnose(warning, label="warning")


def _run(json_output: bool, action: Any, human: Any) -> None:
    from app.output import run_command

    def wrapped() -> tuple[Any, int]:
        result = action()
        _warn(result)
        return result, 0

    raise typer.Exit(run_command(json_output, wrapped, human))


@app.command("login", help=HELP["login"], epilog=(
    "Examples:\n\n  platform auth login\n\n  platform auth login --server http://127.0.0.1:8080"
    "\n\n  BROWSER=firefox platform auth login --timeout 120 --json"
    "\n\n  The browser opens the server's sign-in page; the answer returns to a listener on 127.0.0.1 "
    "(a port the OS picks). Interrupting or timing out closes it and exits non-zero." + NOTE))
def login(server: str | None = SERVER_OPTION,
          timeout: float = typer.Option(300.0, "--timeout", min=1, help="Seconds to wait for the browser."),
          json_output: bool = JSON_OPTION) -> None:
    def action() -> Any:
        from engine.auth.login import platform_login

        return platform_login(server, timeout=timeout)

    def human(r: Any) -> None:
        print(f"signed in to {r.server} as {r.user} ({r.organization}); scope: {r.scope}; expires {r.expires_at}")

    _run(json_output, action, human)


@app.command("logout", help=HELP["logout"], epilog=(
    "Examples:\n\n  platform auth logout\n\n  platform auth logout --server http://127.0.0.1:8080 --json"
    "\n\n  Only this server's entry is removed; the token stays valid on the server until it expires or is "
    "revoked." + NOTE))
def logout(server: str | None = SERVER_OPTION, json_output: bool = JSON_OPTION) -> None:
    def action() -> Any:
        from engine.auth.client import logout as run

        return run(server)

    def human(r: Any) -> None:
        print(f"logged out of {r.server}" if r.removed else f"no login for {r.server}; nothing removed")

    _run(json_output, action, human)


@app.command("status", help=HELP["status"], epilog=(
    "Examples:\n\n  platform auth status\n\n  PLATFORM_SERVER_URL=http://127.0.0.1:8080 platform auth status --json"
    + NOTE))
def status(server: str | None = SERVER_OPTION, json_output: bool = JSON_OPTION) -> None:
    def action() -> Any:
        from engine.auth.client import status as run

        return run(server)

    def human(r: Any) -> None:
        source = {"flag": "--server", "env": "PLATFORM_SERVER_URL", "default": "built-in default"}[r.server_source]
        print(f"server: {r.server} (from {source})")
        if r.credential_source == "env:PLATFORM_TOKEN":
            print("credential: PLATFORM_TOKEN")
        elif r.logged_in:
            print(f"credential: login of {r.user} ({r.organization}), expires {r.expires_at}")
        elif r.expired:
            print(f"credential: none (the login of {r.user} has expired; run platform auth login)")
        else:
            print("credential: none (not logged in to this server; run platform auth login)")
        print(f"credentials file: {r.credentials_file}")

    _run(json_output, action, human)


def _print_secret(r: Any) -> None:
    print(r.token)
    import sys

    sys.stderr.write(f"{r.name or r.id}: scope {r.scope}; expires {r.expires_at}. Shown once: store it now.\n")


@app.command("framework-credential", help=HELP["framework-credential"], epilog=(
    "Examples:\n\n  platform auth framework-credential"
    "\n\n  FRAMEWORK_CONTROL_PLANE_TOKEN=$(platform auth framework-credential) framework cloud status prod"
    "\n\n  platform auth framework-credential --json   (token in field token)" + NOTE))
def framework_credential(server: str | None = SERVER_OPTION, json_output: bool = JSON_OPTION) -> None:
    def action() -> Any:
        from engine.auth.client import framework_credential as run

        return run(server)

    _run(json_output, action, _print_secret)


@token_app.command("create", help="Create an API token named platform-cli@<name> (printed once, not stored).",
                   epilog="Examples:\n\n  platform auth token create --name ci"
                   "\n\n  platform auth token create --name ci --json   (token in field token)"
                   "\n\n  Needs a browser login (a token never mints a token); the same name replaces the old token."
                   + NOTE)
def token_create(name: str = typer.Option(..., "--name", help="Token name (platform-cli@<name>)."),
                 server: str | None = SERVER_OPTION, json_output: bool = JSON_OPTION) -> None:
    def action() -> Any:
        from engine.auth.client import create_token

        return create_token(server, name)

    _run(json_output, action, _print_secret)


@token_app.command("list", help="List your API tokens: metadata only, never secrets.",
                   epilog="Examples:\n\n  platform auth token list\n\n  platform auth token list --json" + NOTE)
def token_list(server: str | None = SERVER_OPTION, json_output: bool = JSON_OPTION) -> None:
    def action() -> Any:
        from engine.auth.client import list_tokens

        return list_tokens(server)

    _run(json_output, action, lambda r: render_tokens(r, "API"))


def render_tokens(result: Any, what: str) -> None:
    """Token metadata, one line each (never a secret)."""
    if not result.tokens:
        print(f"no {what} tokens on {result.server}")
    for tok in result.tokens:
        print(f"{tok.id}  {tok.name}  scope={tok.scope.replace(' ', ',')}  created={tok.created_at}  "
              f"expires={tok.expires_at}")


@token_app.command("revoke", help="Revoke an API token by name or ID; it stops working at once.",
                   epilog="Examples:\n\n  platform auth token revoke ci"
                   "\n\n  platform auth token revoke tok_0123abcd --json" + NOTE)
def token_revoke(ref: str = typer.Argument(..., help="Token name (with or without platform-cli@) or ID."),
                 server: str | None = SERVER_OPTION, json_output: bool = JSON_OPTION) -> None:
    def action() -> Any:
        from engine.auth.client import revoke_token

        return revoke_token(server, ref)

    _run(json_output, action, lambda r: print("revoked " + ", ".join(r.revoked)))


@app.command("serve", help=HELP["serve"], epilog=(
    "Examples:\n\n  platform auth serve --port 8765"
    "\n\n  curl http://127.0.0.1:8765/health"
    "\n\n  curl -X POST -H 'Content-Type: application/json' -d '{\"provider\": \"https://accounts.example\"}' "
    "http://127.0.0.1:8765/oauth/start"
    "\n\n  Listens on 127.0.0.1 only; GET /health answers service, version and readiness; POST /oauth/start "
    "opens the browser on the provider's sign-in page and answers once its callback arrived." + NOTE))
def serve(port: int = typer.Option(0, "--port", min=0, max=65535, help="Port (0: the system picks one)."),
          json_output: bool = JSON_OPTION) -> None:
    def action() -> Any:
        from engine.auth.serve import serve as run

        run(port)
        return None

    _run(json_output, action, lambda _: None)
