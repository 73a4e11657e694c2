"""`framework component list / search / install` (docs/reference-frontends.md#components)."""

from __future__ import annotations

from typing import Any

import typer

from app.cli import group_app
from app.cli.database_views import examples, out
from app.cli.options import JSON_OPTION
from app.registry import FRAMEWORK

app = group_app("framework", "component")
HELP = FRAMEWORK.groups["component"].commands
REGISTRY = typer.Option(None, "--registry",
                        help="A registry: a directory holding registry.json, or an http(s) URL (default: the "
                             "framework's own).")
EXITS = "Exit codes: 0 done; 1 unreadable registry, unknown component or frontend, a changed file; 2 bad usage."


def _run(json_output: bool, action: Any, render: Any) -> None:
    from app.output import run_command

    raise typer.Exit(run_command(json_output, lambda: (action(), 0), render))


def _render_list(result: Any) -> None:
    if not result.components:
        out(f"no component matches {result.query!r}" if result.query else "the registry holds no component")
        return
    width = max(len(c["name"]) for c in result.components)
    for c in result.components:
        out(f"{c['name']:<{width}}  {c['description']}")


@app.command("list", help=HELP["list"], epilog=examples(
    "framework component list", "framework component list --registry ./design-system --json",
    "framework component list --registry https://ui.example.com/r", note=EXITS))
def list_(registry: str | None = REGISTRY, json_output: bool = JSON_OPTION) -> None:
    from engine.authoring.components import list_components

    _run(json_output, lambda: list_components(registry), _render_list)


@app.command("search", help=HELP["search"], epilog=examples(
    "framework component search dialog", "framework component search form input --json",
    note="Every word must appear (case-insensitive); no match is exit 0 with an empty list. " + EXITS))
def search(query: list[str] = typer.Argument(..., help="Words to find."), registry: str | None = REGISTRY,
           json_output: bool = JSON_OPTION) -> None:
    from engine.authoring.components import search_components

    _run(json_output, lambda: search_components(" ".join(query), registry), _render_list)


def _render_install(result: Any) -> None:
    for f in result.files:
        out(f"{f.status:<11} {f.path}  ({f.component})")
    for argv in result.install_command:
        out(f"ran         {' '.join(argv)}")
    added = [*result.dependencies, *result.dev_dependencies]
    if result.package_json_edited:
        out(f"package.json: added {', '.join(added)} (--no-install: run {result.package_manager} install)")
    elif result.dry_run:
        out("dry run: nothing written" + (f"; would add {', '.join(added)}" if added else ""))


@app.command("install", help=HELP["install"], epilog=examples(
    "framework component install button", "framework component install dialog form-field --frontend web",
    "framework component install card --dir src/ui --registry ./design-system --overwrite",
    note="Registry dependencies come first; npm dependencies are added with the frontend's package manager "
         "(its lockfile: pnpm-lock.yaml, yarn.lock, bun.lock, package-lock.json; else npm). A file that differs "
         "from the registry's is refused (nothing written) unless --overwrite. " + EXITS))
def install(names: list[str] = typer.Argument(..., help="Component names."),
            frontend: str | None = typer.Option(
                None, "--frontend", help="The frontend (framework.yaml `frontends`); default: the only one."),
            directory: str | None = typer.Option(
                None, "--dir", help="Install directory inside the frontend (default src/components/ui)."),
            registry: str | None = REGISTRY,
            overwrite: bool = typer.Option(False, "--overwrite", help="Replace files that differ from the registry's."),
            no_install: bool = typer.Option(False, "--no-install",
                                            help="Only add npm dependencies to package.json; run no package manager."),
            dry_run: bool = typer.Option(False, "--dry-run", help="Say what it would write; write nothing."),
            json_output: bool = JSON_OPTION) -> None:
    from engine.authoring.components import install_components
    from engine.project import find_project

    _run(json_output, lambda: install_components(
        find_project(), names, frontend=frontend, directory=directory, registry=registry, overwrite=overwrite,
        install=not no_install, dry_run=dry_run), _render_install)
