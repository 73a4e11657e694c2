"""`framework login` and `framework logout` (docs/reference-auth.md#framework-login-logout-cloud)."""

from __future__ import annotations

from typing import Any

import typer

from app.cli.options import JSON_OPTION
from app.registry import FRAMEWORK

ENDPOINT_OPTION = typer.Option(None, "--endpoint",
                               help="One control plane; default: every one the environments declare.")
NOTE = ("\n\n  Credentials are kept in $XDG_CONFIG_HOME/framework/credentials.json (mode 0600), one entry per "
        "endpoint, shared with `platform auth`.")


def _app(name: str, examples: tuple[str, ...]) -> Any:
    return typer.Typer(help=FRAMEWORK.groups[name].help, add_completion=False, invoke_without_command=True,
                       pretty_exceptions_enable=False, context_settings={"help_option_names": ["--help", "-h"]},
                       epilog="Examples:\n\n" + "\n\n".join(f"  {e}" for e in examples) + NOTE)


login_app = _app("login", ("framework login", "framework login --endpoint https://cp.example.com",
                           "framework login --token \"$DEPLOY_TOKEN\" --json   (CI: checked, then stored)",
                           "printf '%s\\n' \"$DEPLOY_TOKEN\" | framework login --token -"))
logout_app = _app("logout", ("framework logout", "framework logout --endpoint https://cp.example.com --json"))


@login_app.callback(invoke_without_command=True)
def login(
    endpoint: str | None = ENDPOINT_OPTION,
    token: str | None = typer.Option(None, "--token",
                                     help="CI: use this token (checked against the endpoint); '-': stdin."),
    timeout: float = typer.Option(300.0, "--timeout", min=1, help="Seconds to wait for each browser sign-in."),
    json_output: bool = JSON_OPTION,
) -> None:
    from app.cli.auth import _run

    def action() -> Any:
        import sys

        from engine.cloud.account import login as run

        given = sys.stdin.readline().strip() if token == "-" else token  # keeps it out of shell history
        return run(endpoint, given, timeout=timeout)

    def human(r: Any) -> None:
        for item in r.logins:
            who = f"{item.user} ({item.organization})" if item.user else "an organization token"
            where = f" [{', '.join(item.declared_by)}]" if item.declared_by else ""
            kept = "stored" if item.stored else "not stored"
            print(f"{item.endpoint}{where}: {who} via {item.credential_source}, {kept}; scope: {item.scope}")

    _run(json_output, action, human)


@logout_app.callback(invoke_without_command=True)
def logout(endpoint: str | None = ENDPOINT_OPTION, json_output: bool = JSON_OPTION) -> None:
    from app.cli.auth import _run

    def action() -> Any:
        from engine.cloud.account import logout as run

        return run(endpoint)

    def human(r: Any) -> None:
        for endpoint_url in r.removed:
            print(f"logged out of {endpoint_url}")
        for endpoint_url in r.not_logged_in:
            print(f"no login for {endpoint_url}")

    _run(json_output, action, human)
