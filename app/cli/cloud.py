"""`framework cloud status|token create|list|revoke` (docs/reference-auth.md#framework-login-logout-cloud)."""

from __future__ import annotations

from typing import Any

import typer

from app.cli import group_app
from app.cli.options import JSON_OPTION
from app.registry import FRAMEWORK

app = group_app("framework", "cloud")
HELP = FRAMEWORK.groups["cloud"].commands
TOKEN_OPTION = typer.Option(None, "--token", help="Credential for this call (first in the precedence order).")
NOTE = ("\n\n  Credential precedence: --token, the environment's token_env variable (default "
        "FRAMEWORK_CONTROL_PLANE_TOKEN), the credentials-file entry for the endpoint, $FRAMEWORK_CREDENTIAL_HELPER.")

token_app = typer.Typer(help=HELP["token"], no_args_is_help=True, add_completion=False,
                        pretty_exceptions_enable=False, context_settings={"help_option_names": ["--help", "-h"]})
app.add_typer(token_app, name="token")


@app.command("status", help=HELP["status"], epilog="Examples:\n\n  framework cloud status cloud"
             "\n\n  framework cloud status cloud --json" + NOTE)
def status(env: str = typer.Argument(..., help="Environment name."), token: str | None = TOKEN_OPTION,
           json_output: bool = JSON_OPTION) -> None:
    from app.cli.auth import _run

    def action() -> Any:
        from engine.cloud.account import cloud_status

        return cloud_status(env, token)

    def human(r: Any) -> None:
        print(f"endpoint: {r.endpoint}")
        source = r.credential_source or ("none (stored login expired)" if r.expired_login else "none")
        who = f" ({r.user}, {r.organization})" if r.user else ""
        print(f"credential: {source}{who}")

    _run(json_output, action, human)


@app.command("releases", help=HELP["releases"], epilog="Examples:\n\n  framework cloud releases cloud"
             "\n\n  framework cloud releases cloud --json" + NOTE)
def releases(env: str = typer.Argument(..., help="Environment whose control plane to ask."),
             token: str | None = TOKEN_OPTION, json_output: bool = JSON_OPTION) -> None:
    from app.cli.auth import _run

    def action() -> Any:
        from engine.cloud.releases import cloud_releases
        from engine.project import find_project

        return cloud_releases(find_project(), env, token)

    def human(r: Any) -> None:
        print(f"releases on {r.endpoint} (your organization's):")
        for rel in r.releases:
            print(f"  {rel['version']:<32} {rel.get('branch') or '-':<12} {', '.join(rel['workloads'])}")
        if not r.releases:
            print("  (none)")

    _run(json_output, action, human)


@token_app.command("create", help="Mint an organization automation token (no acting user); secret printed once.",
                   epilog="Examples:\n\n  framework cloud token create --env cloud --name ci"
                   " --scopes deploy:read,deploy:write"
                   "\n\n  framework cloud token create --env cloud --name ci --scopes deploy:read --json"
                   "   (secret in field secret)\n\n  Needs an organization admin's browser login (framework login); "
                   "machine credentials are refused." + NOTE)
def token_create(env: str = typer.Option(..., "--env", help="Environment whose control plane mints it."),
                 name: str = typer.Option(..., "--name", help="Token name (the same name replaces the old token)."),
                 scopes: str = typer.Option(..., "--scopes", help="Comma-separated, e.g. deploy:read,deploy:write."),
                 token: str | None = TOKEN_OPTION, json_output: bool = JSON_OPTION) -> None:
    from app.cli.auth import _print_secret, _run

    def action() -> Any:
        from engine.cloud.account import create_token

        return AutomationSecret.of(create_token(env, name, scopes, token))

    _run(json_output, action, lambda r: _print_secret(r.for_print()))


class AutomationSecret:
    """The --json document names the secret `secret`, printed once
    (docs/reference-auth.md#framework-login-logout-cloud)."""

    @staticmethod
    def of(minted: Any) -> Any:
        from pydantic import BaseModel

        class Doc(BaseModel):
            id: str
            name: str | None
            secret: str
            scope: str
            expires_at: str

            def for_print(self) -> Any:
                return minted

        return Doc(id=minted.id, name=minted.name, secret=minted.token, scope=minted.scope,
                   expires_at=minted.expires_at)


@token_app.command("list", help="List the organization's automation tokens (never secrets).",
                   epilog="Examples:\n\n  framework cloud token list --env cloud\n\n  framework cloud token list "
                   "--env cloud --json" + NOTE)
def token_list(env: str = typer.Option(..., "--env", help="Environment whose control plane to ask."),
               token: str | None = TOKEN_OPTION, json_output: bool = JSON_OPTION) -> None:
    from app.cli.auth import _run

    def action() -> Any:
        from engine.cloud.account import list_tokens

        return list_tokens(env, token)

    from app.cli.auth import render_tokens

    _run(json_output, action, lambda r: render_tokens(r, "automation"))


@token_app.command("revoke", help="Revoke an automation token by name or ID; immediate.",
                   epilog="Examples:\n\n  framework cloud token revoke ci --env cloud"
                   "\n\n  framework cloud token revoke tok_0123abcd --env cloud --json" + NOTE)
def token_revoke(ref: str = typer.Argument(..., help="Token name or ID."),
                 env: str = typer.Option(..., "--env", help="Environment whose control plane holds it."),
                 token: str | None = TOKEN_OPTION, json_output: bool = JSON_OPTION) -> None:
    from app.cli.auth import _run

    def action() -> Any:
        from engine.cloud.account import revoke_token

        return revoke_token(env, ref, token)

    _run(json_output, action, lambda r: print("revoked " + ", ".join(r.revoked)))
