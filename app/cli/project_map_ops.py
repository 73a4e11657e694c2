"""What `framework project map` does and prints, without Typer (docs/reference-project.md#project-map).

`app/cli/project_map.py` declares the command for Typer (help, examples, usage errors) and calls `execute`;
`app.main` calls `fast` first, which takes only well-formed `--depth N`, `--filter LIST` and `--json` and otherwise
returns None so Typer handles the rest. A warm `project map --json` then costs the interpreter, the map and the
JSON document, not Typer's import and parse (bench/project.py).
"""

from __future__ import annotations

from typing import Any

from app.cli.fast_args import parse

TAGS = {"user": "user", "generated": "generated", "scaffold": "scaffold", "drifted": "DRIFTED",
        "disowned": "disowned"}
OPTIONS = {"--depth": ("depth", int), "--filter": ("filter_", str), "--json": ("json_output", bool)}


def _out(text: str) -> None:
    import sys

    sys.stdout.write(text + "\n")


def _counts(counts: dict[str, int]) -> str:
    total = sum(counts.values())
    parts = ", ".join(f"{n} {kind}" for kind, n in counts.items() if n)
    return f"{total} file{'s' if total != 1 else ''}" + (f": {parts}" if parts else "")


def _closed(nodes: list[Any], i: int, depth: int) -> bool:
    """True when the entry at `depth` on node i's path has no later sibling (its rail is blank)."""
    for node in nodes[i + 1:]:
        if node.depth < depth:
            return True
        if node.depth == depth:
            return False
    return True


def render(result: Any) -> None:
    """A tree: one line per directory (its files per ownership) and per file (its ownership tag)."""
    from pathlib import Path

    _out(f"{Path(result.root).name}/  ({_counts(result.counts)})")
    nodes = result.nodes
    for i, node in enumerate(nodes):
        rails = "".join("    " if _closed(nodes, i, d) else "│   " for d in range(1, node.depth))
        branch = "└── " if _closed(nodes, i, node.depth) else "├── "
        if node.kind == "dir":
            _out(f"{rails}{branch}{node.name}/  ({_counts(node.counts)})")
        else:
            _out(f"{rails}{branch}{node.name}  [{TAGS[node.ownership]}{'' if node.present else ', deleted'}]")


def execute(depth: int | None, filter_: str | None, json_output: bool) -> int:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.inspection.map import project_map
        from engine.project import find_project

        return project_map(find_project(), depth, filter_), 0

    return run_command(json_output, action, render)


def fast(argv: list[str]) -> int | None:
    """`project map [--depth N] [--filter LIST] [--json]` (argv after `project map`); None hands anything else
    (help, `--opt=value`, a bad number, positional words) to Typer."""
    parsed = parse(argv, OPTIONS, {"depth": None, "filter_": None, "json_output": False})
    if parsed is None or parsed[0]:
        return None
    params = parsed[1]
    return execute(params["depth"], params["filter_"], params["json_output"])
