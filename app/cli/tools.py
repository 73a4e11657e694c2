"""`platform tools ...` (docs/reference-tools.md#commands): list, call and serve the tools agents use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from app.cli import group_app
from app.cli.options import JSON_OPTION
from app.registry import PLATFORM

app = group_app("platform", "tools")
HELP = PLATFORM.groups["tools"].commands

ROOT_OPTION = typer.Option(
    None,
    "--root",
    help="Project or worktree root the tools work in "
    "(default: the project containing the current directory, "
    "else the current directory).",
)


def default_root(root: Path | None) -> Path:
    if root is not None:
        return root.resolve()
    from engine.errors import ProjectNotFound
    from engine.project import find_project

    try:
        return find_project().root
    except ProjectNotFound:
        return Path.cwd()


def _render_list(result: Any) -> None:
    from rich.table import Table

    from app.output import diagnose, stdout_console

    table = Table(box=None, pad_edge=False, header_style="bold")
    for column in ("NAME", "TAGS", "DESCRIPTION"):
        table.add_column(column, overflow="fold")
    for tool in result.tools:
        table.add_row(tool["name"], ",".join(tool["tags"]), tool["description"])
    stdout_console().print(table)
    for spawn in result.spawn:
        print(f"spawn {spawn['workflow']}: presets {', '.join(spawn['presets']) or '(none)'}")
    for warning in result.warnings:
        diagnose(warning, label="warning")
    for server in result.servers:
        if server.get("error"):
            diagnose(f"tool server {server['name']}: {server['error']}", label="warning")


@app.command(
    "list",
    help=HELP["list"],
    epilog="Examples:\n\n  platform tools list\n\n"
    "  platform tools list --filter tag:default --filter '!bash'\n\n"
    "  platform tools list --filter 'mcp_github_*' --json",
)
def tools_list(
    filter_entries: list[str] = typer.Option(
        None,
        "--filter",
        metavar="ENTRY",
        help="A tool_filter entry (repeatable): tag:<tag>, <name>, !<name>, <glob>, spawn:<wf>(<preset>,...)",
    ),
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.tools.registry import list_tools

        return list_tools(filter_entries or None), 0

    raise typer.Exit(run_command(json_output, action, _render_list))


def _render_call(result: Any) -> None:
    import sys

    sys.stdout.write(result.output)
    sys.stdout.flush()


@app.command(
    "call",
    help=HELP["call"],
    epilog="Examples:\n\n"
    '  platform tools call view --params \'{"file_path": "README.md", "limit": 20}\'\n\n'
    "  platform tools call grep --params @grep.json --json\n\n"
    '  platform tools call bash --params \'{"command": "make test", "tail_lines": 30}\'',
)
def tools_call(
    name: str = typer.Argument(..., help="Tool name (see `platform tools list`)."),
    params: str = typer.Option(
        "{}", "--params", metavar="JSON|@FILE", help="Parameter object as JSON text, or @file holding it."
    ),
    root: Path = ROOT_OPTION,
    session: str = typer.Option(
        "cli", "--session", help="Session whose plan and background processes the call uses."
    ),
    json_output: bool = JSON_OPTION,
) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.tools.registry import invoke

        outcome = invoke(name, params, default_root(root), session)
        return outcome, (1 if outcome.is_error else 0)

    def error(outcome: Any) -> dict[str, Any]:
        return outcome.data.get("error") or {"code": "tool_error", "message": outcome.output.strip()[-300:]}

    raise typer.Exit(run_command(json_output, action, _render_call, partial_error=error))


@app.command(
    "serve",
    help=HELP["serve"],
    epilog="Examples:\n\n  platform tools serve\n\n"
    "  platform tools serve --filter tag:readonly --root ~/src/app\n\n"
    "  (in an MCP client's settings) command: platform, args: [tools, serve]",
)
def tools_serve(
    filter_entries: list[str] = typer.Option(
        None, "--filter", metavar="ENTRY", help="Expose only the tools this tool_filter selects."
    ),
    root: Path = ROOT_OPTION,
    session: str = typer.Option("mcp", "--session", help="Session for plans and background processes."),
) -> None:
    """Serve until the client closes stdin. stdout is the protocol channel: nothing else is printed there."""
    from app.output import diagnose
    from engine.errors import EngineError

    try:
        from engine.tools.serve import serve_stdio

        code = serve_stdio(default_root(root), filter_entries or None, session)
    except EngineError as exc:
        diagnose(exc.message, exc.hint)
        code = exc.exit_code
    except KeyboardInterrupt:
        code = 130
    raise typer.Exit(code)
