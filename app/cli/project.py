"""`framework project ...` (docs/reference-authoring.md#commands): new, introspect handlers, scaffolded,
rescaffold, disown, migrate import (migrate tdd: app/cli/project_tdd.py)."""

from __future__ import annotations

from typing import Any

import typer

from app.cli import group_app
from app.cli.database_views import JSON_OPTION, examples, out, run, sub_app
from app.cli.project_info import project_app as info_app
from app.cli.project_map import commands as map_commands
from app.cli.project_tdd import commands as tdd_commands
from app.registry import FRAMEWORK, PROJECT_INTROSPECT, PROJECT_MIGRATE
from engine.authoring.features import FEATURE_TABLE  # a table only: no imports of its own

app = group_app("framework", "project")
migrate = sub_app(PROJECT_MIGRATE)
app.add_typer(migrate, name="migrate")
migrate.add_typer(tdd_commands)  # project migrate tdd (app/cli/project_tdd.py)
introspect = sub_app(PROJECT_INTROSPECT)
app.add_typer(introspect, name="introspect")
app.add_typer(info_app)  # annotations, capabilities, features, libraries, checkouts (no name: merged)
app.add_typer(map_commands)  # project map, project audit (app/cli/project_map.py)
from app.cli.project_upgrade import upgrade_app  # noqa: E402  (docs/reference-project.md#project-upgrade)

app.add_typer(upgrade_app, name="upgrade")
HELP = FRAMEWORK.groups["project"].commands


def _render_import(result: Any) -> None:
    for item in result.imported:
        out(f"{item.source} -> {', '.join(item.files)}" + ("  (NO TRANSACTION)" if item.no_transaction else ""))
    for item in result.skipped:
        out(f"skipped {item.file}: {item.reason}")


@migrate.command("import", help=PROJECT_MIGRATE.commands["import"], epilog=examples(
    "framework project migrate import --from goose --src-dir old/migrations --dest-dir db/migrations",
    "framework project migrate import --from goose --src-dir old --dest-dir db/migrations --json",
    note="StatementBegin/StatementEnd blocks stay one statement; a NO TRANSACTION file becomes one file per "
         "statement. Exit codes: 0 imported; 1 unreadable sources; 2 bad input."))
