"""golangci-lint in `framework lint` (docs/reference-lint.md#golangci-lint): the pinned binary `make go-tools`
installs into .tools/bin, run once over `./...` on whole runs; its findings carry golangci-lint's linter name as
the rule. Never downloaded at run time: a missing binary is a linter that cannot run (exit 2, named). On a whole
run it is the custom build with the framework's analyzers inside (engine/lint/golangci_plugin.py), and its govet
and plugin findings are reported as go vet's and the analyzers' (docs/reference-lint.md#go-analyzers).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from engine.lint.golang import BY_GO_NAME, GO_LINTER, VET_WARNINGS, LinterCannotRun, lint_cache
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


def has_own_config(root: Path) -> bool:
    return any((root / f".golangci.{ext}").is_file() for ext in ("yml", "yaml", "toml", "json"))


def run(root: Path, custom: tuple[Path, Path] | None = None) -> list[Finding]:
    """golangci-lint's findings over the whole module (a project's own .golangci.yml, when present, is read);
    `custom` = (the build with the framework's analyzers, its configuration): go vet's passes and the analyzers too."""
    argv = [binary(), *_ARGS]
    if custom:
        argv = [str(custom[0]), "run", "--allow-parallel-runners", "--config", str(custom[1]),
                *_ARGS[_ARGS.index("--output.json.path"):]]
    elif has_own_config(root):
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
        analyzer, rule, text = _attribute(str(issue.get("FromLinter") or NAME), str(issue.get("Text", "")))
        warn = issue.get("Severity") == "warning" or (analyzer == GO_LINTER and rule in VET_WARNINGS)
        out.append(Finding(analyzer=analyzer, rule=rule, severity=WARNING if warn else ERROR, file=rel,
                           line=int(pos.get("Line") or 1), column=int(pos.get("Column") or 1), message=text))
    return out


def _attribute(linter: str, text: str) -> tuple[str, str, str]:
    """(analyzer, rule, message): golangci-lint prefixes a multi-analyzer linter's text with `<analyzer>: `; govet's
    findings are go vet's (rule: the pass), the plugin's the framework analyzers' (docs/reference-lint.md#output)."""
    prefix, sep, rest = text.partition(": ")
    if linter == "govet" and sep:
        return GO_LINTER, prefix, rest
    if linter == "framework" and sep and prefix in BY_GO_NAME:
        return BY_GO_NAME[prefix], BY_GO_NAME[prefix], rest
    return NAME, linter, text
