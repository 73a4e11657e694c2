"""`framework domain add|ls|show|verify|bind|unbind|rm` (docs/reference-domains.md#commands)."""

from __future__ import annotations

from typing import Any

import typer

from app.cli import group_app
from app.cli.options import JSON_OPTION
from app.registry import FRAMEWORK

app = group_app("framework", "domain")
HELP = FRAMEWORK.groups["domain"].commands
ENV = typer.Option(None, "--env", help="Environment whose control plane to use (default: the hosted service).")
TOKEN = typer.Option(None, "--token", help="Credential for this call (first in the precedence order).")
HOST = typer.Argument(..., help="Hostname, e.g. example.com or www.example.com.")
NOTE = ("\n\n  Credential precedence: --token, the environment's token_env variable (default "
        "FRAMEWORK_CONTROL_PLANE_TOKEN), the credentials-file entry for the endpoint, $FRAMEWORK_CREDENTIAL_HELPER.")


def _binding(d: dict[str, Any]) -> str:
    b = d.get("binding") or {}
    if b.get("redirect_to"):
        return f"redirect -> {b['redirect_to']} (308)"
    return f"{b['env']}/{b['target']}" if b.get("target") else "-"


def _one(d: dict[str, Any]) -> None:
    print(f"{d['hostname']}: {d['state']}{' (serving)' if d.get('serving') else ''}")
    print(f"  binding: {_binding(d)}")
    check = d.get("last_check")
    if check:
        print(f"  last verification: {check['result']}")
    if d.get("dns"):
        print("  DNS to publish:")
        for r in d["dns"]:
            print(f"    {r['name']:<44} {r['type']:<6} {r['value']}  ({r['purpose']})")
    if d["state"] == "pending_dns":
        print(f"  then: framework domain verify {d['hostname']} (the control plane also checks by itself)")
    elif d["state"] == "conflict":
        print("  another organization has proven ownership of this name")


def _render(r: Any) -> None:
    res = r.result
    if r.verb == "ls":
        rows = res.get("domains") or []
        print(f"domains on {r.endpoint} (your organization's):")
        for d in rows:
            print(f"  {d['hostname']:<36} {d['state']:<12} {'serving' if d['serving'] else '-':<8} {_binding(d)}")
        if not rows:
            print("  none (framework domain add <hostname>)")
    elif r.verb == "rm":
        print(f"{res['hostname']}: removed{' (the name is free for others)' if res.get('freed') else ''}")
    else:
        _one(res)


def _run(json_output: bool, verb: str, hostname: str | None, env: str | None, token: str | None,
         **kw: Any) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.cloud.domains import domain

        return domain(verb, hostname, env=env, token=token, **kw)  # type: ignore[arg-type]

    raise typer.Exit(run_command(json_output, action, _render))


EXAMPLES = {
    "add": ("framework domain add example.com --env cloud", "framework domain add www.example.com --env cloud --json"),
    "show": ("framework domain show example.com --env cloud", "framework domain show example.com --env cloud --json"),
    "verify": ("framework domain verify example.com --env cloud",
               "framework domain verify example.com --env cloud --json"),
}


def _hostname_command(verb: str) -> None:
    """`domain <verb> <hostname>`: add, show, verify, unbind, rm take the same arguments."""
    examples = EXAMPLES.get(verb, (f"framework domain {verb} example.com --env cloud",
                                   f"framework domain {verb} example.com --env cloud --json"))

    def command(hostname: str = HOST, env: str | None = ENV, token: str | None = TOKEN,
                json_output: bool = JSON_OPTION) -> None:
        _run(json_output, verb, hostname, env, token)

    app.command(verb, help=HELP[verb], epilog="Examples:\n\n  " + "\n\n  ".join(examples) + NOTE)(command)


for _verb in ("add", "show", "verify"):
    _hostname_command(_verb)


@app.command("ls", help=HELP["ls"], epilog="Examples:\n\n  framework domain ls --env cloud"
             "\n\n  framework domain ls --env cloud --json" + NOTE)
def ls(env: str | None = ENV, token: str | None = TOKEN, json_output: bool = JSON_OPTION) -> None:
    _run(json_output, "ls", None, env, token)


@app.command("bind", help=HELP["bind"],
             epilog="Examples:\n\n  framework domain bind example.com --env cloud --target api"
             "\n\n  framework domain bind www.example.com --env cloud --redirect-to example.com" + NOTE)
def bind(hostname: str = HOST, env: str | None = ENV, token: str | None = TOKEN,
         target: str | None = typer.Option(None, "--target", help="Workload or frontend of --env to serve."),
         redirect_to: str | None = typer.Option(None, "--redirect-to", help="Answer with a 308 to this hostname."),
         json_output: bool = JSON_OPTION) -> None:
    _run(json_output, "bind", hostname, env, token, target=target, redirect_to=redirect_to)


for _verb in ("unbind", "rm"):
    _hostname_command(_verb)
