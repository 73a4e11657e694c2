"""`framework doctor` and `framework doctor parity <svc>` (docs/reference-ci.md#commands)."""

from __future__ import annotations

from typing import Any

import typer

from app.cli.options import JSON_OPTION
from app.output import plain
from app.registry import FRAMEWORK

GROUP = FRAMEWORK.groups["doctor"]
app = typer.Typer(help=GROUP.help, add_completion=False, invoke_without_command=True,
                  context_settings={"help_option_names": ["--help", "-h"]}, pretty_exceptions_enable=False,
                  epilog="Examples:\n\n" + "\n\n".join(f"  {e}" for e in GROUP.examples)
                  + "\n\nExit codes: 0 no error-level check failed (warnings never fail); 1 one did; 2 bad usage.")
MARK = {"ok": "ok   ", "warn": "warn ", "error": "ERROR", "skip": "skip "}



def _render(verbose: bool) -> Any:
    def render(report: Any) -> None:
        for c in report.checks:
            if c.status == "ok" and not verbose:
                plain(f"{MARK[c.status]} {c.name}")
                continue
            plain(f"{MARK[c.status]} {c.name}: {c.detail}")
            if c.fix and c.status != "ok":
                plain(f"      fix: {c.fix}")
        n = report.counts
        plain(f"{n['ok']} ok, {n['warn']} warnings, {n['error']} errors, {n['skip']} skipped")

    return render


def _error(report: Any) -> dict[str, Any]:
    bad = [c.name for c in report.checks if c.status == "error"]
    return {"code": "doctor_failed", "message": f"{len(bad)} check(s) failed: {', '.join(bad)}"}


@app.callback(invoke_without_command=True)
def doctor(ctx: typer.Context,
           signal: str | None = typer.Option(None, "--signal", help="Only the checks this need depends on "
                                             "(deploy)."),
           verbose: bool = typer.Option(False, "--verbose", "-v", help="Show the detail of passing checks too."),
           json_output: bool = JSON_OPTION) -> None:
    if ctx.invoked_subcommand is not None:
        return
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.doctor.checks import doctor as run
        from engine.errors import ProjectNotFound
        from engine.project import find_project

        try:
            project = find_project()
        except ProjectNotFound:
            project = None
        return run(project, signal)

    raise typer.Exit(run_command(json_output, action, _render(verbose), partial_error=_error))


def _render_parity(report: Any) -> None:
    plain(f"{report.service} in {report.env}: host mode (port offset {report.port_offset}) vs cluster mode: "
          f"{report.verdict}")
    for d in report.divergences:
        plain(f"  {d.kind:<14} {d.name}: {d.why}")
        plain(f"  {'':<14}   host:    {d.host if d.host is not None else '(unset)'}")
        plain(f"  {'':<14}   cluster: {d.cluster if d.cluster is not None else '(unset)'}")


def _parity_error(report: Any) -> dict[str, Any]:
    bugs = [d.name for d in report.divergences if d.kind == "bug-class"]
    return {"code": "parity_bug_class", "message": f"bug-class divergence in {', '.join(bugs)}"}


@app.command("parity", help=GROUP.commands["parity"], epilog=(
    "Examples:\n\n  framework doctor parity api\n\n  framework doctor parity web --env dev --json\n\n"
    "Exit codes: 0 parity, or only secret-channel divergences; 1 a bug-class divergence; 2 bad usage."))
def parity(service: str = typer.Argument(..., help="Workload name."),
           env: str = typer.Option("dev", "--env", help="Environment (default dev)."),
           json_output: bool = JSON_OPTION) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.doctor.parity import parity as compare
        from engine.project import find_project

        return compare(find_project(), service, env)

    raise typer.Exit(run_command(json_output, action, _render_parity, partial_error=_parity_error))
