"""`ci summarize <files...>`: our `--json` documents as GitHub-flavoured Markdown for a step summary
(docs/reference-ci.md#commands).

Any document with the envelope (`ok`, `exit_code`, `error`) renders: a heading with its verdict, the
error, then what it carries. Known shapes (deploy, ci run, release verify, test run, gates, doctor,
vuln-scan) get their own table; anything else shows its scalar fields and its lists of records as
tables. The Markdown is printed and, when `$GITHUB_STEP_SUMMARY` names a file, appended to it.
Exit 0 whatever the documents say; 1 only when an input cannot be read (each one named).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.errors import EngineError

MAX_ROWS = 50
MAX_COLUMNS = 8
ENVELOPE = ("ok", "exit_code", "error")


class SummaryInput(BaseModel):
    path: str
    kind: str  # deploy, ci-run, release-verify, test-run, gates, status, doctor, vuln-scan, document, unreadable
    ok: bool | None = None
    exit_code: int | None = None
    error: str | None = None  # why it could not be read


class Summary(BaseModel):
    inputs: list[SummaryInput]
    markdown: str
    step_summary: str | None  # the file appended to ($GITHUB_STEP_SUMMARY)


def cell(value: Any) -> str:
    """One table cell: scalars as text, `|` escaped, newlines as <br>, long text cut."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (dict, list)):
        value = json.dumps(value, sort_keys=True)
    text = str(value).replace("|", "\\|").replace("\r", "").replace("\n", "<br>")
    return text if len(text) <= 200 else text[:197] + "..."


def table(rows: list[dict[str, Any]], columns: list[str] | None = None) -> list[str]:
    if not rows:
        return ["_(none)_", ""]
    if columns is None:
        columns = []
        for row in rows:
            columns += [k for k, v in row.items() if k not in columns and not isinstance(v, (dict, list))]
        columns = columns[:MAX_COLUMNS]
    out = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    out += ["| " + " | ".join(cell(r.get(c)) for c in columns) + " |" for r in rows[:MAX_ROWS]]
    if len(rows) > MAX_ROWS:
        out.append(f"\n_{len(rows) - MAX_ROWS} more rows not shown_")
    return out + [""]


def kind_of(doc: dict[str, Any]) -> str:
    if "stages" in doc and "run_id" in doc:
        return "ci-run"
    if isinstance(doc.get("checks"), list) and "version" in doc:
        return "release-verify"
    if "packages" in doc and "totals" in doc and "violations" in doc:
        return "test-run"
    if "deploy_plan" in doc or doc.get("mode") in ("explain", "dry_run", "apply"):
        return "deploy"
    if isinstance(doc.get("checks"), list):
        return "doctor"
    if isinstance(doc.get("findings"), list) and "scanners" in doc:
        return "vuln-scan"
    if isinstance(doc.get("gates"), list):
        return "gates"
    envs = doc.get("environments")
    if isinstance(envs, list) and envs and all(isinstance(e, dict) and "convergence" in e for e in envs):
        return "status"
    return "document"


def _deploy(doc: dict[str, Any]) -> list[str]:
    target, current = doc.get("target") or {}, doc.get("current") or {}
    lines = [f"- release **{cell(target.get('release'))}** to **{cell(target.get('env') or doc.get('env'))}** "
             f"(mode {cell(doc.get('mode'))}, applied {cell(doc.get('applied'))})",
             f"- previous promotion: {cell(current.get('promotion_id')) or 'none'}"]
    plan = doc.get("deploy_plan") or {}
    if plan:
        lines.append(f"- plan `{cell(plan.get('digest'))}`, direction {cell(plan.get('direction'))}")
    rollout = (doc.get("rollout") or {}).get("resources") or []
    return lines + [""] + table(rollout, ["name", "phase", "outcome"])


