"""`framework env ...` (spec 2, framework env)."""

from __future__ import annotations

from typing import Any

import typer

from app.cli import group_app
from app.registry import FRAMEWORK

app = group_app("framework", "env")
HELP = FRAMEWORK.groups["env"].commands

JSON_OPTION = typer.Option(False, "--json", help="Print one JSON document (ok, exit_code, error, payload).")


def _render_env_list(result: Any) -> None:
    from rich.table import Table

    from app.output import stdout_console

    console = stdout_console()
    if not result.environments:
        console.print(f"no environments declared under {result.root}/deploy/kcl/<env>/main.k")
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("NAME", "KIND", "TARGET", "WORKLOADS", "FILE"):
        table.add_column(column)
    for env in result.environments:
        if env.error:
            table.add_row(env.name, "[red]error[/]", "-", "-", env.file)
        else:
            table.add_row(
                env.name, env.kind or "-", env.target or "-", ", ".join(env.workloads) or "-", env.file
            )
    console.print(table)
    from app.output import diagnose

    for env in result.failed:
        diagnose(str((env.error or {}).get("message")), label=f"error in {env.name}")


def _env_list_error(result: Any) -> dict[str, Any]:
    failed = result.failed
    return {
        "code": "kcl_error",
        "message": f"{len(failed)} of {len(result.environments)} environments failed to evaluate: "
                   + ", ".join(env.name for env in failed),
    }


@app.command(
    "list", help=HELP["list"], epilog="Examples:\n\n  framework env list\n\n  framework env list --json"
)
def env_list(json_output: bool = JSON_OPTION) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.environments import list_environments
        from engine.project import find_project

        result = list_environments(find_project())
        return result, (1 if result.failed else 0)

    raise typer.Exit(run_command(json_output, action, _render_env_list, partial_error=_env_list_error))


DEFINE_OPTION = typer.Option(
    [],
    "-D",
    "--define",
    metavar="NAME=VALUE",
    help="Set a render option the environment declares (see `env options`). Repeatable.",
)


def _project() -> Any:
    from engine.project import find_project

    return find_project()


def _defines(pairs: list[str]) -> dict[str, str]:
    from engine.render.options import parse_assignments

    return parse_assignments(pairs)


def _render_options(result: Any) -> None:
    from rich.table import Table

    from app.output import stdout_console

    console = stdout_console()
    if not result.options:
        console.print(f"{result.env} declares no render options (derived: {', '.join(result.derived)})")
        return
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("NAME", "TYPE", "DEFAULT", "HELP"):
        table.add_column(column)
    for opt in result.options:
        table.add_row(opt.name, opt.type, "-" if opt.default is None else opt.default, opt.help or "-")
    console.print(table)


