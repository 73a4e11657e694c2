"""`platform run <workflow>` (docs/reference-tools.md#runs: workflows run AI agents that call tools)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

from app.registry import PLATFORM

EXAMPLES = (
    "platform run workflows/triage.yaml",
    "platform run changelog.yaml --input branch=main --input trigger.payload.body.ref=v1.2",
    "platform run changelog.yaml --json",
)
HELP = PLATFORM.groups["run"].help
EPILOG = "Examples:\n\n" + "\n\n".join(f"  {ex}" for ex in EXAMPLES)


def _short(value: Any, width: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    text = text.replace("\n", "\\n")
    return text if len(text) <= width else text[: width - 1] + "…"


def print_step(step: Any) -> None:
    """One streamed line per step: data on stdout as the run goes."""
    if step.kind == "tool_call":
        where = step.data.get("ran_on")
        at = f" @{where}" if where and where != "local" else ""
        line = f"→ {step.name}{at} {_short(step.data.get('params'))}"
    elif step.kind == "tool_result":
        mark = "✗" if step.data.get("is_error") else "←"
        line = f"{mark} {step.name}: {_short(step.data.get('output', ''))}"
    else:
        line = f"• {_short(step.data.get('text', ''), 400)}"
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _render(result: dict[str, Any]) -> None:
    run = result["run"]
    if run["status"] == "succeeded":  # a failure is diagnosed on stderr by run_command
        sys.stdout.write(f"run {run['id']} succeeded ({len(run['steps'])} steps)\n")


def command(
    workflow: Path = typer.Argument(
        ..., metavar="WORKFLOW", help="Workflow file (YAML: name, model, instructions, tool_filter)."
    ),
    inputs: list[str] = typer.Option(
        None,
        "--input",
        metavar="KEY=VALUE",
        help="Run input (repeatable); VALUE is JSON when it parses; dotted keys nest.",
    ),
    root: Path = typer.Option(None, "--root", help="Project or worktree root the tools work in."),
    json_output: bool = typer.Option(False, "--json", help="Print one JSON document (the run record)."),
) -> None:
    from app.cli.tools import default_root
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.runs.engine import execute_run
        from engine.workflows.definition import load_workflow, parse_inputs

        wf = load_workflow(workflow)
        record = execute_run(
            wf,
            inputs=parse_inputs(inputs or []),
            root=default_root(root),
            on_step=None if json_output else print_step,
        )
        # The record sits under `run`: its own `error` field must not collide with the envelope's.
        return {"run": record.model_dump(mode="json")}, (0 if record.status == "succeeded" else 1)

    def error(result: dict[str, Any]) -> dict[str, Any]:
        run = result["run"]
        return {"code": "run_failed", "message": f"run {run['id']} failed: {run['error']}"}

    raise typer.Exit(run_command(json_output, action, _render, partial_error=error))
