"""`framework ci ...` (docs/reference-ci.md#commands)."""

from __future__ import annotations

from typing import Any, NoReturn

import typer

from app.cli import group_app
from app.cli.options import JSON_OPTION
from app.registry import FRAMEWORK

app = group_app("framework", "ci")
HELP = FRAMEWORK.groups["ci"].commands


def _serve(json_output: bool, action: Any, view: str) -> NoReturn:
    """Run the engine call; human output and the error of a non-zero payload from app/cli/ci_views.py
    (`render_<view>`, `<view>_error`)."""
    from app.cli import ci_views
    from app.output import run_command

    raise typer.Exit(run_command(json_output, action, getattr(ci_views, f"render_{view}"),
                                 partial_error=getattr(ci_views, f"{view}_error")))


def _render_validation(result: Any) -> None:
    from app.output import stdout_console

    console = stdout_console()
    for env in result.environments:
        if env.status == "ok":
            console.print(f"ok     {env.env} ({env.runtime}, {env.objects} objects)", markup=False)
        else:
            console.print(f"error  {env.env}: {(env.error or {}).get('message')}", markup=False)


def _validation_error(result: Any) -> dict[str, Any]:
    failed = result.failed
    return {
        "code": "kcl_invalid",
        "message": f"{len(failed)} of {len(result.environments)} environments do not "
        f"render deployable manifests: {', '.join(e.env for e in failed)}",
    }


@app.command(
    "validate-kcl",
    help=HELP["validate-kcl"],
    epilog=("Examples:\n\n  framework ci validate-kcl\n\n  framework ci validate-kcl --json"),
)
def validate_kcl(json_output: bool = typer.Option(False, "--json", help="Print one JSON document.")) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.environments.render.validate import validate_kcl as validate
        from engine.project import find_project

        result = validate(find_project())
        return result, (1 if result.failed else 0)

    raise typer.Exit(run_command(json_output, action, _render_validation, partial_error=_validation_error))


@app.command("migration-safety", help=HELP["migration-safety"], epilog=(
    "Examples:\n\n  framework ci migration-safety\n\n  framework ci migration-safety --since origin/main"
    "\n\n  framework ci migration-safety db/migrations/2025*.up.sql --json"
    "\n\nExit codes: 0 no error-level finding; 1 an error-level finding (warnings never gate); 2 bad input."))
def migration_safety(paths: list[str] = typer.Argument(None, help="Files to check (default: db/migrations/*.up.sql)."),
                     since: str | None = typer.Option(None, "--since", help="Only migrations added or changed "
                                                      "since this git revision (e.g. origin/main)."),
                     json_output: bool = typer.Option(False, "--json", help="Print one JSON document.")) -> None:
    from app.cli.database_views import render_safety, safety_error
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.database.safety import run

        report = run(paths or [], since)
        return report, (1 if report.errors else 0)

    raise typer.Exit(run_command(json_output, action, render_safety, partial_error=safety_error))


@app.command("run", help=HELP["run"], epilog=(
    "Examples:\n\n  framework ci run            (inside CI: this run, every attempt)\n\n"
    "  framework ci run 9876543210.2 --json\n\n  framework ci run 9876543210 --env staging"
    "\n\nExit codes: 0 every stage passed (skipped counts as passed); 1 a stage failed or errored, or the "
    "request cannot be served; 2 the control plane could not be read; 5 a stage is still running or the "
    "timeline is empty."))
