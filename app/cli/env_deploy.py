"""`framework env build|deploy|status` (docs/reference-deploy.md#commands).

Registered on the `env` group defined in app/cli/env.py.
"""

from __future__ import annotations

import inspect
from typing import Any

import typer

from app.cli.env_group import HELP, app, current_project
from app.cli.options import JSON_OPTION


@app.command("build", help=HELP["build"], epilog=(
    "Examples:\n\n  framework env build dev\n\n  framework env build dev --push\n\n"
    "  framework env build dev --release v1.2.0\n\n  framework env build dev --release v1.2.0 --no-build\n\n"
    "  framework env build dev --release v1.2.0 --plan --json"))
def env_build(
    env: str = typer.Argument(..., help="Environment name (deploy/kcl/<env>/main.k)."),
    target: list[str] = typer.Option([], "--target", help="Only this workload (repeatable)."),
    push: bool = typer.Option(False, "--push", help="Publish artifacts (file store here; images: registry)."),
    release: str | None = typer.Option(None, "--release", help="Record an immutable release (implies --push)."),
    tag: str | None = typer.Option(None, "--tag", help="Image tag (refused when it conflicts with --release)."),
    no_build: bool = typer.Option(False, "--no-build", help="With --release: harvest digests of an earlier push."),
    plan: bool = typer.Option(False, "--plan", help="Preflight a cut: what would be built and cut; writes nothing."),
    json_output: bool = JSON_OPTION,
) -> None:
    from app.cli.deploy_views import render_build
    from app.output import run_command
    from app.progress import sink

    def action() -> tuple[Any, int]:
        from engine.builds.dispatch import env_build as build

        with sink(json_output) as shown:  # bars on a terminal, silent in --json and pipes
            result = build(current_project(), env, targets=target or None, push=push, release=release, tag=tag,
                           no_build=no_build, plan=plan, progress=shown.say, report=shown.step)
        failed = bool(result.plan and (result.plan["missing"] or result.plan["conflict"]))
        return result, (1 if failed else 0)

    raise typer.Exit(run_command(json_output, action, render_build, partial_error=lambda r: {
        "code": "cut_refused", "message": "the cut would fail: missing artifacts or a conflicting release"}))


def env_deploy(env: str, version: str | None, **params: Any) -> None:
    from app.cli.env_deploy_ops import execute

    raise typer.Exit(execute(env, version, **params))


def _deploy_signature() -> inspect.Signature:
    """`env deploy`'s parameters for Typer, read from its one declaration (app.cli.env_deploy_ops.FLAGS):
    an ordinary Typer command whose click params list every flag."""
    from app.cli.env_deploy_ops import FLAGS

    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    params = [
        inspect.Parameter("env", kind, annotation=str, default=typer.Argument(..., help="Environment name.")),
        inspect.Parameter("version", kind, annotation=str | None, default=typer.Argument(
            None, help="Release to deploy (default: build and cut one).")),
    ]
    for f in FLAGS:
        annotation = {bool: bool, list: list[str]}.get(f.kind) or (f.kind if f.default is not None else f.kind | None)
        option = JSON_OPTION if f.help is None else typer.Option(f.default, *f.names, help=f.help)
        params.append(inspect.Parameter(f.param, kind, annotation=annotation, default=option))
    return inspect.Signature(params, return_annotation=None)


env_deploy.__signature__ = _deploy_signature()  # type: ignore[attr-defined]
app.command("deploy", help=HELP["deploy"], epilog=(
    "Examples:\n\n  framework env deploy dev --yes\n\n  framework env deploy dev v1.2.0 --plan\n\n"
    "  framework env deploy dev v1.2.0 --plan --json > plan.json\n\n"
    "  framework env deploy dev v1.2.0 --approve sha256:...\n\n  framework env deploy staging --from dev --yes\n\n"
    "Exit codes: 0 deployed/healthy, unchanged, plan only or declined; 1 failed or DEGRADED; 2 control plane "
    "unreachable; 3 promotion_conflict/source_moved; 4 rollout_in_flight; 5 plan_unconfirmed; 6 superseded; "
    "7 queued; 8 wait budget expired."))(env_deploy)


@app.command("status", help=HELP["status"], epilog=(
    "Examples:\n\n  framework env status\n\n  framework env status dev --json\n\n"
    "  framework env status dev --wait --timeout 120\n\n  framework env status dev --history --limit 20\n\n"
    "  framework env status staging --signal health\n\n"
    "Exit codes: 0 everything declared running; 1 drift/missing (or DEGRADED with --wait); 2 could not "
    "determine; 6 superseded; 8 wait timed out. --signal deploy|health|verify: the exit status reflects "
    "only that signal's checks (2 and the outcomes of --wait still apply)."))
def env_status(
    env: str | None = typer.Argument(None, help="Environment name (default: every declared environment)."),
    wait: bool = typer.Option(False, "--wait", help="Wait, pinned to the current promotion, past the window."),
    timeout: float = typer.Option(300.0, "--timeout", help="Seconds to wait (0 reads once)."),
    stability_window: float = typer.Option(2.0, "--stability-window", help="Seconds it must stay up under --wait."),
    history: bool = typer.Option(False, "--history", help="Include the promotion history."),
    limit: int = typer.Option(20, "--limit", help="History page size."),
    before: str | None = typer.Option(None, "--before", help="History cursor: a previous page's next_before."),
    signal: str | None = typer.Option(
        None, "--signal", help="deploy, health or verify: the exit status reflects only that signal's checks."),
    json_output: bool = JSON_OPTION,
) -> None:
    from app.cli.env_status_ops import run

    raise typer.Exit(run(env, wait=wait, timeout=timeout, stability_window=stability_window, history=history,
                         limit=limit, before=before, signal=signal, json_output=json_output))


