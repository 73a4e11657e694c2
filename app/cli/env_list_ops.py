"""What `framework env list` does and prints, without Typer.

`app/cli/env.py` declares the command for Typer (help, examples, usage errors) and calls `execute`;
`app.main` calls `fast` first, which takes only `env list` and `env list --json` and otherwise
returns None so Typer handles the rest. A warm `env list --json` then costs the interpreter, the
engine's listing (no pydantic: engine/environments/listing.py) and the JSON document, not Typer's
import and parse (bench/startup.py).
"""

from __future__ import annotations

from typing import Any


def render(payload: dict[str, Any]) -> None:
    """The human table on stdout; each environment that failed to evaluate, on stderr."""
    from rich.table import Table

    from app.output import diagnose, stdout_console

    console = stdout_console()
    if not payload["environments"]:
        console.print(f"no environments declared under {payload['root']}/deploy/kcl/<env>/main.k")
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("NAME", "KIND", "TARGET", "WORKLOADS", "FILE"):
        table.add_column(column)
    for env in payload["environments"]:
        if env["error"]:
            table.add_row(env["name"], "[red]error[/]", "-", "-", env["file"])
        else:
            table.add_row(env["name"], env["kind"] or "-", env["target"] or "-",
                          ", ".join(env["workloads"]) or "-", env["file"])
    console.print(table)
    for env in _failed(payload):
        diagnose(str((env["error"] or {}).get("message")), label=f"error in {env['name']}")


def _failed(payload: dict[str, Any]) -> list[dict[str, Any]]:
    return [env for env in payload["environments"] if env["error"]]


def _error(payload: dict[str, Any]) -> dict[str, Any]:
    failed = _failed(payload)
    return {
        "code": "kcl_error",
        "message": f"{len(failed)} of {len(payload['environments'])} environments failed to evaluate: "
                   + ", ".join(env["name"] for env in failed),
    }


def execute(json_output: bool) -> int:
    """List the environments and render them (one JSON document with --json); the exit code."""
    from app.output import run_command

    def action() -> tuple[dict[str, Any], int]:
        from engine.environments.listing import environment_listing
        from engine.project import find_project

        payload = environment_listing(find_project())
        return payload, (1 if _failed(payload) else 0)

    return run_command(json_output, action, render, partial_error=_error)


def fast(argv: list[str]) -> int | None:
    """`env list` or `env list --json` (argv after `env list`); None hands anything else to Typer."""
    if argv in ([], ["--json"]):
        return execute(bool(argv))
    return None
