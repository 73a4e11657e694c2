"""`framework scaffold package|adapter|library` and `framework package new`
(docs/reference-authoring.md#packages-adapters-and-libraries).

An internal package is `internal/<name>/contract.go` (the Go interface its consumers depend on) and
`service.go` (the implementation), both yours from birth, plus a test; `generate` writes the contract's
mock. Kind `adapter` implements the contract over an outside system (HTTP); kind `eventbus` (an
adapter) gives the project's event bus, in-process and PostgreSQL (an outbox table). A library is
plain Go with no contract, listed under framework.yaml `contracts.exclude` unless `--no-exclude`.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from engine.authoring import naming, tools
from engine.authoring.config import load
from engine.authoring.generate import generate
from engine.authoring.plan import Plan
from engine.authoring.scaffold import ScaffoldResult, _dry_or_real
from engine.authoring.templates import render
from engine.errors import ConfigError, InvalidInput, UsageError
from engine.project import Project

TYPES = ("service", "adapter")
KINDS = ("eventbus",)
PGX = "github.com/jackc/pgx/v5"
PGX_VERSION = "v5.7.5"  # the PostgreSQL driver of the eventbus kind, pinned
_PATH_PART = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")  # no "..", no hidden directories, no spaces
_RESERVED = {"handlers", "bootstrap", "entities", "workers", "webhooks"}  # generated directories under internal/


def package_plan(name: str, type_: str = "service", kind: str = "") -> Plan:
    """The scaffold-once files of `package new <name>` (also what rescaffold re-creates)."""
    plan, where, gopkg = Plan(), f"internal/{name}", naming.go_package(name)
    if kind == "eventbus":
        for file in ("contract", "memory", "postgres", "bus_test", "memory_test", "postgres_test"):
            plan.scaffold(f"{where}/{file}.go", render(f"eventbus/{file}.go.tmpl", gopkg=gopkg))
        return plan
    plan.scaffold(f"{where}/contract.go", render("package/contract.go.tmpl", gopkg=gopkg, type=type_))
    impl = "adapter" if type_ == "adapter" else "service"
    plan.scaffold(f"{where}/service.go", render(f"package/{impl}.go.tmpl", gopkg=gopkg))
    plan.scaffold(f"{where}/service_test.go", render(f"package/{impl}_test.go.tmpl", gopkg=gopkg))
    return plan


def library_plan(name: str, path: str) -> Plan:
    plan, gopkg = Plan(), naming.go_package(PurePosixPath(path).name)
    plan.scaffold(f"{path}/{name}.go", render("package/library.go.tmpl", gopkg=gopkg))
    plan.scaffold(f"{path}/{name}_test.go", render("package/library_test.go.tmpl", gopkg=gopkg))
    return plan


def _require_pgx(target: Project) -> None:
    """The eventbus's driver in go.mod and go.sum, at the pinned version."""
    tools.run([tools.go(), "mod", "edit", f"-require={PGX}@{PGX_VERSION}"], target.root, "go mod edit")
    tools.run([tools.go(), "mod", "tidy"], target.root, "go mod tidy")


def scaffold_package(project: Project, name: str, *, type_: str | None = None, kind: str | None = None,
                     dry_run: bool = False, by: str = "scaffold package") -> ScaffoldResult:
    package = naming.check_name(name, "package")
    if type_ is not None and type_ not in TYPES:
        raise UsageError(f"--type {type_!r}: one of {', '.join(TYPES)}")
    if kind is not None and kind not in KINDS:
        raise UsageError(f"--kind {kind!r}: one of {', '.join(KINDS)}")
    if kind == "eventbus" and type_ == "service":
        raise UsageError("--kind eventbus is an adapter (it talks to PostgreSQL): drop --type service")
    type_ = "adapter" if kind else (type_ or "service")
    if package in _RESERVED:
        raise UsageError(f"package name {name!r} is taken by generated code", hint=f"e.g. package {package}_pkg")

    def op(target: Project) -> ScaffoldResult:
        where = f"internal/{package}"
        if (target.root / where).exists():
            raise InvalidInput(f"{where} exists", hint="choose another name")
        args = {"name": package, "type": type_, "kind": kind or ""}
        package_plan(package, type_, kind or "").apply(target.root, by, args=args)
        if kind == "eventbus":
            _require_pgx(target)
        generated = generate(Project(target.root), by=by) if load(target).enabled("contracts") else None
        return ScaffoldResult(what=by, born=[package], generated=generated)

    return _dry_or_real(project, by, op, dry_run)


