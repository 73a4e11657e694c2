"""`framework env start|stop|delete` (docs/reference-hosted.md#commands-on-hosted-environments): hosted
environments only.

Registered on the `env` group defined in app/cli/env.py.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import typer

from app.cli.env_group import HELP, app, current_project
from app.cli.options import JSON_OPTION

TARGET = typer.Option([], "--target", help="Only this workload (repeatable).")
WAIT = typer.Option(False, "--wait", help="Wait until the control plane has converged the change.")
TIMEOUT = typer.Option(300.0, "--timeout", help="Wait budget in seconds (exit 8 when it expires).")


def _render(r: Any) -> None:
    res = r.result
    if r.verb == "delete":
        print(f"{r.env}: deleted on {r.endpoint} (a later deploy of {r.env} creates a new environment)")
        return
    scope = f" ({', '.join(res.get('targets') or [])})" if res.get("targets") else ""
    print(f"{r.env}{scope}: {r.verb} accepted on {r.endpoint}; state {res.get('state')}")
    if r.wait:
        print(f"wait: {r.wait['outcome']}")


def _run(json_output: bool, env: str, verb: Any, targets: list[str], wait: bool, timeout: float) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.deploy.lifecycle import lifecycle

        return lifecycle(current_project(), env, verb, targets=targets, wait=wait, timeout=timeout)

    raise typer.Exit(run_command(json_output, action, _render))


@app.command("start", help=HELP["start"], epilog="Examples:\n\n  framework env start cloud --wait"
             "\n\n  framework env start cloud --target api --json")
def env_start(env: str = typer.Argument(..., help="Hosted environment name."), target: list[str] = TARGET,
              wait: bool = WAIT, timeout: float = TIMEOUT, json_output: bool = JSON_OPTION) -> None:
    _run(json_output, env, "start", target, wait, timeout)


@app.command("stop", help=HELP["stop"], epilog="Examples:\n\n  framework env stop cloud"
             "\n\n  framework env stop cloud --target web --json")
def env_stop(env: str = typer.Argument(..., help="Hosted environment name."), target: list[str] = TARGET,
             wait: bool = WAIT, timeout: float = TIMEOUT, json_output: bool = JSON_OPTION) -> None:
    _run(json_output, env, "stop", target, wait, timeout)


@app.command("delete", help=HELP["delete"], epilog="Examples:\n\n  framework env delete cloud   (type the name)"
             "\n\n  framework env delete cloud --yes --json")
def env_delete(env: str = typer.Argument(..., help="Hosted environment name."),
               yes: bool = typer.Option(False, "--yes", help="Delete without typing the name (required without a "
                                        "terminal or when CI=1)."),
               json_output: bool = JSON_OPTION) -> None:
    from app.output import diagnose, document, print_document

    if not yes:
        refusal = None
        if not sys.stdin.isatty() or os.environ.get("CI") == "1":
            refusal = "--yes is required without a terminal or when CI=1; nothing deleted"
        else:
            from engine.deploy.lifecycle import hosted_spec

            try:
                hosted_spec(current_project(), env, "delete")
            except Exception:  # noqa: BLE001 - refused below with its own message by the engine
                pass
            else:
                typed = input(f"Delete hosted environment {env!r}: deployments and state are removed. "
                              "Type its name to confirm: ")
                if typed.strip() != env:
                    refusal = "the typed name does not match; nothing deleted"
        if refusal is not None:
            diagnose(refusal, f"framework env delete {env} --yes")
            if json_output:
                print_document(document(5, {"code": "delete_unconfirmed", "message": refusal}))
            raise typer.Exit(5)
    _run(json_output, env, "delete", [], False, 0)
