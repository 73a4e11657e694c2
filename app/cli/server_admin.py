"""`platform server user add`, `platform server org add|grant` (docs/reference-auth.md): the accounts of the
authorization server, written straight to the server's store (same DATABASE_URL / --data-dir)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import typer

from app.cli.options import JSON_OPTION

DATA_DIR_OPTION = typer.Option(
    None, "--data-dir", help="The server's data dir (SQLite store); default $PLATFORM_DATA_DIR or ~/.platform/server."
)
STORE_NOTE = "\n\n  The store is DATABASE_URL when set, else the SQLite file in the data dir."


def _typer(help_text: str) -> Any:
    return typer.Typer(help=help_text, no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False,
                       context_settings={"help_option_names": ["--help", "-h"]})


user_app = _typer("Users of the authorization server: add.")
org_app = _typer("Organizations: add one, grant or remove deploy, secret and domain permissions.")


def _render(result: Any) -> None:
    if hasattr(result, "email"):
        print(f"user {result.email} ({result.role}) in organization {result.org}")
    else:
        print(f"organization {result.name}: {' '.join(result.permissions) or 'no permissions'}")


def _password(password_env: str | None) -> str:
    from engine.errors import UsageError

    if password_env:
        value = os.environ.get(password_env)
        if value is None:
            raise UsageError(f"{password_env} is not set")
        return value
    if sys.stdin.isatty():
        import getpass

        first = getpass.getpass("password: ")
        if getpass.getpass("again: ") != first:
            raise UsageError("the passwords differ")
        return first
    return sys.stdin.readline().rstrip("\n")


@user_app.command(
    "add",
    help="Add a user to an organization (password read from --password-env, the terminal, or one line of stdin).",
    epilog="Examples:\n\n  platform server user add ada@example.com --org acme --admin"
    "\n\n  printf '%s\\n' \"$PW\" | platform server user add bob@example.com --org acme --json" + STORE_NOTE,
)
def user_add(
    email: str = typer.Argument(..., help="The user's email (their sign-in name)."),
    org: str = typer.Option(..., "--org", help="The organization the user belongs to."),
    admin: bool = typer.Option(False, "--admin", help="Organization admin (may mint automation tokens)."),
    password_env: str | None = typer.Option(None, "--password-env", help="Read the password from this variable."),
    data_dir: Path | None = DATA_DIR_OPTION,
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.auth.accounts import add_user, server_store

        password = _password(password_env)
        return add_user(server_store(data_dir), email, password, org, "admin" if admin else "member"), 0

    raise typer.Exit(run_command(json_output, action, _render))


@org_app.command(
    "add",
    help="Create an organization (no permissions until granted).",
    epilog="Examples:\n\n  platform server org add acme\n\n  platform server org add acme --json" + STORE_NOTE,
)
def org_add(
    name: str = typer.Argument(..., help="Organization name (lowercase letters, digits, '-')."),
    data_dir: Path | None = DATA_DIR_OPTION,
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.auth.accounts import add_org, server_store

        return add_org(server_store(data_dir), name), 0

    raise typer.Exit(run_command(json_output, action, _render))


@org_app.command(
    "grant",
    help="Grant (or with --remove take back) permissions that the organization's tokens carry.",
    epilog="Examples:\n\n  platform server org grant acme deploy:read deploy:write"
    "\n\n  platform server org grant acme deploy:promote --remove --json"
    "\n\n  Permissions: deploy:read, deploy:write, deploy:promote, secret:read, secret:write, domain:read, "
    "domain:write." + STORE_NOTE,
)
def org_grant(
    name: str = typer.Argument(..., help="Organization name."),
    permissions: list[str] = typer.Argument(..., help="Permissions to grant."),
    remove: bool = typer.Option(False, "--remove", help="Take the permissions back instead."),
    data_dir: Path | None = DATA_DIR_OPTION,
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.auth.accounts import grant, server_store

        return grant(server_store(data_dir), name, permissions, remove=remove), 0

    raise typer.Exit(run_command(json_output, action, _render))


@org_app.command(
    "billing",
    help="Enable (or --disable) the organization's billing entitlement: queued hosted deploys then go live by "
    "themselves.",
    epilog="Examples:\n\n  platform server org billing acme --enable"
    "\n\n  platform server org billing acme --disable --json" + STORE_NOTE,
)
def org_billing(
    name: str = typer.Argument(..., help="Organization name."),
    enable: bool = typer.Option(True, "--enable/--disable", help="Entitle the organization, or take it back."),
    data_dir: Path | None = DATA_DIR_OPTION,
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.auth.accounts import server_store
        from engine.controlplane.state import set_billing

        return set_billing(server_store(data_dir), name, enable), 0

    def render(result: Any) -> None:
        print(f"organization {result['organization']}: billing {'enabled' if result['billing'] else 'disabled'}")

    raise typer.Exit(run_command(json_output, action, render))