def _body(kind: str, doc: dict[str, Any]) -> list[str]:
    if kind == "ci-run":
        return table(doc["stages"], ["kind", "env", "name", "status", "run_id", "detail"])
    if kind == "release-verify":
        return table(doc["checks"], ["workload", "kind", "coordinate", "outcome", "detail"])
    if kind == "test-run":
        t = doc.get("totals") or {}
        head = [f"{cell(t.get('passed'))} passed, {cell(t.get('failed'))} failed, {cell(t.get('skipped'))} skipped", ""]
        return head + table(doc["violations"], ["rule", "message"]) + table(
            [p for p in doc["packages"] if p.get("status") != "pass" or p.get("skipped")],
            ["package", "status", "passed", "failed", "skipped", "allowed"])
    if kind == "deploy":
        return _deploy(doc)
    if kind == "doctor":
        return table(doc["checks"], ["name", "status", "detail", "fix"])
    if kind == "vuln-scan":
        return table(doc["findings"], ["scanner", "id", "package", "version", "fixed"])
    if kind == "gates":
        return table(doc["gates"], ["name", "status", "summary", "run_id"])
    if kind == "status":
        return _status(doc)
    return _generic(doc)


def _status(doc: dict[str, Any]) -> list[str]:
    rows = [{**e, "promotion": (e.get("promotion") or {}).get("id")} for e in doc["environments"]]
    out = table(rows, ["env", "release", "promotion", "health", "convergence", "message"])
    for e in doc["environments"]:
        if e.get("workloads") or e.get("images"):
            out += [f"**{cell(e['env'])}**", ""] + table(e.get("workloads") or [], ["name", "phase"])
            out += table(e.get("images") or [], ["name", "state"])
    return out


def _generic(doc: dict[str, Any]) -> list[str]:
    scalars = [{"field": k, "value": v} for k, v in doc.items()
               if k not in ENVELOPE and not isinstance(v, (dict, list))]
    out = table(scalars, ["field", "value"]) if scalars else []
    for key, value in doc.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            out += [f"**{key}**", ""] + table(value)
    return out


def render(path: str, doc: dict[str, Any]) -> tuple[SummaryInput, list[str]]:
    kind = kind_of(doc)
    ok, code = doc.get("ok"), doc.get("exit_code")
    mark = "✅" if ok else ("❌" if ok is False else "ℹ️")
    lines = [f"### {mark} {kind} — `{Path(path).name}`" + (f" (exit {code})" if code is not None else ""), ""]
    error = doc.get("error")
    if isinstance(error, dict) and error.get("message"):
        lines += [f"> **{cell(error.get('code'))}**: {cell(error['message'])}", ""]
        if error.get("hint"):
            lines += [f"> hint: {cell(error['hint'])}", ""]
    lines += _body(kind, doc)
    return SummaryInput(path=path, kind=kind, ok=ok if isinstance(ok, bool) else None,
                        exit_code=code if isinstance(code, int) else None), lines


def read(path: str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as fh:
        doc = json.load(fh)
    if not isinstance(doc, dict):
        raise ValueError("not a JSON object (a `--json` document is one object)")
    return doc


def summarize(paths: list[str]) -> tuple[Summary, int]:
    inputs: list[SummaryInput] = []
    lines: list[str] = []
    for path in paths:
        try:
            doc = read(path)
        except (OSError, ValueError) as exc:
            why = getattr(exc, "strerror", None) or str(exc)
            inputs.append(SummaryInput(path=path, kind="unreadable", error=why))
            lines += [f"### ⚠️ unreadable — `{Path(path).name}`", "", f"> {cell(why)}", ""]
            continue
        entry, body = render(path, doc)
        inputs.append(entry)
        lines += body
    markdown = "\n".join(lines).rstrip("\n") + "\n"
    target = os.environ.get("GITHUB_STEP_SUMMARY") or None
    if target:
        try:
            with open(target, "a", encoding="utf-8") as fh:  # appended: other steps write to it too
                fh.write(markdown + "\n")
        except OSError as exc:
            raise EngineError(f"cannot append to $GITHUB_STEP_SUMMARY ({target}): {exc.strerror}",
                              code="step_summary_unwritable") from exc
    bad = [i for i in inputs if i.kind == "unreadable"]
    return Summary(inputs=inputs, markdown=markdown, step_summary=target), (1 if bad else 0)