def migrate_import(ctx: typer.Context, source: str = typer.Option(..., "--from", help="The tool: goose."),
                   src_dir: str = typer.Option(..., "--src-dir", help="The tool's migrations."),
                   dest_dir: str = typer.Option(..., "--dest-dir", help="Where .up.sql files are written."),
                   json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from pathlib import Path

        from engine.database.goose import import_goose
        from engine.errors import UsageError

        if source != "goose":
            raise UsageError(f"--from {source!r}: only goose is supported")
        return import_goose(Path(src_dir), Path(dest_dir)), 0

    run(ctx, json_output, action, _render_import)


@app.command("new", help=HELP["new"], epilog=examples(
    "framework project new shop --mod example.com/shop", "framework project new shop --service order",
    "framework project new tool --kind cli --disable ci,docs", "framework project new shop --in-place --force",
    "framework project new shop --frontend web",
    note="Features for --disable (comma-separated or repeated): " + ", ".join(f.name for f in FEATURE_TABLE)
         + "; each leaves its part out (framework project features shows the graph). Exit codes: 0 created; "
         "1 the directory holds a project or files (use --force) or a tool failed; 2 bad usage."))
def new(ctx: typer.Context, name: str = typer.Argument(..., help="The project (and directory) name."),
        mod: str | None = typer.Option(None, "--mod", help="The Go module path (default: the name)."),
        kind: str = typer.Option("service", "--kind", help="service, cli or library."),
        service: str | None = typer.Option(None, "--service", help="The first service, an entity of that name."),
        frontend: str | None = typer.Option(None, "--frontend",
                                            help="A web frontend (Next.js) of that name: scaffold frontend <name>."),
        in_place: bool = typer.Option(False, "--in-place", help="Write into the current directory."),
        display: str | None = typer.Option(None, "--name", help="The project's name when it differs from <name>."),
        disable: list[str] = typer.Option([], "--disable", help="Features to leave out (comma-separated)."),
        force: bool = typer.Option(False, "--force", help="Write over an existing directory's files."),
        json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from pathlib import Path

        from engine.authoring.new import new_project

        return new_project(name, parent=Path.cwd(), module=mod, kind=kind, service=service, in_place=in_place,
                           display_name=display, disable=disable, force=force, frontend=frontend), 0

    def human(result: Any) -> None:
        for item in result.files:
            out(f"{item.status:8} {item.path}")
        for item in (result.generated.files if result.generated else []):
            if item.status in ("written", "created"):
                out(f"{item.status:8} {item.path}")
        out(f"\nproject {result.name} ({result.kind}) in {result.root}")
        from app.output import diagnose

        for warning in result.warnings:
            diagnose(warning, label="warning")

    run(ctx, json_output, action, human)


@introspect.command("handlers", help=PROJECT_INTROSPECT.commands["handlers"], epilog=examples(
    "framework project introspect handlers", "framework project introspect handlers --format json",
    "framework project introspect handlers --proto-dir api/proto",
    note="Compiled from the protos with buf (not the descriptor cache). Exit codes: 0 listed; 1 the protos do "
         "not compile."))
def introspect_handlers(ctx: typer.Context,
                        fmt: str = typer.Option("text", "--format", help="text or json."),
                        proto_dir: str | None = typer.Option(None, "--proto-dir", help="The proto directory."),
                        json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from pathlib import Path

        from engine.authoring.curl import introspect_handlers as run_introspect
        from engine.errors import UsageError
        from engine.project import find_project

        if fmt not in ("text", "json"):
            raise UsageError(f"--format {fmt!r}: text or json")
        root = Path.cwd() if proto_dir else find_project().root
        return run_introspect(root, str(Path(proto_dir).resolve()) if proto_dir else None), 0

    def human(result: Any) -> None:
        if fmt == "json":
            import json

            out(json.dumps(result.procedures, indent=2))
        else:
            for procedure in result.procedures:
                out(procedure)

    run(ctx, json_output, action, human)


@app.command("scaffolded", help=HELP["scaffolded"], epilog=examples(
    "framework project scaffolded", "framework project scaffolded --absent --json"))
def scaffolded(ctx: typer.Context, absent: bool = typer.Option(False, "--absent", help="Only deleted ones."),
               json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from engine.authoring.records import list_scaffolded
        from engine.project import find_project

        return list_scaffolded(find_project(), absent), 0

    def human(result: Any) -> None:
        for f in result.files:
            out(f"{'present' if f.present else 'absent':8} {f.path}  ({f.by}, {f.born})")

    run(ctx, json_output, action, human)


@app.command("rescaffold", help=HELP["rescaffold"], epilog=examples(
    "framework project rescaffold internal/handlers/shop/rpc_ping.go",
    note="Exit codes: 0 re-created; 1 a path still exists (never overwritten) or is not scaffold-once."))
def rescaffold(ctx: typer.Context, paths: list[str] = typer.Argument(..., help="Deleted scaffold-once files."),
               json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from engine.authoring.records import rescaffold as run_rescaffold
        from engine.project import find_project

        return run_rescaffold(find_project(), paths), 0

    run(ctx, json_output, action, lambda r: [out(f"created  {p}") for p in r.paths])


@app.command("disown", help=HELP["disown"], epilog=examples(
    "framework project disown internal/bootstrap/observability.go --reason 'custom middleware'",
    note="One-way: generation never writes the file again and ci verify-generated skips it; re-adopt by "
         "deleting the file and its entry in .framework/disowned.json, then framework generate."))
def disown(ctx: typer.Context, paths: list[str] = typer.Argument(..., help="Generated files."),
           reason: str = typer.Option(..., "--reason", help="Why the file leaves generation (recorded)."),
           json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from engine.authoring.records import disown as run_disown
        from engine.project import find_project

        return run_disown(find_project(), paths, reason), 0

    run(ctx, json_output, action, lambda r: [out(f"disowned {p}") for p in r.paths])


from app.cli.project_shapes import register as _register_shapes  # noqa: E402 - shapes, graph, delete service

_register_shapes(app)
