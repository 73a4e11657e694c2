"""Human renderings of `framework db ...` and `ci migration-safety` results."""

from __future__ import annotations

from typing import Any


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
