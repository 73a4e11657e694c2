"""`framework generate` and `framework build [env]` (docs/reference-authoring.md#commands)."""

from __future__ import annotations

from typing import Any

import typer

from app.cli.database_views import examples, out
from app.cli.options import JSON_OPTION
from app.registry import FRAMEWORK


def _app(name: str, note: str) -> Any:
    group = FRAMEWORK.groups[name]
    # A group with no sub-commands: options may follow its argument (`build dev --json`).
    return typer.Typer(help=group.help, add_completion=False, invoke_without_command=True,
                       pretty_exceptions_enable=False, subcommand_metavar="",
                       context_settings={"help_option_names": ["--help", "-h"], "allow_interspersed_args": True},
                       epilog=examples(*group.examples, note=note))


generate_app = _app("generate", "Generated files carry a framework:hash marker and are rewritten freely; "
                                "handler stubs internal/handlers/<svc>/rpc_<name>.go are yours from birth. "
                                "Exit codes: 0 done; 1 a tool failed or an input is invalid; 2 bad usage.")
build_app = _app("build", "Without an environment: every entry of `binaries` (go build -o bin/<name>) and every "
                          "docker or shell service. Exit codes: 0 built; 1 a build failed or a tool is missing.")


def render_files(result: Any) -> None:
    for item in result.files:
        if item.status in ("written", "created", "removed"):
            out(f"{item.status:8} {item.path}")


@generate_app.callback(invoke_without_command=True)
def generate(dry_run: bool = typer.Option(False, "--dry-run", help="List the files it would write; write none."),
             full: bool = typer.Option(False, "--full", help="Compile and render even when nothing changed."),
             json_output: bool = JSON_OPTION) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.authoring.generate import generate as run
        from engine.project import find_project

        return run(find_project(), dry_run=dry_run, full=full), 0

    def human(result: Any) -> None:
        if result.up_to_date:
            out("up to date: protos, migrations and generated files unchanged since the last run")
            return
        render_files(result)
        verb = "would change" if result.dry_run else "changed"
        out(f"{len(result.changed)} files {verb}")

    raise typer.Exit(run_command(json_output, action, human))


@build_app.callback(invoke_without_command=True)
def build(env: str | None = typer.Argument(None, help="An environment: build its workloads as env build does."),
          json_output: bool = JSON_OPTION) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.authoring.build import build as run
        from engine.project import find_project

        return run(find_project(), env), 0

    def human(result: Any) -> None:
        for item in [*result.builds, *getattr(result, "frontends", [])]:
            out(f"{item.status:8} {item.workload} ({item.type}, {item.seconds}s)")

    raise typer.Exit(run_command(json_output, action, human))
