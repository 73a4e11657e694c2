"""The Go half of `framework lint` (docs/reference-lint.md#go-analyzers): go vet's passes and the framework's
go/analysis analyzers, compiled once from assets/lint/go into a vet tool cached by the hash of its sources, run by
`go vet -vettool` in one type-checked load on runs that select analyzers or a scope (a whole run runs them inside
golangci-lint: engine/lint/golangci_plugin.py).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from engine.lint import gotool
from engine.lint.gotool import LinterCannotRun, go_tool, lint_cache, tools_dir
from engine.lint.gotool import go_binary as _go
from engine.lint.model import ANALYZERS, ERROR, WARNING, Finding
from engine.paths import assets_dir

__all__ = ["LinterCannotRun", "go_tool", "lint_cache", "run", "source_hash", "tools_dir", "vettool"]

GO_LINTER = "go vet"
BY_GO_NAME = {a.go_name: a.name for a in ANALYZERS if a.group == "go"}
VET_WARNINGS = ("unusedresult",)  # go vet passes reported as warnings


def _source_dir() -> Path:
    return assets_dir() / "lint" / "go"


def source_hash() -> str:
    return gotool.source_hash(_source_dir())


def vettool() -> Path:
    """The cached vet tool, built on first use (offline from the module cache when the proxy is unreachable)."""
    return go_tool(_source_dir(), "frameworkvet", "go vet: building the framework's analyzers",
                   hint="needs golang.org/x/tools in the Go module cache or the module proxy")


def _packages(root: Path, scope: list[str]) -> list[str]:
    if not scope:
        return ["./..."]
    dirs = sorted({(Path(p).parent if p.endswith(".go") else Path(p)).as_posix() for p in scope})
    return [f"./{d}" if d != "." else "." for d in dirs]


def run(root: Path, analyzers: list[str], with_vet: bool, scope: list[str]) -> list[Finding]:
    """Findings of go vet's passes (when `with_vet`) and the named framework analyzers."""
    flags: list[str] = []
    if analyzers or not with_vet:
        go_names = {a.go_name for a in ANALYZERS if a.name in analyzers and a.done}
        if not go_names:
            return []
        flags = [f"-{n}" for n in sorted(go_names)]
    argv = [_go(), "vet", f"-vettool={vettool()}", "-json", *flags, *_packages(root, scope)]
    proc = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "GOWORK": "off"})
    documents = _json_documents(proc.stdout + "\n" + proc.stderr)
    if proc.returncode != 0 and not documents:
        raise LinterCannotRun(f"go vet failed (exit {proc.returncode}):\n{proc.stderr.strip()[-2000:]}")
    return _findings(root, documents)


def _json_documents(text: str) -> list[dict]:
    """go vet -json writes one JSON object per package, between `# pkg` comment lines."""
    decoder = json.JSONDecoder()
    out: list[dict] = []
    i = 0
    while i < len(text):
        start = text.find("{", i)
        if start < 0:
            break
        try:
            value, end = decoder.raw_decode(text, start)
        except ValueError:
            i = start + 1
            continue
        if isinstance(value, dict):
            out.append(value)
        i = end
    return out


def _findings(root: Path, documents: list[dict]) -> list[Finding]:
    out: list[Finding] = []
    for doc in documents:
        for results in doc.values():
            if not isinstance(results, dict):
                continue
            for name, items in results.items():
                if not isinstance(items, list):
                    if isinstance(items, dict) and "error" in items:  # a package that does not type-check
                        out.append(Finding(analyzer=GO_LINTER, rule="typecheck", severity=ERROR, file=".", line=1,
                                           message=str(items["error"])))
                    continue
                for item in items:
                    out.append(_finding(root, name, item))
    return out


def _finding(root: Path, name: str, item: dict) -> Finding:
    posn = str(item.get("posn", ""))
    parts = posn.rsplit(":", 2)
    file, line, col = (parts + ["1", "1"])[:3] if len(parts) == 3 else (posn, "1", "1")
    try:
        rel = Path(file).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        rel = file
    analyzer = BY_GO_NAME.get(name)
    return Finding(analyzer=analyzer or GO_LINTER, rule=analyzer or name,
                   severity=ERROR if analyzer or name not in VET_WARNINGS else WARNING, file=rel,
                   line=int(line) if line.isdigit() else 1, column=int(col) if col.isdigit() else 1,
                   message=str(item.get("message", "")))