def _library_path(name: str, path: str | None) -> str:
    raw = (path or f"internal/{name}").strip()
    rel = PurePosixPath(raw.rstrip("/"))
    if not raw or raw.startswith("/") or any(not _PATH_PART.fullmatch(p) for p in rel.parts):
        raise UsageError(f"--path {path!r}: a directory inside the project (e.g. pkg/{name})")
    if rel.parts[0] in ("gen", "cmd", "proto", "db", "deploy", "bin") or \
            (rel.parts[0] == "internal" and len(rel.parts) > 1 and rel.parts[1] in _RESERVED):
        raise UsageError(f"--path {raw}: a directory the framework generates or owns")
    naming.check_name(rel.name, "library directory")
    return rel.as_posix()


def add_contract_exclude(config_path: object, value: str) -> None:
    """Append `value` to framework.yaml `contracts.exclude`, keeping the rest of the text."""
    from pathlib import Path

    import yaml

    from engine.paths import atomic_write_bytes

    path = Path(str(config_path))
    text = path.read_text(encoding="utf-8")
    data = yaml.safe_load(text) or {}
    contracts = data.get("contracts")
    if contracts is not None and not isinstance(contracts, dict):
        raise ConfigError(f"{path}: `contracts` must be a mapping")
    excluded = (contracts or {}).get("exclude") or []
    if value in excluded:
        return
    lines = text.rstrip("\n").splitlines()
    start = next((i for i, line in enumerate(lines) if line.rstrip() == "contracts:"), None)
    if start is None:
        if contracts is not None:
            raise ConfigError(f"{path}: `contracts` is not in block style", hint=f"add {value} to contracts.exclude")
        lines += ["contracts:", "  exclude:", f"    - {value}"]
    else:
        end = start + 1
        while end < len(lines) and (lines[end].startswith(" ") or not lines[end].strip()):
            end += 1
        key = next((i for i in range(start + 1, end) if lines[i].strip().startswith("exclude:")), None)
        if key is None:
            lines[start + 1:start + 1] = ["  exclude:", f"    - {value}"]
        elif lines[key].split(":", 1)[1].strip() in ("", "[]"):
            lines[key] = lines[key].split(":", 1)[0] + ":"
            last = key
            while last + 1 < end and lines[last + 1].lstrip().startswith("- "):
                last += 1
            lines.insert(last + 1, f"    - {value}")
        else:
            raise ConfigError(f"{path}: `contracts.exclude` is not a block list", hint=f"add {value} to it")
    new_text = "\n".join(lines) + "\n"
    if value not in ((yaml.safe_load(new_text) or {}).get("contracts") or {}).get("exclude", []):
        raise ConfigError(f"{path}: could not add {value} to contracts.exclude", hint="add it by hand")
    atomic_write_bytes(path, new_text.encode("utf-8"))


def scaffold_library(project: Project, name: str, *, path: str | None = None, no_exclude: bool = False,
                     force: bool = False, dry_run: bool = False) -> ScaffoldResult:
    library = naming.check_name(name, "library")
    where = _library_path(library, path)

    def op(target: Project) -> ScaffoldResult:
        plan = library_plan(library, where)
        existing = [p for p in plan.files if (target.root / p).exists()]
        if existing and not force:
            raise InvalidInput(f"{existing[0]} exists", hint="--force writes over it")
        plan.apply(target.root, "scaffold library", force=force, args={"name": library, "path": where})
        if not no_exclude:
            add_contract_exclude(target.config_path, where)
        return ScaffoldResult(what="scaffold library", born=[library])

    return _dry_or_real(project, "scaffold library", op, dry_run)
