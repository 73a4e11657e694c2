"""`framework lint` (docs/reference-lint.md): the field's linters and the twenty framework analyzers."""

from __future__ import annotations

import inspect
import typing
from typing import Any

import typer

from app.cli.database_views import examples
from app.registry import FRAMEWORK
from engine.lint.catalog import ANALYZERS

_group = FRAMEWORK.groups["lint"]
lint_app = typer.Typer(help=_group.help, add_completion=False, invoke_without_command=True,
                       pretty_exceptions_enable=False, subcommand_metavar="",
                       context_settings={"help_option_names": ["--help", "-h"], "allow_interspersed_args": True},
                       epilog=examples(*_group.examples, note=(
                           "No analyzer flag: every linter (go vet, golangci-lint, buf lint, eslint, tsc) and every "
                           "analyzer; analyzer flags select. `lint:ignore <analyzer>` in a comment on the line (or "
                           "the line above) silences a finding. Exit codes: 0 no error-level finding; 1 an error-level "
                           "finding; 2 a linter that cannot run (named) or bad usage.")))


def _render(report: Any, quiet: bool) -> None:
    from app.output import plain

    current = None
    for f in report.findings:
        if not quiet and f.file != current:
            if current is not None:
                plain("")
            plain(f.file)
            current = f.file
        line = f"{f.file}:{f.line}:{f.column}: {f.analyzer}: {f.message}"
        if f.rule != f.analyzer:
            line += f" [{f.rule}]"
        plain(("  " if not quiet else "") + line)
    if quiet:
        return
    for run in report.linters:
        if run.status in ("failed", "skipped"):
            plain(f"{run.status}: {run.name}: {run.reason}")
    ran = sum(1 for r in report.linters if r.status in ("ran", "cached"))
    missing = [r.name for r in report.linters if r.status == "not-implemented"]
    if missing:
        plain(f"not implemented in this build: {', '.join(missing)}")
    files = len({f.file for f in report.findings})
    plain(f"{report.errors} errors, {report.warnings} warnings in {files} files "
          f"({ran} linters and analyzers, {report.seconds:.2f}s)")


def lint(scope: list[str] = typer.Option(None, "--scope", help="Only findings under this path (repeatable); "
                                         "skips whole-project linters."),
         output_format: str = typer.Option("text", "--format", help="text, json or sarif (SARIF 2.1.0 on stdout)."),
         quiet: bool = typer.Option(False, "--quiet", "-q", help="Findings only: no grouping, no summary."),
         gate_json: str | None = typer.Option(None, "--gate-json", help="Also write gate evidence to this file "
                                              "(`framework gate record <env> --from <file>`)."),
         json_output: bool = typer.Option(False, "--json", help="Print one JSON document (ok, exit_code, error, "
                                          "payload)."),
         **selected: bool) -> None:
    import sys

    from app.output import EXIT_USAGE, diagnose, run_command

    if output_format not in ("text", "json", "sarif"):
        diagnose(f"--format {output_format!r}: one of text, json, sarif")
        raise typer.Exit(EXIT_USAGE)
    if gate_json is not None and not _writable_target(gate_json):
        diagnose(f"--gate-json {gate_json[:200]!r}: not a file path whose directory exists")
        raise typer.Exit(EXIT_USAGE)
    as_json = json_output or output_format == "json"
    names = [a.name for a in ANALYZERS if selected.get(a.name.replace("-", "_"))]

    def action() -> tuple[Any, int]:
        from pathlib import Path

        from engine.lint import formats
        from engine.lint.run import lint as run
        from engine.project import find_project

        report = run(find_project(), names, scope or [])
        if gate_json:
            formats.write_json(Path(gate_json), formats.gate(report))
        return report, report.exit_code

    def error(report: Any) -> dict[str, Any]:
        if report.failed:
            return {"code": "linter_cannot_run", "message": "could not run: " + "; ".join(
                f"{r.name} ({r.reason})" for r in report.failed)}
        return {"code": "lint_findings", "message": f"{report.errors} error-level findings"}

    if output_format == "sarif":
        def sarif(report: Any) -> None:
            import json

            from engine.lint.formats import sarif as to_sarif

            sys.stdout.write(json.dumps(to_sarif(report), indent=2) + "\n")

        raise typer.Exit(run_command(False, action, sarif, partial_error=error))
    raise typer.Exit(run_command(as_json, action, lambda r: _render(r, quiet), partial_error=error))


def _writable_target(value: str) -> bool:
    """A path whose parent directory exists and that is not itself a directory (checked before linting)."""
    from pathlib import Path

    if not value or "\0" in value or len(value) > 4096:
        return False
    try:
        path = Path(value)
        return path.parent.is_dir() and not path.is_dir()
    except (OSError, ValueError):
        return False


def _flag(analyzer: Any) -> inspect.Parameter:
    return inspect.Parameter(analyzer.name.replace("-", "_"), inspect.Parameter.KEYWORD_ONLY, annotation=bool,
                             default=typer.Option(False, f"--{analyzer.name}", help=analyzer.summary + "."))


# One flag per analyzer, from the analyzers' table (engine/lint/catalog.py).
_hints = typing.get_type_hints(lint)
_params = [p.replace(annotation=_hints[p.name]) for p in inspect.signature(lint).parameters.values()
           if p.kind != inspect.Parameter.VAR_KEYWORD]
lint.__signature__ = inspect.Signature([*_params, *(_flag(a) for a in ANALYZERS)])  # type: ignore[attr-defined]
lint_app.callback(invoke_without_command=True)(lint)
