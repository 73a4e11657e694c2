"""Renderings of a lint report besides text and `--json` (docs/reference-lint.md#output): SARIF 2.1.0 for
code-scanning UIs, and the gate-evidence document `framework gate record <env> --from <file>` attaches to a
promotion."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine import __version__
from engine.lint.model import ANALYZERS, BY_NAME, ERROR, LintReport
from engine.paths import atomic_write_bytes

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
DOCS = "https://framework.dev/docs/reference-lint"


def sarif(report: LintReport) -> dict[str, Any]:
    """One run, tool `framework lint`; rule ids are `<analyzer>/<rule>` (e.g. `buf lint/FIELD_LOWER_SNAKE_CASE`)."""
    rules: dict[str, dict[str, Any]] = {}
    results = []
    for f in report.findings:
        rule_id = f.analyzer if f.rule == f.analyzer else f"{f.analyzer}/{f.rule}"
        if rule_id not in rules:
            known = BY_NAME.get(f.analyzer)
            rule: dict[str, Any] = {"id": rule_id, "name": f.rule,
                                    "shortDescription": {"text": known.summary if known else f"{f.analyzer} {f.rule}"}}
            if known:
                rule["helpUri"] = f"{DOCS}#{known.name}"
            rules[rule_id] = rule
        result: dict[str, Any] = {
            "ruleId": rule_id, "ruleIndex": list(rules).index(rule_id),
            "level": "error" if f.severity == ERROR else "warning",
            "message": {"text": f.message + (f" ({f.hint})" if f.hint else "")},
            "locations": [{"physicalLocation": {
                "artifactLocation": {"uri": f.file, "uriBaseId": "%SRCROOT%"},
                "region": {"startLine": max(1, f.line), "startColumn": max(1, f.column)}}}],
        }
        results.append(result)
    failed = [{"level": "error", "message": {"text": f"{r.name} could not run: {r.reason}"},
               "descriptor": {"id": r.name}} for r in report.failed]
    run: dict[str, Any] = {
        "tool": {"driver": {"name": "framework lint", "version": __version__, "informationUri": DOCS,
                            "rules": list(rules.values())}},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": Path(report.root).resolve().as_uri() + "/"}},
        "results": results,
        "invocations": [{"executionSuccessful": not report.failed, "toolExecutionNotifications": failed}],
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def gate(report: LintReport) -> dict[str, Any]:
    """Gate-shaped JSON (`name`, `status`, `summary`) with the counts behind it."""
    status = "error" if report.failed else "failed" if report.errors else "passed"
    summary = f"{report.errors} errors, {report.warnings} warnings"
    if report.failed:
        summary += "; could not run: " + ", ".join(r.name for r in report.failed)
    by_analyzer: dict[str, int] = {}
    for f in report.findings:
        by_analyzer[f.analyzer] = by_analyzer.get(f.analyzer, 0) + 1
    return {"name": "lint", "status": status, "summary": summary, "errors": report.errors,
            "warnings": report.warnings, "by_analyzer": by_analyzer, "scope": report.scope,
            "analyzers": [a.name for a in ANALYZERS]}


def write_json(path: Path, doc: dict[str, Any]) -> None:
    atomic_write_bytes(path, (json.dumps(doc, indent=2) + "\n").encode())
