"""The Lint view (docs/reference-lint.md#dashboard): `framework lint`'s findings by analyzer and file, the command
line of the selected finding beside them. enter opens the file at the line in `$EDITOR`; `r` reruns the lint scoped
to the selected finding's file (`framework lint --scope <file>`) and replaces that file's findings; `R` reruns the
whole lint. Same engine call as `framework lint --json`.
"""

from __future__ import annotations

import os
import shlex
import subprocess
from dataclasses import dataclass
from typing import Any, ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Static

from screens.base import DashboardScreen
from screens.widgets.table_sync import sync_rows

COLUMNS = (("analyzer", "Analyzer"), ("file", "File"), ("line", "Line"), ("severity", "Severity"),
           ("message", "Message"))


@dataclass
class LintLoaded(Message):
    report: Any = None
    error: Any = None
    scope: str | None = None  # the file a scoped rerun covered


def finding_key(f: Any) -> str:
    return f"{f.file}:{f.line}:{f.column}:{f.analyzer}:{f.rule}:{f.message}"


def editor_argv(path: str, line: int) -> list[str]:
    """`$VISUAL` or `$EDITOR` (default vi) at the line: `+<line> <file>`, the form vi, vim, nano, emacs and
    micro take."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    return [*shlex.split(editor), f"+{line}", path]


class LintScreen(DashboardScreen):
    NAME = "lint"
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("enter", "edit", "Open in $EDITOR", id="lint.edit"),
        Binding("r", "rerun_scope", "Rerun file", id="lint.rerun_scope"),
        Binding("R", "rerun_all", "Rerun all", id="lint.rerun_all"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.findings: list[Any] = []
        self.loads = 0
        self.last_status = ""
        self.edited: list[str] | None = None  # the editor command last run (what enter did)

    def compose_body(self) -> ComposeResult:
        with Vertical(id="lint-body"):
            yield Static("linting ...", id="lint-status", markup=False)
            yield DataTable(id="lint-table", cursor_type="row", zebra_stripes=True)
            yield Static("", id="lint-command", markup=False)

    def on_mount(self) -> None:
        table = self.query_one("#lint-table", DataTable)
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        table.focus()
        self.run_lint(None)

    @work(thread=True, exclusive=True, group="lint")
    def run_lint(self, scope: str | None) -> None:
        from engine.errors import EngineError
        from engine.lint.run import lint
        from engine.project import find_project

        try:
            root = self.app.project_dir
            report = lint(find_project(root), [], [str(root / scope)] if scope else [])
        except EngineError as exc:
            self.post_message(LintLoaded(error=exc, scope=scope))
            return
        self.post_message(LintLoaded(report=report, scope=scope))

    def on_lint_loaded(self, message: LintLoaded) -> None:
        self.loads += 1
        status = self.query_one("#lint-status", Static)
        if message.error is not None:
            hint = getattr(message.error, "hint", None)
            status.update(f"error: {message.error.message}" + (f"\nhint: {hint}" if hint else ""))
            return
        report = message.report
        if message.scope:
            scope = message.scope
            self.findings = [f for f in self.findings if f.file != scope and not f.file.startswith(scope + "/")]
            self.findings += report.findings
        else:
            self.findings = list(report.findings)
        self.findings.sort(key=lambda f: (f.analyzer, f.file, f.line, f.column))
        by: dict[str, int] = {}
        for f in self.findings:
            by[f.analyzer] = by.get(f.analyzer, 0) + 1
        errors = sum(f.severity == "error" for f in self.findings)
        counts = ", ".join(f"{name} {n}" for name, n in sorted(by.items())) or "none"
        failed = [r.name for r in report.linters if r.status == "failed"]
        self.last_status = (f"{errors} errors, {len(self.findings) - errors} warnings   by analyzer: {counts}"
                            + (f"\ncould not run: {', '.join(failed)}" if failed else "")
                            + (f"\nreran: {message.scope}" if message.scope else ""))
        status.update(self.last_status)
        rows = {finding_key(f): (f.analyzer, f.file, str(f.line), f.severity, f.message) for f in self.findings}
        sync_rows(self.query_one("#lint-table", DataTable), [k for k, _ in COLUMNS], rows)
        self._command()

    def selected(self) -> Any | None:
        table = self.query_one("#lint-table", DataTable)
        if not table.row_count:
            return None
        key = str(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value)
        return next((f for f in self.findings if finding_key(f) == key), None)

    def on_data_table_row_highlighted(self, _event: Any) -> None:
        self._command()

    def _command(self) -> None:
        f = self.selected()
        where = f.file if f else "<file>"
        self.query_one("#lint-command", Static).update(
            f"r: framework lint --scope {where}    R: framework lint    enter: $EDITOR +{f.line if f else 1} {where}")

    def on_data_table_row_selected(self, _event: Any) -> None:
        self.action_edit()  # enter on the table: the table selects the row, the view opens it

    def action_edit(self) -> None:
        f = self.selected()
        if f is None:
            return
        argv = editor_argv(str(self.app.project_dir / f.file), f.line)
        self.edited = argv
        if self.app.is_headless:  # no terminal to hand over: run the editor as it is
            subprocess.run(argv, check=False, stdin=subprocess.DEVNULL, capture_output=True)
            return
        with self.app.suspend():
            subprocess.run(argv, check=False)

    def action_rerun_scope(self) -> None:
        f = self.selected()
        self.query_one("#lint-status", Static).update(f"linting {f.file if f else 'the project'} ...")
        self.run_lint(f.file if f else None)

    def action_rerun_all(self) -> None:
        self.query_one("#lint-status", Static).update("linting ...")
        self.run_lint(None)
