"""`framework env ...` (docs/reference-env.md)."""

from __future__ import annotations

from typing import Any

import typer

# the deploy and dev-stack commands live beside this module; importing them registers them on `app`
from app.cli import env_deploy, env_hosted, env_secrets, env_smoke, env_stacks  # noqa: F401
from app.cli.env_group import DEFINE_OPTION, HELP, app, current_project
from app.cli.options import JSON_OPTION


@app.command(
    "list", help=HELP["list"], epilog="Examples:\n\n  framework env list\n\n  framework env list --json"
)
def env_list(json_output: bool = JSON_OPTION) -> None:
    from app.cli.env_list_ops import execute

    raise typer.Exit(execute(json_output))


def _defines(pairs: list[str]) -> dict[str, str]:
    from engine.environments.options import parse_assignments

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
        from engine.environments.options import env_options as list_options

        return list_options(current_project(), env), 0

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
        from engine.environments.bindings import views
        from engine.environments.render.pipeline import render_environment, select, yaml_stream

        rendered = render_environment(
            current_project(), env, _defines(defines), charts=not no_charts, fail_on_write=fail_on_write
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
            "bindings": [b.model_dump() for b in views(rendered.environment)],
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
            _render_bindings(payload["bindings"])
            _render_list(payload["objects"])
        else:
            sys.stdout.write(payload["yaml"])
        if payload["wrote"]:
            from app.output import diagnose

            diagnose(f"the render wrote files: {', '.join(payload['wrote'])}", label="warning")

    raise typer.Exit(run_command(json_output, action, human))


def _render_bindings(bindings: list[dict[str, Any]]) -> None:
    """One line per binding (`env new --bind`): where it places the workload, and what `env deploy` does."""
    import sys

    for b in bindings:
        bucket = f" ({b['bucket']})" if b.get("bucket") else ""
        sys.stdout.write(f"binding: {b['name']} -> {b['binder']}{bucket}; env deploy: {b['deploy']}\n")


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
    _render_bindings([b.model_dump() for b in body.bindings])
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
        from engine.environments.shape import compute_shape

        return compute_shape(current_project(), env, _defines(defines)), 0

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
        from engine.environments.diff import diff_environments

        report = diff_environments(current_project(), env, all_envs=all_envs, charts=charts)
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
    _render_bindings([b.model_dump() for b in result.bindings])


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
        from engine.environments.config import env_config as resolve

        return resolve(current_project(), env, _defines(defines), workload), 0

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
        from engine.environments.new import new_environment

        return new_environment(current_project(), name, from_env=from_env, binds=bind, check=check), 0

    raise typer.Exit(run_command(json_output, action, _render_new))
