"""`framework env up|down|ps` and `env devstack ...` (docs/reference-devstack.md#commands).

Registered on the `env` group defined in app/cli/env.py.
"""

from __future__ import annotations

from typing import Any

import typer

from app.cli.env_group import DEFINE_OPTION, HELP, app, current_project
from app.cli.options import JSON_OPTION


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
        from engine.environments.options import parse_assignments

        opts = UpOptions(no_build=no_build, no_deploy=no_deploy, no_seed=no_seed, targets=target,
                         defines=parse_assignments(define), watch=watch and not background, background=background,
                         dev_args=list(ctx.args), timeout=timeout, hold=hold)
        if hold:
            signal.signal(signal.SIGTERM, on_term)  # a terminated foreground stack tears down like Ctrl-C
        try:
            result = up(current_project(), env, opts, progress=view.progress,
                        on_status=view.status if terminal else None)
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
            project = current_project()
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

            return port(current_project(), base, key=key), 0

        raise typer.Exit(run_command(wants_json(ctx, json_output), action,
                                     lambda r: stdout_console().print(str(r.port))))

    @sub.command("key", help=DEVSTACK.commands["key"], epilog=(
        "Examples:\n\n  framework env devstack key\n\n  framework env devstack key --json"))
    def devstack_key(ctx: typer.Context, json_output: bool = JSON_OPTION) -> None:
        from app.output import run_command

        def action() -> tuple[Any, int]:
            from engine.devstack.checkout import detect

            return detect(current_project().root), 0

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

            result = list_blocks(current_project())
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

            return prune(current_project(), dry_run=dry_run), 0

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

            return release(current_project(), key, apply=apply), 0

        raise typer.Exit(run_command(wants_json(ctx, json_output), action, render_change))

    return sub


app.add_typer(_devstack_app(), name="devstack", help=HELP["devstack"])
