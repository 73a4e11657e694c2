"""golangci-lint in `framework lint` (docs/reference-lint.md#golangci-lint): the pinned binary `make go-tools`
installs into .tools/bin, run once over `./...` on whole runs; its findings carry golangci-lint's linter name as
the rule. Never downloaded at run time: a missing binary is a linter that cannot run (exit 2, named).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from engine.lint.golang import LinterCannotRun, lint_cache
from engine.lint.model import ERROR, WARNING, Finding
from engine.paths import pinned_tool

NAME = "golangci-lint"
VERSION = "v2.15.0"  # pinned with the Makefile's GOLANGCI_LINT_VERSION
OVERRIDE_ENV = "FRAMEWORK_GOLANGCI_LINT"
# go vet's passes already run in the framework's vet tool (one load with the Go analyzers); golangci-lint's
# `standard` set without its govet is errcheck, ineffassign, staticcheck and unused.
_ARGS = ("run", "--allow-parallel-runners", "--default", "standard", "--disable", "govet",
         "--output.json.path", "stdout", "--output.text.path", "", "--show-stats=false",
         "--max-issues-per-linter", "0", "--max-same-issues", "0")


def binary() -> str:
    """`$FRAMEWORK_GOLANGCI_LINT` when set (that path only), else .tools/bin, else PATH."""
    override = os.environ.get(OVERRIDE_ENV)
    found = (override if Path(override).is_file() and os.access(override, os.X_OK) else None) if override \
        else pinned_tool(NAME)
    if not found:
        raise LinterCannotRun(f"{NAME}: the pinned {NAME} {VERSION} is not installed",
                              hint=f"make go-tools   (installs {NAME} {VERSION} into .tools/bin)")
    return found


def run(root: Path) -> list[Finding]:
    """golangci-lint's findings over the whole module (a project's own .golangci.yml, when present, is read)."""
    argv = [binary(), *_ARGS]
    if any((root / f".golangci.{ext}").is_file() for ext in ("yml", "yaml", "toml", "json")):
        argv = [binary(), "run", "--allow-parallel-runners", "--output.json.path", "stdout", "--output.text.path", "",
                "--show-stats=false"]
    env = {"GOLANGCI_LINT_CACHE": str(lint_cache() / "golangci"), **os.environ, "GOWORK": "off"}
    proc = subprocess.run([*argv, "./..."], cwd=root, capture_output=True, text=True, timeout=900, env=env)
    if proc.returncode == 5:  # golangci-lint's "no go files to analyze"
        return []
    try:
        doc = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.stdout.strip() else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict) or proc.returncode not in (0, 1):
        detail = (proc.stderr or proc.stdout).strip()[-2000:]
        raise LinterCannotRun(f"{NAME} failed (exit {proc.returncode}):\n{detail}")
    out = []
    for issue in doc.get("Issues") or []:
        pos = issue.get("Pos") or {}
        file = str(pos.get("Filename", "."))
        try:
            rel = (root / file).resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            rel = file
        out.append(Finding(analyzer=NAME, rule=str(issue.get("FromLinter") or NAME),
                           severity=WARNING if issue.get("Severity") == "warning" else ERROR, file=rel,
                           line=int(pos.get("Line") or 1), column=int(pos.get("Column") or 1),
                           message=str(issue.get("Text", ""))))
    return out
