"""What `framework env deploy` does and prints, without Typer.

`app/cli/env_deploy.py` declares the command for Typer (help, examples, validation) and calls
`execute`; `app.main` calls `fast` first, which parses only well-formed invocations and otherwise
returns None so Typer handles the rest (help, usage errors). A deploy then costs the interpreter
and the deploy path's imports, not Typer's import and parse (~0.1 s; bench/k8s.py).
"""

from __future__ import annotations

import json
import sys
from typing import Any

# option -> (parameter, kind) as app.cli.fast_args reads it
OPTIONS: dict[str, tuple[str, Any]] = {
    "--from": ("from_env", str), "--plan": ("plan", bool), "--plan-only": ("plan_only", bool),
    "--yes": ("yes", bool), "-y": ("yes", bool), "--approve": ("approve", str),
    "--acknowledge-destructive": ("acknowledge_destructive", str), "--expect-current": ("expect_current", str),
    "--expect-unbound": ("expect_unbound", bool), "--supersede": ("supersede", bool), "--gate": ("gate", str),
    "--no-wait": ("no_wait", bool), "--wait": ("wait", bool), "--timeout": ("timeout", float),
    "--stability-window": ("stability_window", float), "--grace": ("grace", float),
    "--dry-run": ("dry_run", bool), "--explain": ("explain", bool), "--tag": ("tag", str),
    "--namespace": ("namespace", str), "--target": ("target", list), "--skip-frontend": ("skip_frontend", bool),
    "--frontends-only": ("frontends_only", bool), "--skip-preflight": ("skip_preflight", bool),
    "--events": ("events", bool), "--json": ("json_output", bool),
}
DEFAULTS: dict[str, Any] = {
    "from_env": None, "plan": False, "plan_only": False, "yes": False, "approve": None,
    "acknowledge_destructive": "", "expect_current": None, "expect_unbound": False, "supersede": False,
    "gate": None, "no_wait": False, "wait": False, "timeout": 300.0, "stability_window": 2.0, "grace": 30.0,
    "dry_run": False, "explain": False, "tag": None, "namespace": None, "target": [], "skip_frontend": False,
    "frontends_only": False, "skip_preflight": False, "events": False, "json_output": False,
}


def execute(env: str, version: str | None, *, from_env: str | None, plan: bool, plan_only: bool, yes: bool,
            approve: str | None, acknowledge_destructive: str, expect_current: str | None, expect_unbound: bool,
            supersede: bool, gate: str | None, no_wait: bool, wait: bool, timeout: float, stability_window: float,
            grace: float, dry_run: bool, explain: bool, tag: str | None, namespace: str | None, target: list[str],
            skip_frontend: bool, frontends_only: bool, skip_preflight: bool, events: bool,
            json_output: bool) -> int:
    """Run one deploy and render it (one JSON document with --json); its exit code."""
    from app.cli.deploy_views import render_deploy
    from app.output import progress, run_command

    def confirm(plan_obj: Any, release: str) -> bool:
        import typer

        from engine.deploy.plan import render_plan_markdown

        sys.stderr.write(render_plan_markdown(plan_obj, env, None) + "\n")  # the plan is read before the answer
        return typer.confirm(f"Deploy {release} to {env}?", default=False, err=True)

    def emit(event: dict[str, Any]) -> None:
        stream = sys.stderr if json_output else sys.stdout
        stream.write(json.dumps(event) + "\n")
        stream.flush()

    def action() -> tuple[Any, int]:
        from engine.deploy.deploy import DeployOptions, deploy
        from engine.project import find_project

        opts = DeployOptions(
            version=version, from_env=from_env, plan=plan, plan_only=plan_only, yes=yes, approve=approve,
            acknowledge_destructive=[c.strip() for c in acknowledge_destructive.split(",") if c.strip()],
            expect_current=expect_current, expect_unbound=expect_unbound, supersede=supersede, gate_file=gate,
            wait=wait or not no_wait, timeout=timeout, stability_window=stability_window, grace=grace,
            dry_run=dry_run, explain=explain, tag=tag, namespace=namespace, targets=target,
            skip_frontend=skip_frontend, frontends_only=frontends_only, skip_preflight=skip_preflight)
        terminal = sys.stdin.isatty() and not json_output
        result = deploy(find_project(), env, opts, confirm=confirm if terminal else None,
                        emit=emit if events else None, progress=progress)
        if json_output:  # --json: one document on stdout; human output moves to stderr
            render_deploy(result, sys.stderr)
        return result, result.exit_code

    return run_command(json_output, action, render_deploy, partial_error=lambda r: r.error)


def fast(argv: list[str]) -> int | None:
    """`env deploy ...` (argv after `env deploy`) when well formed; None hands it to Typer."""
    from app.cli.fast_args import parse

    parsed = parse(argv, OPTIONS, DEFAULTS)
    if parsed is None or not 1 <= len(parsed[0]) <= 2:
        return None
    positional, params = parsed
    return execute(positional[0], positional[1] if len(positional) == 2 else None, **params)
