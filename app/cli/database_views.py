"""Shared options, sub-group plumbing and human renderings of `framework db ...` and
`ci migration-safety`."""

from __future__ import annotations

from typing import Any

import typer

from app.cli.options import JSON_OPTION  # noqa: F401 - re-exported to the db command modules

DSN_OPTION = typer.Option(None, "--dsn", help="postgresql:// URL (default: env DATABASE_URL).")
DIR_OPTION = typer.Option(None, "--dir", help="Migrations directory (default: <project>/db/migrations).")


def sub_app(group: Any) -> Any:
    """A sub-group with the registry's help; its own --json applies to the command run under it."""
    from app.cli import _typer_app

    sub = _typer_app(group.help, group.examples)

    @sub.callback()
    def main(ctx: typer.Context, json_output: bool = typer.Option(
            False, "--json", help="Print one JSON document for the sub-command (same as its own --json).")) -> None:
        ctx.obj = {"json": json_output}

    return sub


def wants_json(ctx: typer.Context, flag: bool) -> bool:
    parent = ctx.parent.obj if ctx.parent is not None and isinstance(ctx.parent.obj, dict) else {}
    return flag or bool(parent.get("json"))


def run(ctx: typer.Context, json_output: bool, action: Any, human: Any) -> None:
    from app.output import run_command

    raise typer.Exit(run_command(wants_json(ctx, json_output), action, human))


def examples(*lines: str, note: str = "") -> str:
    return "Examples:\n\n" + "\n\n".join(f"  {line}" for line in lines) + (f"\n\n{note}" if note else "")


def out(text: str) -> None:
    """One line of data on stdout, unwrapped (file:line output stays greppable)."""
    import sys

    sys.stdout.write(text + "\n")


def render_safety(report: Any) -> None:
    for f in report.findings:
        out(f"{f.file}:{f.line}: {f.level}: {f.rule}: {f.message}")
        if f.safe_alternative:
            out(f"    safe alternative: {f.safe_alternative}")
    out(f"{len(report.files)} files, {report.errors} errors, {report.warnings} warnings")


def safety_error(report: Any) -> dict[str, Any]:
    return {"code": "unsafe_migration",
            "message": f"{report.errors} error-level findings in {len(report.files)} migration files"}
