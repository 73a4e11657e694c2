"""One model of a lint finding (docs/reference-lint.md#output), the analyzers' table and the report."""

from __future__ import annotations

from pydantic import BaseModel

from engine.lint.catalog import ANALYZERS, BY_NAME, LINTERS, Analyzer  # noqa: F401  (re-exported)

ERROR, WARNING = "error", "warning"


class Finding(BaseModel):
    analyzer: str  # an analyzer's flag name (`time-bucketing`) or a linter (`go vet`, `buf lint`, `eslint`, `tsc`)
    rule: str  # the tool's own rule id (`printf`, `FIELD_LOWER_SNAKE_CASE`) or the analyzer's name
    severity: str  # error | warning
    file: str  # relative to the project root
    line: int
    column: int = 1
    message: str
    hint: str | None = None

    def sort_key(self) -> tuple[str, int, int, str]:
        return self.file, self.line, self.column, self.analyzer


class LinterRun(BaseModel):
    name: str
    status: str  # ran | cached | skipped | failed | not-implemented
    reason: str | None = None
    seconds: float = 0.0


class LintReport(BaseModel):
    root: str
    findings: list[Finding] = []
    linters: list[LinterRun] = []
    scope: list[str] = []
    errors: int = 0
    warnings: int = 0
    seconds: float = 0.0

    @property
    def failed(self) -> list[LinterRun]:
        return [r for r in self.linters if r.status == "failed"]

    @property
    def exit_code(self) -> int:
        """2: a linter could not run (named); 1: an error-level finding; 0 otherwise (warnings never gate)."""
        return 2 if self.failed else 1 if self.errors else 0




def summarize(report: LintReport) -> LintReport:
    report.findings.sort(key=Finding.sort_key)
    report.errors = sum(1 for f in report.findings if f.severity == ERROR)
    report.warnings = sum(1 for f in report.findings if f.severity == WARNING)
    return report
