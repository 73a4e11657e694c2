"""Frontend linters of `framework lint` (docs/reference-lint.md#linters): eslint and `tsc --noEmit` from each
frontend's own node_modules (installed by its `npm ci`; never downloaded at run time)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from engine.lint.golang import LinterCannotRun
from engine.lint.model import ERROR, WARNING, Finding
from engine.project import Project

TYPECHECK_MODES = ("error", "warn", "off")
_TSC_LINE = re.compile(r"^(?P<file>.+?)\((?P<line>\d+),(?P<col>\d+)\): (?P<level>error|warning) (?P<code>TS\d+): "
                       r"(?P<msg>.*)$")


def frontend_dirs(root: Path) -> list[Path]:
    """`frontends[].path` of framework.yaml, else directories under frontends/ holding a package.json."""
    import yaml

    out: list[Path] = []
    try:
        data = yaml.safe_load((root / "framework.yaml").read_text(encoding="utf-8")) or {}
    except (OSError, ValueError):
        data = {}
    for item in data.get("frontends") or [] if isinstance(data, dict) else []:
        path = item.get("path") if isinstance(item, dict) else None
        if isinstance(path, str) and (root / path / "package.json").is_file():
            out.append(root / path)
    base = root / "frontends"
    if base.is_dir():
        out += [d for d in sorted(base.iterdir()) if (d / "package.json").is_file() and d not in out]
    return out


def typecheck_mode(project: Project) -> str:
    """`lint.frontend.typecheck`: error (default), warn or off."""
    lint = project.config.get("lint") or {}
    fe = lint.get("frontend") if isinstance(lint, dict) else None
    mode = str((fe or {}).get("typecheck", "error")) if isinstance(fe, dict) else "error"
    if mode not in TYPECHECK_MODES:
        from engine.errors import ConfigError

        raise ConfigError(f"framework.yaml lint.frontend.typecheck: {mode!r} is not one of "
                          f"{', '.join(TYPECHECK_MODES)}")
    return mode


def _bin(frontend: Path, name: str, linter: str) -> str:
    path = frontend / "node_modules" / ".bin" / name
    if not path.is_file():
        raise LinterCannotRun(f"{linter}: {path.relative_to(frontend.parent)} is missing",
                              hint=f"run `npm ci` in {frontend}")
    return str(path)


def eslint(root: Path, frontend: Path) -> list[Finding]:
    argv = [_bin(frontend, "eslint", "eslint"), "--format", "json", "."]
    proc = subprocess.run(argv, cwd=frontend, capture_output=True, text=True, timeout=600)
    if proc.returncode not in (0, 1):
        detail = (proc.stderr or proc.stdout).strip()[-2000:]
        raise LinterCannotRun(f"eslint failed (exit {proc.returncode}):\n{detail}")
    try:
        results = json.loads(proc.stdout or "[]")
    except ValueError as exc:
        raise LinterCannotRun(f"eslint printed no JSON:\n{proc.stdout[-2000:]}") from exc
    out = []
    for result in results:
        rel = Path(result["filePath"]).resolve().relative_to(root.resolve()).as_posix()
        for msg in result.get("messages", []):
            out.append(Finding(analyzer="eslint", rule=str(msg.get("ruleId") or "parse"),
                               severity=ERROR if msg.get("severity") == 2 else WARNING, file=rel,
                               line=int(msg.get("line") or 1), column=int(msg.get("column") or 1),
                               message=str(msg.get("message", ""))))
    return out


def tsc(root: Path, frontend: Path, mode: str) -> list[Finding]:
    argv = [_bin(frontend, "tsc", "tsc"), "--noEmit", "--pretty", "false"]
    proc = subprocess.run(argv, cwd=frontend, capture_output=True, text=True, timeout=600)
    out = []
    for line in proc.stdout.splitlines():
        m = _TSC_LINE.match(line.strip())
        if not m:
            continue
        rel = (frontend / m["file"]).resolve().relative_to(root.resolve()).as_posix()
        out.append(Finding(analyzer="tsc", rule=m["code"], severity=ERROR if mode == "error" else WARNING, file=rel,
                           line=int(m["line"]), column=int(m["col"]), message=m["msg"],
                           hint="lint.frontend.typecheck: warn keeps it from failing the run"))
    if proc.returncode != 0 and not out:
        raise LinterCannotRun(f"tsc failed (exit {proc.returncode}):\n{(proc.stdout + proc.stderr).strip()[-2000:]}")
    return out