def run(run_id: str | None = typer.Argument(None, help="Run id `<run>.<attempt>`, or `<run>` for every attempt "
                                            "(default: from the CI environment)."),
        env: str | None = typer.Option(None, "--env", help="Only this environment (its control plane when it "
                                       "declares one)."),
        json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from engine.ci.timeline import timeline
        from engine.project import find_project

        return timeline(find_project(), run_id, env)

    _serve(json_output, action, "timeline")


@app.command("verify-test-run", help=HELP["verify-test-run"], epilog=(
    "Examples:\n\n  go test -json ./... | framework ci verify-test-run\n\n"
    "  framework ci verify-test-run --from test.json --max-skip-ratio 0.1 --min-tests 20 --json\n\n"
    "Packages whose skips are expected: framework.yaml `ci.test_skips.allow: [{package, reason}]` "
    "(`path/...` covers a tree).\n\nExit codes: 0 the run is evidence; 1 failures in the stream, a rule broken "
    "(zero-evidence, mass-skip, min-tests) or a configuration error; 2 undetermined input or a stream that "
    "ends mid-run."))
def verify_test_run(
        from_file: str | None = typer.Option(None, "--from", help="Read the stream from this file (default: stdin)."),
        max_skip_ratio: float = typer.Option(0.5, "--max-skip-ratio", help="Most skipped tests allowed, 0..1."),
        min_tests: int = typer.Option(1, "--min-tests", help="Fewest tests that must run (pass or fail)."),
        json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from engine.ci.testrun import verify_input

        return verify_input(from_file, max_skip_ratio=max_skip_ratio, min_tests=min_tests)

    _serve(json_output, action, "test_run")


@app.command("summarize", help=HELP["summarize"], epilog=(
    "Examples:\n\n  framework ci summarize deploy.json gate.json verify.json\n\n"
    "  framework env deploy staging --yes --json > deploy.json; framework ci summarize deploy.json\n\n"
    "Exit codes: 0 whatever the documents say; 1 only when an input is unreadable (named)."))
def summarize(files: list[str] = typer.Argument(..., help="`--json` documents of framework commands."),
              json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from engine.ci.summarize import summarize as render

        return render(files)

    _serve(json_output, action, "summary")


@app.command("vuln-scan", help=HELP["vuln-scan"], epilog=(
    "Examples:\n\n  framework ci vuln-scan\n\n  framework ci vuln-scan --scanner govulncheck --json\n\n"
    "Scanners come from framework.yaml `ci.vuln_scan.scanners` ({name, path, ...}).\n\nExit codes: 0 no "
    "finding; 1 findings; 2 a selected scanner could not run, or none is selected."))
def vuln_scan(scanner: list[str] = typer.Option(None, "--scanner", help="Only this scanner (repeatable): "
                                                "pip-audit, govulncheck, npm-audit."),
              json_output: bool = JSON_OPTION) -> None:
    def action() -> tuple[Any, int]:
        from engine.ci.vulnscan import vuln_scan as scan
        from engine.project import find_project

        return scan(find_project(), scanner or None)

    _serve(json_output, action, "vuln_scan")
def _render_verify(result: Any) -> None:
    import sys

    for f in result.findings:
        sys.stdout.write(f"{f.path}: {f.check}: {f.problem}\n")
    for note in result.notes:
        sys.stdout.write(f"note: {note}\n")
    sys.stdout.write(f"{result.checked} generated files checked, {len(result.findings)} findings "
                     f"(commit policy: {result.policy})\n")


@app.command("verify-generated", help=HELP["verify-generated"], epilog=(
    "Examples:\n\n  framework ci verify-generated\n\n  framework ci verify-generated --json"
    "\n\nChecks: every generated file's framework:hash marker matches its content; regenerating in a temporary "
    "copy changes nothing; framework.yaml generate.commit (true: generated files tracked by git; false: ignored) "
    "holds. Exit codes: 0 clean; 1 any finding (each offending file is named)."))
def verify_generated(json_output: bool = typer.Option(False, "--json", help="Print one JSON document.")) -> None:
    from app.output import run_command

    def action() -> tuple[Any, int]:
        from engine.authoring.verify import verify_generated as verify
        from engine.project import find_project

        result = verify(find_project())
        return result, (1 if result.findings else 0)

    def error(result: Any) -> dict[str, Any]:
        return {"code": "generated_files_invalid",
                "message": f"{len(result.findings)} generated-file findings: "
                           + ", ".join(sorted({f.path for f in result.findings}))}

    raise typer.Exit(run_command(json_output, action, _render_verify, partial_error=error))
