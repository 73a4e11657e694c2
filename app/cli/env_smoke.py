"""`framework env smoke <env>` (docs/reference-domains.md#framework-env-smoke-env). Registered on the `env`
group defined in app/cli/env.py."""

from __future__ import annotations

from typing import Any

import typer

from app.cli.env_group import HELP, app, current_project
from app.cli.options import JSON_OPTION


def _render(r: Any) -> None:
    label = f" [{r.tag}]" if r.tag else ""
    print(f"{r.env}{label}: probed {len(r.routes)} route(s) through {r.via}")
    for route in r.routes:
        status = route.status if route.status is not None else "-"
        print(f"  {route.klass:<4}  {route.host}{route.path:<24} {status!s:<4} {route.owner:<10} {route.reason}")
    c = r.counts
    print(f"PASS {c['PASS']}  WARN {c['WARN']}  FAIL {c['FAIL']}")


@app.command("smoke", help=HELP["smoke"], epilog="Examples:\n\n  framework env smoke staging"
             "\n\n  framework env smoke cloud --tag v1.4.0 --json"
             "\n\n  Exit 1 when any route FAILs (TLS transport error, API route without "
             "Access-Control-Allow-Origin, a transport error or a 5xx); WARN: a plain 404 text page.")
def env_smoke(env: str = typer.Argument(..., help="Environment name."),
              tag: str | None = typer.Option(None, "--tag", help="Label this run (e.g. the release under test); "
                                             "recorded with the results."),
              json_output: bool = JSON_OPTION) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.deploy.smoke import smoke

        return smoke(current_project(), env, tag)

    raise typer.Exit(run_command(json_output, action, _render))
