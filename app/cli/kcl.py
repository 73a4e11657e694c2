"""`framework kcl eval` (docs/reference-env.md#shape-diff-config-new)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from app.cli import group_app
from app.registry import FRAMEWORK

app = group_app("framework", "kcl")
HELP = FRAMEWORK.groups["kcl"].commands


@app.command(
    "eval",
    help=HELP["eval"],
    epilog=(
        "Examples:\n\n  framework kcl eval deploy/kcl/dev/main.k\n\n"
        "  framework kcl eval deploy/kcl/dev/main.k -S environment.workloads.0.name --format raw\n\n"
        "  framework kcl eval config.k -D region=eu --format json"
    ),
)
def kcl_eval(
    file: Path = typer.Argument(..., help="The KCL file to evaluate (`import framework` works)."),
    select: list[str] = typer.Option(
        [],
        "-S",
        "--select",
        metavar="PATH",
        help="Dotted path to print; numeric segments index lists. Repeatable.",
    ),
    output_format: str = typer.Option("yaml", "--format", help="yaml, json, or raw (scalars only)."),
    defines: list[str] = typer.Option(
        [], "-D", "--define", metavar="NAME=VALUE", help="Set option(NAME). Repeatable."
    ),
    json_output: bool = typer.Option(
        False, "--json", help="Print one JSON document (ok, exit_code, error, payload)."
    ),
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.environments.options import parse_assignments
        from engine.errors import UsageError
        from engine.kcl.query import eval_file, raw_lines

        if output_format not in ("yaml", "json", "raw"):
            raise UsageError(f"--format {output_format}: expected yaml, json or raw")
        result = eval_file(file, select, parse_assignments(defines))
        if output_format == "raw":
            raw_lines(result)  # scalars only: fails before anything is printed
        return result, 0

    def human(result: Any) -> None:
        import json
        import sys

        from engine.environments.render.pipeline import dump_yaml
        from engine.kcl.query import raw_lines

        values = (
            list(result.values.values())
            if result.values is not None and len(result.values) > 1
            else [result.value]
        )
        if output_format == "raw":
            sys.stdout.write("".join(line + "\n" for line in raw_lines(result)))
        elif output_format == "json":
            for value in values:
                sys.stdout.write(json.dumps(value, indent=2) + "\n")
        else:
            sys.stdout.write("---\n".join(dump_yaml(v) for v in values))

    raise typer.Exit(run_command(json_output, action, human))
