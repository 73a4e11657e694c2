"""`framework env secrets sync <env>` (docs/reference-k8s.md#env-secrets-sync-env): cluster Secrets from the dotenv
provider, applied to local clusters only; registered on the `env` group (app/cli/env.py).

Output names Secrets and keys, never a value.
"""

from __future__ import annotations

from typing import Any

import typer

from app.cli.env_group import HELP, app, current_project
from app.cli.options import JSON_OPTION


def _secrets_app() -> Any:
    from app.cli import _typer_app
    from app.registry import ENV_SECRETS

    sub = _typer_app(ENV_SECRETS.help, ENV_SECRETS.examples)

    @sub.command("sync", help=ENV_SECRETS.commands["sync"], epilog=(
        "Examples:\n\n  framework env secrets sync cluster\n\n  framework env secrets sync cluster --json\n\n"
        "Values come from deploy/secrets/<env>.env (KEY=VALUE lines) and are never printed. A K8sCluster "
        "declaring secrets = \"external\" is a no-op with a message.\n\n"
        "Exit codes: 0 applied (or nothing to do); 1 not a local cluster, no dotenv file, a declared key "
        "missing from it (nothing applied), context missing; 2 the cluster is unreachable."))
    def secrets_sync(env: str = typer.Argument(..., help="A K8sCluster environment (deploy/kcl/<env>/main.k)."),
                     json_output: bool = JSON_OPTION) -> None:
        from app.output import run_command, stdout_console

        def action() -> tuple[Any, int]:
            from engine.runtime.k8s_secrets import secrets_sync as sync

            return sync(current_project(), env), 0

        def render(r: Any) -> None:
            out = stdout_console()
            for s in r.secrets:
                out.print(f"Secret {r.namespace}/{s['name']}: {', '.join(s['keys'])}")
            out.print(r.message)

        raise typer.Exit(run_command(json_output, action, render))

    return sub


app.add_typer(_secrets_app(), name="secrets", help=HELP["secrets"])
