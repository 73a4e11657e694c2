"""Human output of `framework ci ...` (the JSON documents are the engine's models)."""

from __future__ import annotations

import time
from typing import Any

from app.output import plain

MARK = {"passed": "ok", "skipped": "skip", "running": "...", "failed": "FAIL", "error": "ERR"}



def render_timeline(tl: Any) -> None:
    plain(f"run {tl.run_id} ({', '.join(tl.sources)}): {tl.verdict}")
    for s in tl.stages:
        when = time.strftime("%H:%M:%S", time.gmtime(s.at))
        where = f"{s.env}: " if s.env else ""
        plain(f"  {when}  {MARK.get(s.status, s.status):<4}  {s.kind:<9} {where}{s.name}  {s.detail}  "
                      f"[{s.run_id}]")


def timeline_error(tl: Any) -> dict[str, Any]:
    if tl.verdict == "empty":
        return {"code": "timeline_empty", "message": f"nothing recorded run {tl.run_id}",
                "hint": "cuts, gates and promotions record the run id when made inside CI"}
    if tl.verdict == "running":
        return {"code": "stage_running", "message": f"{tl.counts['running']} stage(s) still running"}
    bad = [f"{s.kind} {s.name}" for s in tl.stages if s.status in ("failed", "error")]
    return {"code": "stage_failed", "message": f"{len(bad)} stage(s) failed or errored: {', '.join(bad)}"}


def render_test_run(report: Any) -> None:
    for p in report.packages:
        tail = f"  (allowed: {p.allowed})" if p.allowed else ""
        plain(f"{p.status:<10} {p.package}  {p.passed} passed, {p.failed} failed, {p.skipped} skipped{tail}")
        for name in p.failed_tests:
            plain(f"           FAIL {name}")
    t = report.totals
    plain(f"{t['passed']} passed, {t['failed']} failed, {t['skipped']} skipped "
          f"(skip ratio {report.skip_ratio:.0%}, allowed {report.max_skip_ratio:.0%}): {report.verdict}")


def test_run_error(report: Any) -> dict[str, Any]:
    return {"code": "test_run_failed", "message": "; ".join(f"{v.rule}: {v.message}" for v in report.violations)}


def render_summary(summary: Any) -> None:
    import sys

    sys.stdout.write(summary.markdown)


def summary_error(summary: Any) -> dict[str, Any]:
    bad = [f"{i.path} ({i.error})" for i in summary.inputs if i.kind == "unreadable"]
    return {"code": "input_unreadable", "message": f"unreadable input: {', '.join(bad)}"}


def render_vuln_scan(report: Any) -> None:
    for run in report.scanners:
        plain(f"{run.status:<9} {run.name} ({run.path}): {run.findings} finding(s)")
    for f in report.findings:
        plain(f"  {f.id:<20} {f.package} {f.version} -> fixed in {f.fixed or 'no fixed version'}  {f.summary}")


def vuln_scan_error(report: Any) -> dict[str, Any]:
    return {"code": "vulnerabilities_found",
            "message": f"{len(report.findings)} finding(s): {', '.join(sorted({f.id for f in report.findings}))}"}
