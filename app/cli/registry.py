"""`framework registry ...` (docs/reference-ci.md#commands)."""

from __future__ import annotations

from typing import Any

import typer

from app.cli import group_app
from app.cli.options import JSON_OPTION
from app.output import plain
from app.registry import FRAMEWORK

app = group_app("framework", "registry")
HELP = FRAMEWORK.groups["registry"].commands



def _render_login(result: Any) -> None:
    for h in result.hosts:
        how = f" as {h.user} ({h.credential})" if h.user else " (local registry: no login)"
        plain(f"{h.status:<14} {h.host}{how}")
    if any(h.status == "logged_in" for h in result.hosts):
        plain(f"stored in {result.config}")


def _render_ref(result: Any) -> None:
    import sys

    sys.stdout.write("".join(f"{i.ref}\n" for i in result.images))


@app.command("login", help=HELP["login"], epilog=(
    "Examples:\n\n  framework registry login cloud            (platform registry: the control-plane credential)"
    "\n\n  echo \"$TOKEN\" | framework registry login staging --username ci --password-stdin"
    "\n\n  framework registry login staging --username ci --password-env REGISTRY_TOKEN --json"
    "\n\nExit codes: 0 logged in (or every host local); 1 refused, bad input or no credential for a host; "
    "2 a registry or the control plane unreachable. Nothing is stored unless every host accepted."))
def login(env: str = typer.Argument(..., help="Environment whose workload images name the registries."),
          username: str | None = typer.Option(None, "--username", help="User for registries other than the "
                                              "platform registry."),
          password_stdin: bool = typer.Option(False, "--password-stdin", help="Read the password from stdin."),
          password_env: str | None = typer.Option(None, "--password-env", metavar="VAR",
                                                  help="Read the password from this environment variable."),
          timeout: float = typer.Option(15.0, "--timeout", help="Seconds per registry check."),
          json_output: bool = JSON_OPTION) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.project import find_project
        from engine.registry.login import registry_login

        return registry_login(find_project(), env, username=username, password_stdin=password_stdin,
                              password_env=password_env, timeout=timeout)

    raise typer.Exit(run_command(json_output, action, _render_login))


@app.command("ref", help=HELP["ref"], epilog=(
    "Examples:\n\n  framework registry ref staging\n\n  framework registry ref staging --image api --ci-output"
    "\n\nExit codes: 0 printed; 1 nothing pushed (or no such --image); 2 --ci-output without $GITHUB_OUTPUT, "
    "or several images without --image."))
def ref(env: str = typer.Argument(..., help="Environment."),
        image: str | None = typer.Option(None, "--image", help="Only this workload (or image name)."),
        ci_output: bool = typer.Option(False, "--ci-output", help="Append ref=, image=, digest= to the file "
                                       "$GITHUB_OUTPUT names."),
        json_output: bool = JSON_OPTION) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.project import find_project
        from engine.registry.refs import registry_ref

        return registry_ref(find_project(), env, image=image, ci_output=ci_output)

    raise typer.Exit(run_command(json_output, action, _render_ref))
