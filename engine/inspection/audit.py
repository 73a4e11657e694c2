"""`framework project audit` (docs/reference-project.md#project-audit): one report over the project's health,
by category. Each category has a status (ok, warning, error, skipped) and findings (file, line where known,
message). The command exits 1 when any category reports an error; warnings never gate.

Categories: drift (from `project map`), orphaned handlers (an `rpc_<name>.go` whose RPC the protos no longer
declare), migrations vs entities, disowned files (info), the version pin (`framework_version`) and the lint
summary (`framework lint`'s engine, in-process, with its cache).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine import __version__
from engine.authoring import naming, ownership
from engine.authoring.descriptor import CACHE, Descriptor, compile_descriptor, read_cache
from engine.errors import EngineError
from engine.inspection.map import FileOwnership, ownerships
from engine.project import Project

HANDLERS = "internal/handlers"
MIGRATIONS = Path("db") / "migrations"
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


class AuditFinding(BaseModel):
    severity: str  # info | warning | error
    message: str
    file: str | None = None
    line: int | None = None


class AuditCategory(BaseModel):
    name: str  # drift | orphaned-handlers | migrations-entities | disowned | version-pin | lint
    status: str  # ok | warning | error | skipped
    summary: str
    findings: list[AuditFinding] = []
    command: str  # the command that shows or fixes it


class AuditReport(BaseModel):
    root: str
    categories: list[AuditCategory]
    errors: int
    warnings: int

    @property
    def exit_code(self) -> int:
        """1 when a category reports an error; warnings never gate (docs/reference-project.md#project-audit)."""
        return 1 if any(c.status == "error" for c in self.categories) else 0


def _category(name: str, findings: list[AuditFinding], ok: str, command: str, summary: str | None = None
              ) -> AuditCategory:
    worst = max((SEVERITY_RANK[f.severity] for f in findings), default=0)
    status = {0: "ok", 1: "warning", 2: "error"}[worst]
    if summary is None:
        summary = ok if not findings else f"{len(findings)} finding" + ("s" if len(findings) != 1 else "")
    return AuditCategory(name=name, status=status, summary=summary, findings=findings, command=command)


def _skipped(name: str, reason: str, command: str) -> AuditCategory:
    return AuditCategory(name=name, status="skipped", summary=reason, command=command)


def drift(files: list[FileOwnership]) -> AuditCategory:
    found = [AuditFinding(severity="error", file=f.path,
                          message="generated file edited by hand: its content no longer matches its hash marker"
                          if f.present else "generated file deleted (framework generate writes it again)")
             for f in files if f.ownership == "drifted"]
    return _category("drift", found, "every generated file matches its hash marker",
                     "framework project map --filter drifted")


def disowned(project: Project) -> AuditCategory:
    found = [AuditFinding(severity="info", file=d.path, message=f"disowned: {d.reason}" if d.reason else "disowned")
             for d in ownership.disowned(project.root)]
    summary = f"{len(found)} disowned file" + ("s" if len(found) != 1 else "") if found else "no disowned files"
    return _category("disowned", found, summary, "framework project map --filter disowned", summary)


def _descriptor(root: Path, proto_dir: str) -> tuple[Descriptor | None, str]:
    """The descriptor cache when it is newer than every proto, else the protos compiled with buf; a stale
    cache when buf cannot run. (None, why) when there is neither."""
    protos = list((root / proto_dir).rglob("*.proto")) if (root / proto_dir).is_dir() else []
    cache = root / CACHE
    if cache.is_file():
        newest = max((p.stat().st_mtime_ns for p in protos), default=0)
        if cache.stat().st_mtime_ns >= newest:
            try:
                return read_cache(root), ""
            except (ValueError, EngineError):
                pass
    if protos:
        try:
            return compile_descriptor(root, proto_dir), ""
        except EngineError as exc:
            if cache.is_file():
                try:
                    return read_cache(root), f"(stale descriptor cache: {exc.message})"
                except (ValueError, EngineError):
                    pass
            return None, exc.message
    return None, f"no protos under {proto_dir}/"


def _line_of(path: Path, pattern: re.Pattern[str]) -> int | None:
    try:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if pattern.search(line):
                return number
    except (OSError, UnicodeDecodeError):
        return None
    return None


def orphaned_handlers(root: Path, desc: Descriptor) -> AuditCategory:
    expected = {f"{HANDLERS}/{naming.service_key(s.name)}/{naming.rpc_file(m.name)}"
                for s in desc.services for m in s.methods}
    found = []
    base = root / HANDLERS
    for path in sorted(base.glob("*/rpc_*.go")) if base.is_dir() else []:
        if path.name.endswith("_test.go"):
            continue
        rel = path.relative_to(root).as_posix()
        if rel not in expected:
            method = naming.camel(path.stem.removeprefix("rpc_"))
            line = _line_of(path, re.compile(rf"^func \([^)]*\) {re.escape(method)}\(", re.IGNORECASE)) or 1
            found.append(AuditFinding(severity="warning", file=rel, line=line,
                                      message=f"handler of RPC {method}, which no service in the protos declares "
                                              "(renamed or removed?)"))
    return _category("orphaned-handlers", found, "every rpc_<name>.go handler has its RPC",
                     "framework project introspect handlers")


def migrations_entities(root: Path, desc: Descriptor, proto_dir: str) -> AuditCategory:
    from engine.authoring.entities import tables

    known = tables(root / MIGRATIONS) if (root / MIGRATIONS).is_dir() else {}
    entities = {naming.table_of(m.go_name.split("_")[-1]): m for m in desc.messages if m.entity}
    found = []
    for table, msg in sorted(entities.items()):
        if table not in known:
            proto = root / proto_dir / msg.file
            short = msg.full_name.rsplit(".", 1)[-1]
            found.append(AuditFinding(severity="error", file=f"{proto_dir}/{msg.file}",
                                      line=_line_of(proto, re.compile(rf"^\s*message {re.escape(short)}\b")),
                                      message=f"entity {msg.full_name} has no table {table!r} in db/migrations"))
    migrations = sorted((root / MIGRATIONS).glob("*.up.sql")) if (root / MIGRATIONS).is_dir() else []
    for table in sorted(set(known) - set(entities)):
        pattern = re.compile(rf"create\s+table\s+(if\s+not\s+exists\s+)?(\w+\.)?\"?{re.escape(table)}\b", re.I)
        where = next(((p, line) for p in migrations if (line := _line_of(p, pattern))), None)
        found.append(AuditFinding(severity="warning", file=where[0].relative_to(root).as_posix() if where else None,
                                  line=where[1] if where else None,
                                  message=f"table {table!r} has no framework:entity message"))
    return _category("migrations-entities", found, "every entity has its table and every table its entity",
                     "framework lint --db")


def _version_key(text: str) -> Any:
    """A comparable version (PEP 440: 0.1 == 0.1.0, 0.2.0rc1 < 0.2.0), or None when `text` is not one."""
    from packaging.version import InvalidVersion, Version

    try:
        return Version(text)
    except InvalidVersion:
        return None


def version_pin(project: Project) -> AuditCategory:
    command = "framework project upgrade --check"
    pin = project.config.get("framework_version")
    if pin is None or str(pin).strip() == "":
        found = [AuditFinding(severity="warning", file="framework.yaml",
                              message=f"no framework_version pin (this framework is {__version__})")]
    else:
        pinned, ours = _version_key(str(pin)), _version_key(__version__)
        line = _line_of(project.root / "framework.yaml", re.compile(r"^framework_version\s*:"))
        if pinned is None:
            found = [AuditFinding(severity="error", file="framework.yaml", line=line,
                                  message=f"framework_version {pin!r} is not a version")]
        elif ours is not None and pinned > ours:
            found = [AuditFinding(severity="error", file="framework.yaml", line=line,
                                  message=f"framework_version {pin} is newer than this framework ({__version__}): "
                                          "install that version")]
        elif ours is not None and pinned < ours:
            found = [AuditFinding(severity="warning", file="framework.yaml", line=line,
                                  message=f"framework_version {pin} is older than this framework ({__version__}): "
                                          "framework project upgrade moves the project")]
        else:
            found = []
    return _category("version-pin", found, f"framework_version {pin} matches this framework", command)


def _lint_tools_missing(root: Path) -> list[str]:
    from engine.authoring import tools
    from engine.lint import golangci

    missing = []
    if (root / "go.mod").is_file():
        if not shutil.which("go"):
            missing.append("go")
        try:
            golangci.binary()
        except EngineError:
            missing.append("golangci-lint")
    try:
        tools.find("buf")
    except EngineError:
        missing.append("buf")
    return missing


def lint_summary(project: Project) -> AuditCategory:
    from engine.lint.run import lint

    command = "framework lint"
    missing = _lint_tools_missing(project.root)
    if missing:
        return _skipped("lint", f"skipped: {', '.join(missing)} not installed (make go-tools)", command)
    try:
        report = lint(project)
    except EngineError as exc:
        return _skipped("lint", f"skipped: {exc.message}", command)
    found = [AuditFinding(severity="error" if f.severity == "error" else "warning", file=f.file, line=f.line,
                          message=f"{f.analyzer}: {f.message}") for f in report.findings]
    failed = [r for r in report.linters if r.status == "failed"]
    found += [AuditFinding(severity="warning", message=f"{r.name} could not run: {r.reason}") for r in failed]
    summary = f"{report.errors} errors, {report.warnings} warnings" + (
        f", {len(failed)} linters could not run" if failed else "")
    return _category("lint", found, summary, command, summary)


def audit(project: Project, lint: bool = True) -> AuditReport:
    """Every category; `lint=False` reports the lint summary as skipped (`--no-lint`)."""
    from engine.authoring.config import load

    cfg = load(project)
    files, _ = ownerships(project)
    categories = [drift(files)]
    desc, why = _descriptor(project.root, cfg.proto_dir)
    if desc is None:
        categories.append(_skipped("orphaned-handlers", f"skipped: {why}", "framework generate"))
        categories.append(_skipped("migrations-entities", f"skipped: {why}", "framework generate"))
    else:
        categories.append(orphaned_handlers(project.root, desc))
        categories.append(migrations_entities(project.root, desc, cfg.proto_dir))
        if why:
            for c in categories[-2:]:
                c.summary += f" {why}"
    categories.append(disowned(project))
    categories.append(version_pin(project))
    categories.append(lint_summary(project) if lint else _skipped("lint", "skipped (--no-lint)", "framework lint"))
    errors = sum(f.severity == "error" for c in categories for f in c.findings)
    warnings = sum(f.severity == "warning" for c in categories for f in c.findings)
    return AuditReport(root=str(project.root), categories=categories, errors=errors, warnings=warnings)
