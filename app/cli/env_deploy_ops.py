"""What `framework env deploy` does and prints, without Typer.

`app/cli/env_deploy.py` declares the command for Typer (help, examples, validation) and calls
`execute`; `app.main` calls `fast` first, which parses only well-formed invocations and otherwise
returns None so Typer handles the rest (help, usage errors). A deploy then costs the interpreter
and the deploy path's imports, not Typer's import and parse (~0.1 s; bench/k8s.py).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, NamedTuple


class Flag(NamedTuple):
    """One `env deploy` flag, declared once: the Typer command (app/cli/env_deploy.py), the fast parser's
    OPTIONS and DEFAULTS, `execute`'s parameters and the DeployOptions it builds are all read from FLAGS."""

    param: str  # the command's parameter (Typer's and the fast parser's destination)
    names: tuple[str, ...]
    kind: Any  # bool: a switch; list: a repeatable value; else the value's type
    default: Any
    help: str | None  # None: the shared --json option (app/cli/options.py)
    field: str | None = ""  # the DeployOptions field: "" the same name, None: the command's own (not the deploy's)
    convert: Callable[[Any, dict[str, Any]], Any] | None = None  # (value, every parameter) -> the field's value


def _codes(value: str, _params: dict[str, Any]) -> list[str]:
    return [c.strip() for c in value.split(",") if c.strip()]


FLAGS: tuple[Flag, ...] = (
    Flag("from_env", ("--from",), str, None, "Deploy exactly what that environment runs."),
    Flag("plan", ("--plan",), bool, False, "Show the whole change set; writes nothing."),
    Flag("plan_only", ("--plan-only",), bool, False, "Stage one: cut the release, write no promotion."),
    Flag("yes", ("--yes", "-y"), bool, False, "Approve the plan just read."),
    Flag("approve", ("--approve",), str, None, "Approve only the plan with this digest."),
    Flag("acknowledge_destructive", ("--acknowledge-destructive",), str, "",
         "Comma-separated stop-class finding codes to accept.", convert=_codes),
    Flag("expect_current", ("--expect-current",), str, None, "Refuse (exit 3) unless this is current."),
    Flag("expect_unbound", ("--expect-unbound",), bool, False, "Refuse (exit 3) if anything is bound."),
    Flag("supersede", ("--supersede",), bool, False, "Replace an unfinished rollout (recorded)."),
    Flag("gate", ("--gate",), str, None, "Gate evidence file to freeze onto the promotion.", field="gate_file"),
    Flag("no_wait", ("--no-wait",), bool, False, "Apply without waiting for health.", field=None),
    Flag("wait", ("--wait",), bool, False, "Wait for health (the default).",
         convert=lambda wait, params: wait or not params["no_wait"]),
    Flag("timeout", ("--timeout",), float, 300.0, "Wait budget in seconds (exit 8 when it expires)."),
    Flag("stability_window", ("--stability-window",), float, 2.0, "Seconds the new version stays healthy."),
    Flag("grace", ("--grace",), float, 30.0, "Seconds transient health failures are tolerated."),
    Flag("dry_run", ("--dry-run",), bool, False, "Plan and preflight; writes nothing."),
    Flag("explain", ("--explain",), bool, False, "Say what would happen and why; writes nothing."),
    Flag("tag", ("--tag",), str, None, "Image tag for builds."),
    Flag("namespace", ("--namespace",), str, None,
         "Kubernetes namespace replacing the K8sCluster target's (env status follows)."),
    Flag("target", ("--target",), list, [], "Only this workload (repeatable; needs a version); the others "
         "keep running as they are.", field="targets"),
    Flag("skip_frontend", ("--skip-frontend",), bool, False, "Keep the served frontends: hosted, only when the "
         "release's frontend files equal the running ones (else refused); elsewhere deploys none (a note says so)."),
    Flag("frontends_only", ("--frontends-only",), bool, False, "Only frontends change: hosted, only when the "
         "release's workload images equal the running ones (else refused); refused elsewhere; needs a version."),
    Flag("skip_preflight", ("--skip-preflight",), bool, False, "Skip the remote-cluster preflight."),
    Flag("events", ("--events",), bool, False, "Stream one JSON line per rollout phase change.", field=None),
    Flag("json_output", ("--json",), bool, False, None, field=None),
)
# option -> (parameter, kind), and parameter -> default, as app.cli.fast_args reads them
OPTIONS: dict[str, tuple[str, Any]] = {name: (f.param, f.kind) for f in FLAGS for name in f.names}
DEFAULTS: dict[str, Any] = {f.param: f.default for f in FLAGS}


def deploy_options(params: dict[str, Any]) -> dict[str, Any]:
    """The DeployOptions fields (but `version`) of the command's parameters."""
    return {f.field or f.param: f.convert(params[f.param], params) if f.convert else params[f.param]
            for f in FLAGS if f.field is not None}


def execute(env: str, version: str | None, **params: Any) -> int:
    """Run one deploy and render it (one JSON document with --json); its exit code. `params`: one
    value per FLAGS entry, by parameter name."""
    json_output, events = params["json_output"], params["events"]
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
        from engine.project import find_project

        project = find_project()
        if params["yes"] or params["approve"]:  # a Compose environment's `up -d` starts now (compose_early.py)
            from engine.runtime.compose_early import start_early

            start_early(project.key, env, params["target"])
        from app.progress import sink
        from engine.deploy.deploy import DeployOptions, deploy

        opts = DeployOptions(version=version, **deploy_options(params))
        terminal = sys.stdin.isatty() and not json_output
        try:
            with sink(json_output) as shown:  # bars for its build and artifact uploads, on a terminal only
                result = deploy(project, env, opts, confirm=confirm if terminal else None,
                                emit=emit if events else None, progress=progress, report=shown.step)
        finally:
            if params["yes"] or params["approve"]:  # refused before the compose branch took it: ended unread
                from engine.runtime.compose_early import end_unused

                end_unused()
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
    version = positional[1] if len(positional) == 2 else None
    early = _start_kubectl(positional[0], version, params)
    try:
        return execute(positional[0], version, **params)
    finally:
        if early:  # a deploy refused or failed before its apply took it: ended, its input still open
            from engine.runtime.k8s_early import end_unused

            end_unused()


def _start_kubectl(env: str, version: str | None, params: dict[str, Any]) -> bool:
    """An approved deploy of a named release, whole: its kubectl starts now with the objects an
    identical deploy rendered before, when stored (engine/runtime/k8s_early.py), before pydantic and
    the deploy engine are imported. Whether it tried (its end is then this command's to ensure)."""
    if (version is None or not (params["yes"] or params["approve"]) or params["from_env"] or params["target"]
            or params["frontends_only"] or params["dry_run"] or params["plan"] or params["plan_only"]
            or params["explain"]):
        return False
    from engine.errors import EngineError
    from engine.project import find_project
    from engine.runtime.k8s_early import start_early

    try:
        start_early(find_project().root, env, version, params["namespace"])
    except EngineError:
        pass
    return True
