"""What `framework project shapes` does and prints, without Typer (docs/reference-project.md#project-shapes).

`app/cli/project_shapes.py` declares the command for Typer (help, examples, usage errors) and calls `execute`;
`app.main` calls `fast` first, which takes only well-formed `--grep RE`, `--kind LIST` (repeatable) and `--json`
and otherwise returns None so Typer handles the rest: a warm `project shapes` then costs the interpreter, the
cached shapes and the output, not Typer's import and parse (bench/project.py).
"""

from __future__ import annotations

import sys
from typing import Any

from app.cli.fast_args import parse

OPTIONS = {"--grep": ("grep", str), "--kind": ("kind", list), "--json": ("json_output", bool)}


def render(result: Any) -> None:
    sys.stdout.write("".join(f"{s.file}:{s.line}: {s.kind} {s.name}" + (f"  ({s.detail})" if s.detail else "")
                             + "\n" for s in result.shapes))


def execute(grep: str | None, kind: list[str], json_output: bool) -> int:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.inspection.shapes import compile_grep, parse_kinds, project_shapes
        from engine.project import find_project

        parse_kinds(kind)  # bad usage is exit 2 before looking for a project
        compile_grep(grep)
        return project_shapes(find_project(), grep=grep, kinds=kind), 0

    return run_command(json_output, action, render)


def fast(argv: list[str]) -> int | None:
    """`project shapes [--grep RE] [--kind LIST]... [--json]` (argv after `project shapes`); None hands anything
    else (help, `--opt=value`, positional words) to Typer."""
    parsed = parse(argv, OPTIONS, {"grep": None, "kind": [], "json_output": False})
    if parsed is None or parsed[0]:
        return None
    params = parsed[1]
    return execute(params["grep"], params["kind"], params["json_output"])