@app.command(
    "options",
    help=HELP["options"],
    epilog="Examples:\n\n  framework env options staging\n\n  framework env options staging --json",
)
def env_options(
    env: str = typer.Argument(..., help="Environment name (deploy/kcl/<env>/main.k)."),
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.render.options import env_options as list_options

        return list_options(_project(), env), 0

    raise typer.Exit(run_command(json_output, action, _render_options))


def _render_list(objects: list[Any]) -> None:
    from rich.table import Table

    from app.output import stdout_console

    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("CLUSTER", "KIND", "NAMESPACE", "NAME", "WORKLOAD"):
        table.add_column(column)
    for obj in objects:
        table.add_row(
            obj["cluster"], obj["kind"], obj.get("namespace") or "-", obj["name"], obj.get("workload") or "-"
        )
    stdout_console().print(table)


@app.command(
    "render",
    help=HELP["render"],
    epilog=(
        "Examples:\n\n  framework env render cluster\n\n"
        "  framework env render cluster --kind Deployment,Service\n\n"
        "  framework env render cluster --list --target api\n\n"
        "  framework env render cluster -D api_replicas=2 --json"
    ),
)
def env_render(
    env: str = typer.Argument(..., help="Environment name (deploy/kcl/<env>/main.k)."),
    list_only: bool = typer.Option(
        False, "--list", help="List the rendered objects instead of printing YAML."
    ),
    cluster: str | None = typer.Option(None, "--cluster", help="Only objects for this cluster."),
    kind: str | None = typer.Option(None, "--kind", help="Only these kinds, comma-separated (k1,k2)."),
    target: list[str] = typer.Option(
        [], "--target", help="Only objects of this workload or frontend. Repeatable."
    ),
    no_charts: bool = typer.Option(False, "--no-charts", help="Skip Helm charts the environment declares."),
    fail_on_write: bool = typer.Option(False, "--fail-on-write", help="Fail if rendering wrote any file."),
    defines: list[str] = DEFINE_OPTION,
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.render.pipeline import render_environment, select, yaml_stream

        rendered = render_environment(
            _project(), env, _defines(defines), charts=not no_charts, fail_on_write=fail_on_write
        )
        objects = select(rendered, cluster=cluster, kinds=kind.split(",") if kind else None, targets=target)
        payload = {
            "project": rendered.project,
            "env": env,
            "kind": rendered.kind,
            "runtime": rendered.runtime,
            "clusters": rendered.clusters,
            "options": rendered.options,
            "wrote": rendered.wrote,
            "objects": [
                o.model_dump(mode="json", exclude={"document"} if list_only else None) for o in objects
            ],
        }
        if not list_only:
            payload["yaml"] = yaml_stream(rendered, objects)
        return payload, 0

    def human(payload: dict[str, Any]) -> None:
        import sys

        if list_only:
            _render_list(payload["objects"])
        else:
            sys.stdout.write(payload["yaml"])
        if payload["wrote"]:
            from app.output import diagnose

            diagnose(f"the render wrote files: {', '.join(payload['wrote'])}", label="warning")

    raise typer.Exit(run_command(json_output, action, human))


def _render_shape(shape: Any) -> None:
    from rich.table import Table

    from app.output import stdout_console

    console = stdout_console()
    body = shape.shape
    console.print(
        f"{shape.project}/{shape.env}  kind {shape.kind}  runtime {body.runtime}  "
        f"clusters {', '.join(body.clusters)}"
    )
    console.print(
        f"secrets: {', '.join(body.secret_names) or '-'}   domains: {', '.join(body.domains) or '-'}"
    )
    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("CLUSTER", "KIND", "NAMESPACE", "NAME", "HASH"):
        table.add_column(column)
    for obj in body.objects:
        table.add_row(
            obj.cluster, obj.kind, obj.namespace or "-", obj.name, obj.hash.removeprefix("sha256:")[:12]
        )
    console.print(table)


@app.command(
    "shape",
    help=HELP["shape"],
    epilog=("Examples:\n\n  framework env shape staging\n\n  framework env shape staging --json"),
)
def env_shape(
    env: str = typer.Argument(..., help="Environment name (deploy/kcl/<env>/main.k)."),
    defines: list[str] = DEFINE_OPTION,
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.shape import compute_shape

        return compute_shape(_project(), env, _defines(defines)), 0

    raise typer.Exit(run_command(json_output, action, _render_shape))


def _render_diff(report: Any) -> None:
    from app.output import stdout_console

    console = stdout_console()
    for env in report.environments:
        counts = ", ".join(f"{n} {k}" for k, n in sorted(env.counts.items())) or "no objects"
        console.print(f"[bold]{env.env}[/]: {env.status} (against {env.baseline}: {counts})")
        if env.error:
            console.print(f"  {env.error.get('message')}", markup=False)
        for change in env.changes:
            if change.change in ("unchanged", "declared"):
                continue
            mark = {"added": "+", "removed": "-", "changed": "~"}[change.change]
            console.print(f"  {mark} {change.key}", markup=False)


def _diff_error(report: Any) -> dict[str, Any]:
    bad = report.failing
    return {"code": "diff_guard", "message": "; ".join(f"{e.env}: {e.status}" for e in bad)}


@app.command(
    "diff",
    help=HELP["diff"],
    epilog=("Examples:\n\n  framework env diff staging\n\n  framework env diff --all --json"),
)
def env_diff(
    env: str | None = typer.Argument(None, help="Environment name; all environments when omitted."),
    all_envs: bool = typer.Option(False, "--all", help="Every declared environment."),
    charts: bool = typer.Option(False, "--charts", help="Include objects rendered from Helm charts."),
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.envdiff import diff_environments

        report = diff_environments(_project(), env, all_envs=all_envs, charts=charts)
        return report, (1 if report.failing else 0)

    raise typer.Exit(run_command(json_output, action, _render_diff, partial_error=_diff_error))


def _render_config(result: Any) -> None:
    from rich.table import Table

    from app.output import stdout_console

    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("WORKLOAD", "NAME", "VALUE", "SOURCE"):
        table.add_column(column)
    for wl in result.workloads:
        for var in wl.vars:
            table.add_row(wl.workload, var.name, var.shown(), var.source)
    stdout_console().print(table)


@app.command(
    "config",
    help=HELP["config"],
    epilog=(
        "Examples:\n\n  framework env config dev\n\n  framework env config staging --workload api --json"
    ),
)
def env_config(
    env: str = typer.Argument(..., help="Environment name (deploy/kcl/<env>/main.k)."),
    workload: str | None = typer.Option(None, "--workload", help="Only this workload."),
    defines: list[str] = DEFINE_OPTION,
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.envconfig import env_config as resolve

        return resolve(_project(), env, _defines(defines), workload), 0

    raise typer.Exit(run_command(json_output, action, _render_config))


def _render_new(result: Any) -> None:
    from app.output import stdout_console

    console = stdout_console()
    if not result.created:
        console.print(f"{result.file}: no placeholders left; it evaluates", markup=False)
        return
    console.print(f"created {result.file}", markup=False)
    for left in result.placeholders:
        console.print(f"  replace: {left}", markup=False)
    if result.placeholders:
        console.print(
            f"renders refuse it until then; check with: framework env new {result.env} --check", markup=False
        )


@app.command(
    "new",
    help=HELP["new"],
    epilog=(
        "Examples:\n\n  framework env new qa --from staging\n\n  framework env new edge --bind api=hosted\n\n"
        "  framework env new qa --check"
    ),
)
def env_new(
    name: str = typer.Argument(..., help="Name of the new environment."),
    from_env: str | None = typer.Option(None, "--from", help="Copy this environment's declaration."),
    check: bool = typer.Option(False, "--check", help="Check an existing environment has no placeholders."),
    bind: list[str] = typer.Option(
        [],
        "--bind",
        metavar="NAME=BINDER",
        help="Bind a workload or frontend: hosted, cluster or bucket. Repeatable.",
    ),
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.envnew import new_environment

        return new_environment(_project(), name, from_env=from_env, binds=bind, check=check), 0

    raise typer.Exit(run_command(json_output, action, _render_new))


# -- env build / deploy / status (spec 2: framework env, Deploy, Status) ----------------------

def _progress(message: str) -> None:
    """Progress of long work on stderr: styled on a terminal, plain lines otherwise (STYLE, Commands)."""
    import os
    import sys

    if sys.stderr.isatty() and not os.environ.get("NO_COLOR"):
        from rich.markup import escape

        from app.output import stderr_console

        stderr_console().print(f"[cyan]>[/] {escape(message)}")
        return
    sys.stderr.write(f"  {message}\n")
    sys.stderr.flush()


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

    def action() -> tuple[Any, int]:
        from engine.build.dispatch import env_build as build
        from engine.project import find_project

        result = build(find_project(), env, targets=target or None, push=push, release=release, tag=tag,
                       no_build=no_build, plan=plan, progress=_progress)
        failed = bool(result.plan and (result.plan["missing"] or result.plan["conflict"]))
        return result, (1 if failed else 0)

    raise typer.Exit(run_command(json_output, action, render_build, partial_error=lambda r: {
        "code": "cut_refused", "message": "the cut would fail: missing artifacts or a conflicting release"}))


@app.command("deploy", help=HELP["deploy"], epilog=(
    "Examples:\n\n  framework env deploy dev --yes\n\n  framework env deploy dev v1.2.0 --plan\n\n"
    "  framework env deploy dev v1.2.0 --plan --json > plan.json\n\n"
    "  framework env deploy dev v1.2.0 --approve sha256:...\n\n  framework env deploy staging --from dev --yes\n\n"
    "Exit codes: 0 deployed/healthy, unchanged, plan only or declined; 1 failed or DEGRADED; 2 control plane "
    "unreachable; 3 promotion_conflict/source_moved; 4 rollout_in_flight; 5 plan_unconfirmed; 6 superseded; "
    "7 queued; 8 wait budget expired."))
def env_deploy(
    env: str = typer.Argument(..., help="Environment name."),
    version: str | None = typer.Argument(None, help="Release to deploy (default: build and cut one)."),
    from_env: str | None = typer.Option(None, "--from", help="Deploy exactly what that environment runs."),
    plan: bool = typer.Option(False, "--plan", help="Show the whole change set; writes nothing."),
    plan_only: bool = typer.Option(False, "--plan-only", help="Stage one: cut the release, write no promotion."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Approve the plan just read."),
    approve: str | None = typer.Option(None, "--approve", help="Approve only the plan with this digest."),
    acknowledge_destructive: str = typer.Option("", "--acknowledge-destructive",
                                                help="Comma-separated stop-class finding codes to accept."),
    expect_current: str | None = typer.Option(None, "--expect-current", help="Refuse (exit 3) unless this is current."),
    expect_unbound: bool = typer.Option(False, "--expect-unbound", help="Refuse (exit 3) if anything is bound."),
    supersede: bool = typer.Option(False, "--supersede", help="Replace an unfinished rollout (recorded)."),
    gate: str | None = typer.Option(None, "--gate", help="Gate evidence file to freeze onto the promotion."),
    no_wait: bool = typer.Option(False, "--no-wait", help="Apply without waiting for health."),
    wait: bool = typer.Option(False, "--wait", help="Wait for health (the default)."),
    timeout: float = typer.Option(300.0, "--timeout", help="Wait budget in seconds (exit 8 when it expires)."),
    stability_window: float = typer.Option(2.0, "--stability-window", help="Seconds the new version stays healthy."),
    grace: float = typer.Option(30.0, "--grace", help="Seconds transient health failures are tolerated."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Plan and preflight; writes nothing."),
    explain: bool = typer.Option(False, "--explain", help="Say what would happen and why; writes nothing."),
    tag: str | None = typer.Option(None, "--tag", help="Image tag for builds."),
    namespace: str | None = typer.Option(None, "--namespace", help="Namespace (cluster targets)."),
    target: list[str] = typer.Option([], "--target", help="Only this app (repeatable; needs a version)."),
    skip_frontend: bool = typer.Option(False, "--skip-frontend", help="Do not deploy frontends."),
    frontends_only: bool = typer.Option(False, "--frontends-only", help="Deploy only frontends (needs a version)."),
    skip_preflight: bool = typer.Option(False, "--skip-preflight", help="Skip the remote-cluster preflight."),
    events: bool = typer.Option(False, "--events", help="Stream one JSON line per rollout phase change."),
    json_output: bool = JSON_OPTION,
) -> None:
    import json as _json
    import sys

    from app.cli.deploy_views import render_deploy
    from app.output import run_command

    def confirm(plan_obj: Any, release: str) -> bool:
        from engine.deploy.plan import render_plan_markdown

        sys.stderr.write(render_plan_markdown(plan_obj, env, None) + "\n")  # the plan is read before the answer
        return typer.confirm(f"Deploy {release} to {env}?", default=False, err=True)

    def emit(event: dict[str, Any]) -> None:
        stream = sys.stderr if json_output else sys.stdout
        stream.write(_json.dumps(event) + "\n")
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
                        emit=emit if events else None, progress=_progress)
        if json_output:  # rule 10: one document on stdout; human output moves to stderr
            render_deploy(result, sys.stderr)
        return result, result.exit_code

    raise typer.Exit(run_command(json_output, action, render_deploy, partial_error=lambda r: r.error))


@app.command("status", help=HELP["status"], epilog=(
    "Examples:\n\n  framework env status\n\n  framework env status dev --json\n\n"
    "  framework env status dev --wait --timeout 120\n\n  framework env status dev --history --limit 20\n\n"
    "Exit codes: 0 everything declared running; 1 drift/missing (or DEGRADED with --wait); 2 could not "
    "determine; 6 superseded; 8 wait timed out."))
def env_status(
    env: str | None = typer.Argument(None, help="Environment name (default: every declared environment)."),
    wait: bool = typer.Option(False, "--wait", help="Wait, pinned to the current promotion, past the window."),
    timeout: float = typer.Option(300.0, "--timeout", help="Seconds to wait (0 reads once)."),
    stability_window: float = typer.Option(2.0, "--stability-window", help="Seconds it must stay up under --wait."),
    history: bool = typer.Option(False, "--history", help="Include the promotion history."),
    limit: int = typer.Option(20, "--limit", help="History page size."),
    before: str | None = typer.Option(None, "--before", help="History cursor: a previous page's next_before."),
    json_output: bool = JSON_OPTION,
) -> None:
    from app.cli.deploy_views import render_status
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.deploy.status import env_status as status
        from engine.project import find_project

        return status(find_project(), env, wait=wait, timeout=timeout, history=history, limit=limit,
                      before=before, stability_window=stability_window)

    def why(result: Any) -> dict[str, Any]:
        bad = [s for s in result.environments if s.exit_code]
        first = bad[0]
        names = {1: "wrong", 2: "undetermined", 6: "superseded", 7: "queued", 8: "wait_timed_out"}
        bad_images = [f"{i['name']} {i['state']}" for i in first.images if i["state"] != "match"]
        detail = first.message or ", ".join(bad_images) \
            or first.health
        return {"code": names.get(first.exit_code, "failed"), "message": f"{first.env}: {detail}"}

    raise typer.Exit(run_command(json_output, action, render_status, partial_error=why))


# -- env up / down / ps and env devstack (spec 2: env up, env down, env ps, env devstack) -------

@app.command("up", help=HELP["up"], context_settings={"allow_extra_args": True}, epilog=(
    "Examples:\n\n  framework env up dev\n\n  framework env up dev --background --no-build\n\n"
    "  framework env up dev --watch\n\n  framework env up dev -D greeting=hi --target api\n\n"
    "  framework env up dev -- --host 0.0.0.0   (tokens after -- go to each frontend's dev server)\n\n"
    "Without a terminal it returns, leaving the stack running; on a terminal (or with --watch) it holds the "
    "foreground and tears the stack down on Ctrl-C (exit 130). --background beats --watch.\n\n"
    "Exit codes: 0 up (or held and stopped from elsewhere); 1 failed (not local, build, busy port, unhealthy, "
    "no free port block); 2 invalid input (-D undeclared or derived, unknown --target); 130 interrupted."))
def env_up(
    ctx: typer.Context,
    env: str = typer.Argument(..., help="A local environment (deploy/kcl/<env>/main.k)."),
    no_build: bool = typer.Option(False, "--no-build", help="Skip the build phase."),
    no_deploy: bool = typer.Option(False, "--no-deploy", help="Skip the deploy phase."),
    no_seed: bool = typer.Option(False, "--no-seed", help="Do not auto-seed an empty dev database."),
    target: list[str] = typer.Option([], "--target", help="Only this workload or frontend (repeatable)."),
    define: list[str] = DEFINE_OPTION,
    watch: bool = typer.Option(False, "--watch", help="Rebuild and restart what changed; holds the foreground."),
    background: bool = typer.Option(False, "--background", help="Return once healthy, even on a terminal."),
    timeout: float = typer.Option(60.0, "--timeout", help="Seconds each phase may take to become healthy."),
    json_output: bool = JSON_OPTION,
) -> None:
    import signal
    import sys

    from app.cli.devstack_views import LiveStatus, render_up
    from app.output import run_command

    terminal = sys.stdin.isatty() and sys.stdout.isatty() and not json_output
    hold = not background and (terminal or watch)
    view = LiveStatus()

    def on_term(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    def action() -> tuple[Any, int]:
        from engine.devstack.up import UpOptions
        from engine.devstack.up import env_up as up
        from engine.render.options import parse_assignments

        opts = UpOptions(no_build=no_build, no_deploy=no_deploy, no_seed=no_seed, targets=target,
                         defines=parse_assignments(define), watch=watch and not background, background=background,
                         dev_args=list(ctx.args), timeout=timeout, hold=hold)
        if hold:
            signal.signal(signal.SIGTERM, on_term)  # a terminated foreground stack tears down like Ctrl-C
        try:
            result = up(_project(), env, opts, progress=view.progress, on_status=view.status if terminal else None)
        finally:
            view.close()
        return result, (130 if result.interrupted else 0)

    raise typer.Exit(run_command(json_output, action, render_up, partial_error=lambda r: {
        "code": "interrupted", "message": "interrupted: the stack was torn down"}))


@app.command("down", help=HELP["down"], epilog=(
    "Examples:\n\n  framework env down dev\n\n  framework env down          (every stack of this worktree)\n\n"
    "  framework env down --all --json\n\n"
    "Only processes carrying the framework's ownership markers (and matching the stack's record) are "
    "signalled; never this command or its ancestors; containers, cluster workloads and hosted environments "
    "are not touched.\n\nExit codes: 0 stopped (or nothing to stop); 1 a process survived SIGKILL."))
def env_down(
    env: str | None = typer.Argument(None, help="Environment (default: every stack of this worktree)."),
    all_stacks: bool = typer.Option(False, "--all", help="Stop every dev stack on this machine."),
    json_output: bool = JSON_OPTION,
) -> None:
    from app.cli.devstack_views import render_down
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.devstack.checkout import detect
        from engine.devstack.stacks import down

        if all_stacks:
            result = down(None, env, None, all_stacks=True)
        else:
            project = _project()
            result = down(project.key, env, detect(project.root).key)
        return result, (1 if result.survivors else 0)

    raise typer.Exit(run_command(json_output, action, render_down, partial_error=lambda r: {
        "code": "survived", "message": f"{len(r.survivors)} process(es) survived SIGKILL"}))


@app.command("ps", help=HELP["ps"], epilog=(
    "Examples:\n\n  framework env ps\n\n  framework env ps --json"))
def env_ps(json_output: bool = JSON_OPTION) -> None:
    from app.cli.devstack_views import render_ps
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.devstack.stacks import ps

        return ps(), 0

    raise typer.Exit(run_command(json_output, action, render_ps))


def _devstack_app() -> Any:
    from app.cli import _typer_app
    from app.registry import DEVSTACK

    sub = _typer_app(DEVSTACK.help, DEVSTACK.examples)

    @sub.callback()
    def devstack_main(ctx: typer.Context, json_output: bool = typer.Option(
            False, "--json", help="Print one JSON document for the sub-command (same as its own --json).")) -> None:
        ctx.obj = {"json": json_output}

    def wants_json(ctx: typer.Context, flag: bool) -> bool:
        parent = ctx.parent.obj if ctx.parent is not None and isinstance(ctx.parent.obj, dict) else {}
        return flag or bool(parent.get("json"))

    @sub.command("port", help=DEVSTACK.commands["port"], epilog=(
        "Examples:\n\n  framework env devstack port 8080\n\n  framework env devstack port 5432 --key tools\n\n"
        "Exit codes: 0 printed; 1 no free block (dev_stack.max_stacks) or unreadable registry; 2 bad base."))
    def devstack_port(ctx: typer.Context, base: int = typer.Argument(..., help="Base port (the primary checkout's)."),
                      key: str | None = typer.Option(None, "--key",
                                                     help="A standalone key instead of this worktree's."),
                      json_output: bool = JSON_OPTION) -> None:
        from app.output import run_command, stdout_console

        def action() -> tuple[Any, int]:
            from engine.devstack.blocks import port

            return port(_project(), base, key=key), 0

        raise typer.Exit(run_command(wants_json(ctx, json_output), action,
                                     lambda r: stdout_console().print(str(r.port))))

    @sub.command("key", help=DEVSTACK.commands["key"], epilog=(
        "Examples:\n\n  framework env devstack key\n\n  framework env devstack key --json"))
    def devstack_key(ctx: typer.Context, json_output: bool = JSON_OPTION) -> None:
        from app.output import run_command

        def action() -> tuple[Any, int]:
            from engine.devstack.checkout import detect

            return detect(_project().root), 0

        def show(r: Any) -> None:
            typer.echo(r.key)

        raise typer.Exit(run_command(wants_json(ctx, json_output), action, show))

    @sub.command("list", help=DEVSTACK.commands["list"], epilog=(
        "Examples:\n\n  framework env devstack list\n\n  framework env devstack list --stacks-only\n\n"
        "  framework env devstack list --json"))
    def devstack_list(ctx: typer.Context, stacks_only: bool = typer.Option(
            False, "--stacks-only", help="Print dev-stack keys only, one a line."),
            json_output: bool = JSON_OPTION) -> None:
        from app.cli.devstack_views import render_blocks
        from app.output import run_command

        def action() -> tuple[Any, int]:
            from engine.devstack.blocks import list_blocks

            result = list_blocks(_project())
            if stacks_only:
                result.blocks = [b for b in result.blocks if b.label == "dev stack"]
            return result, 0

        raise typer.Exit(run_command(wants_json(ctx, json_output), action, lambda r: render_blocks(r, stacks_only)))

    @sub.command("prune", help=DEVSTACK.commands["prune"], epilog=(
        "Examples:\n\n  framework env devstack prune\n\n  framework env devstack prune --dry-run --json\n\n"
        "Never reclaims standalone keys, the default key or entries without a recorded origin."))
    def devstack_prune(ctx: typer.Context, dry_run: bool = typer.Option(
            False, "--dry-run", help="Show what would be reclaimed; change nothing."),
            json_output: bool = JSON_OPTION) -> None:
        from app.cli.devstack_views import render_change
        from app.output import run_command

        def action() -> tuple[Any, int]:
            from engine.devstack.blocks import prune

            return prune(_project(), dry_run=dry_run), 0

        raise typer.Exit(run_command(wants_json(ctx, json_output), action, render_change))

    @sub.command("release", help=DEVSTACK.commands["release"], epilog=(
        "Examples:\n\n  framework env devstack release feature-x\n\n"
        "  framework env devstack release feature-x --apply\n\n"
        "Exit codes: 0 released (or would be); 1 unknown key or a running stack holds it; 2 the default key."))
    def devstack_release(ctx: typer.Context, key: str = typer.Argument(..., help="The key whose block to release."),
                         apply: bool = typer.Option(False, "--apply", help="Release it (default: dry run)."),
                         json_output: bool = JSON_OPTION) -> None:
        from app.cli.devstack_views import render_change
        from app.output import run_command

        def action() -> tuple[Any, int]:
            from engine.devstack.blocks import release

            return release(_project(), key, apply=apply), 0

        raise typer.Exit(run_command(wants_json(ctx, json_output), action, render_change))

    return sub


app.add_typer(_devstack_app(), name="devstack", help=HELP["devstack"])
