"""`framework project annotations | capabilities | features | libraries | checkouts`
(docs/reference-project.md): what the framework knows (its markers, commands, analyzers) and what this project
is made of (features, runtime libraries, checkouts). Registered on the `project` group (app/cli/project.py)."""

from __future__ import annotations

from typing import Any

import typer

from app.cli.database_views import JSON_OPTION, examples, out, run
from app.registry import FRAMEWORK

HELP = FRAMEWORK.groups["project"].commands
# Merged into the `project` group (app/cli/project.py adds it with no name: its commands join the group's).
project_app = typer.Typer()


@project_app.command("annotations", help=HELP["annotations"], epilog=examples(
    "framework project annotations", "framework project annotations --kind column,table",
    "framework project annotations --kind proto --json",
    note="Printed from the one table framework lint's analyzers read (engine/authoring/annotation_spec.py). Kinds: "
         "go, column, table, proto-message, proto-service, proto-method, file, config, and the groups entity "
         "(proto-message, column, table), proto and sql. Exit codes: 0 printed; 2 an unknown kind (the kinds listed)."))
def annotations(ctx: typer.Context,
                kind: list[str] = typer.Option([], "--kind", help="Only these kinds (comma-separated or repeated)."),
                json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from engine.inspection.annotations import list_annotations as run_annotations

        return run_annotations(kind), 0

    def human(result: Any) -> None:
        for row in result.annotations:
            value = f"={row.value}" if row.value else ""
            readers = f"  [{', '.join(row.analyzers)}]" if row.analyzers else ""
            out(f"{row.name}{value}\n    {row.where}: {row.meaning}{readers}")

    run(ctx, json_output, action, human)


@project_app.command("capabilities", help=HELP["capabilities"], epilog=examples(
    "framework project capabilities", "framework project capabilities --json",
    note="Generated from the Typer command trees of framework and platform (platform framework ... is the "
         "framework program, listed once), engine/lint's analyzers and the annotation table. Exit code: 0."))
def capabilities(ctx: typer.Context, json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from app.cli.capabilities import capabilities as run_capabilities

        return run_capabilities(), 0

    def human(result: Any) -> None:
        out("Commands:")
        width = max(len(c.path) for c in result.commands) + 2
        for c in result.commands:
            if not c.group:
                out(f"  {c.path.ljust(width)}{c.help}")
        out("\nAnalyzers (framework lint --<name>):")
        for a in result.analyzers:
            out(f"  {a.name.ljust(22)}{a.input:9} {a.summary}")
        out(f"\nLinters: {', '.join(result.linters)}\n\nMarkers:")
        for m in result.markers:
            out(f"  {m.name.ljust(42)}{m.kind:14} {m.meaning}")
        out("\n" + ", ".join(f"{n} {k}" for k, n in result.counts.items()))

    run(ctx, json_output, action, human)


@project_app.command("features", help=HELP["features"], epilog=examples(
    "framework project features", "framework project features --json",
    note="The features of project new --disable, as framework.yaml's `features` sets them; a disabled feature "
         "that an enabled one requires is a warning (warnings never gate). Exit codes: 0 resolved; 1 not in a "
         "project or framework.yaml names an unknown feature."))
def features(ctx: typer.Context, json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from engine.inspection.features import features as run_features
        from engine.project import find_project

        return run_features(find_project()), 0

    def human(result: Any) -> None:
        from app.output import diagnose

        for f in result.features:
            needs = f"  requires {', '.join(f.requires)}" if f.requires else ""
            out(f"{'on ' if f.enabled else 'off'}  {f.name.ljust(14)}{f.summary}{needs}")
            if f.makes:
                out(f"       makes {', '.join(f.makes)} ({len(f.present)} present)")
        for warning in result.warnings:
            diagnose(warning, label="warning")

    run(ctx, json_output, action, human)


@project_app.command("libraries", help=HELP["libraries"], epilog=examples(
    "framework project libraries", "framework project libraries connectrpc.com/connect",
    "framework project libraries connect protobuf", "framework project libraries all --json",
    note="A name is a module or package path, or its last element (connect). Signatures come from go doc -all "
         "(Go) or the package's .d.ts (npm), cached by module version under .framework/cache/libraries/. Exit "
         "codes: 0 listed; 1 an unknown name (the known ones listed), the Go code does not load, or not in a "
         "project."))
def libraries(ctx: typer.Context,
              names: list[str] = typer.Argument(None, help="Libraries whose signatures to print, or all."),
              json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from engine.inspection.libraries import libraries as run_libraries
        from engine.project import find_project

        return run_libraries(find_project(), list(names or [])), 0

    def human(result: Any) -> None:
        if result.signatures:
            for sig in result.signatures:
                out(f"// {sig.package} ({sig.name} {sig.version})\n{sig.text.rstrip()}\n")
            return
        for lib in result.libraries:
            mark = " (generated code)" if lib.generated else ""
            out(f"{lib.name} {lib.version}  [{lib.ecosystem}]{mark}\n    used by {', '.join(lib.used_by)}")

    run(ctx, json_output, action, human)


@project_app.command("checkouts", help=HELP["checkouts"], epilog=examples(
    "framework project checkouts", "framework project checkouts --tree --json",
    note="ahead/behind count commits against the default branch (origin/HEAD, or another remote's recorded "
         "HEAD) and are left out when git cannot compute them. --tree: sha256 over every tracked and "
         "untracked-not-ignored file as it is on disk (docs/reference-project.md#project-checkouts). Exit codes: "
         "0 listed; 1 not a git checkout."))
def checkouts(ctx: typer.Context, tree: bool = typer.Option(False, "--tree", help="Hash the current checkout."),
              json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from pathlib import Path

        from engine.inspection.checkouts import checkouts as run_checkouts

        return run_checkouts(Path.cwd(), tree=tree), 0

    def human(result: Any) -> None:
        d = result.default
        out(f"default  {d.remote}/{d.branch}  {d.url or ''}".rstrip() if d else "default  (no remote HEAD recorded)")
        for wt in result.worktrees:
            where = wt.branch or ("(bare)" if wt.bare else f"(detached {(wt.head or '')[:12]})")
            state = "" if wt.dirty is None else ("dirty" if wt.dirty else "clean")
            counts = f"  +{wt.ahead} -{wt.behind}" if wt.ahead is not None else ""
            out(f"{'*' if wt.current else ' '} {wt.path}  {where}  {state}{counts}".rstrip())
        if result.tree:
            out(f"tree {result.tree.algorithm}:{result.tree.hash}  ({result.tree.files} files)")

    run(ctx, json_output, action, human)
