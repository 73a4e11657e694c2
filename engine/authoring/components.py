"""`framework component list / search / install` (docs/reference-frontends.md#components): shadcn-style
components installed as source into a frontend's `src/components/ui/` (or `--dir`).

Install resolves the items' registryDependencies (dependencies first), refuses to overwrite a file
that differs from the registry's without `--overwrite` (before anything is written), adds the items'
npm dependencies with the frontend's package manager (detected from its lockfile; `--no-install`
only edits package.json), then writes the files (each renamed into place) and reports each one.
"""

from __future__ import annotations

import json
import posixpath
import shutil
import subprocess
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine.authoring.component_registry import Registry, RegistryItem, open_registry, safe_rel, search
from engine.authoring.frontend_config import pick_frontend
from engine.errors import Conflict, InvalidInput, UsageError
from engine.paths import atomic_write_bytes
from engine.project import Project

DEFAULT_DIR = "src/components/ui"
# Lockfile -> package manager, first match wins (a repository holding two is read as the first).
LOCKFILES = (("pnpm-lock.yaml", "pnpm"), ("yarn.lock", "yarn"), ("bun.lock", "bun"), ("bun.lockb", "bun"),
             ("package-lock.json", "npm"))
ADD = {"npm": ["install", "--save-exact", "--no-audit", "--no-fund"], "pnpm": ["add", "--save-exact"],
       "yarn": ["add", "--exact"], "bun": ["add", "--exact"]}
DEV_FLAG = {"npm": "--save-dev", "pnpm": "--save-dev", "yarn": "--dev", "bun": "--dev"}
INSTALL_TIMEOUT_S = 600


class ComponentList(BaseModel):
    registry: str
    query: str | None = None
    components: list[dict[str, Any]]


class InstalledFile(BaseModel):
    path: str  # relative to the project root
    component: str
    status: str  # created | overwritten | unchanged (with --dry-run: what it would be)


class ComponentInstall(BaseModel):
    registry: str
    frontend: str
    dir: str  # the install directory, relative to the project root
    dry_run: bool = False
    components: list[str]  # install order: registry dependencies first
    files: list[InstalledFile]
    dependencies: list[str]  # npm packages added (already declared ones are left as they are)
    dev_dependencies: list[str]
    package_manager: str
    install_command: list[list[str]] = []  # what ran (or, with --no-install, nothing)
    package_json_edited: bool = False


def _listing(registry: Registry, items: list[RegistryItem], query: str | None) -> ComponentList:
    return ComponentList(registry=registry.where, query=query, components=[i.summary() for i in items])


def list_components(registry: str | None) -> ComponentList:
    reg = open_registry(registry)
    try:
        return _listing(reg, reg.index.items, None)
    finally:
        reg.close()


def search_components(query: str, registry: str | None) -> ComponentList:
    reg = open_registry(registry)
    try:
        return _listing(reg, search(reg, query), query)
    finally:
        reg.close()


# ---- package manager --------------------------------------------------------------------------

def package_manager(frontend_root: Path) -> str:
    """The frontend's package manager: its lockfile, else package.json's `packageManager`, else npm."""
    for name, manager in LOCKFILES:
        if (frontend_root / name).is_file():
            return manager
    declared = _package_json(frontend_root).get("packageManager")
    if isinstance(declared, str) and declared.split("@")[0] in ADD:
        return declared.split("@")[0]
    return "npm"


def _package_json(frontend_root: Path) -> dict[str, Any]:
    path = frontend_root / "package.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise InvalidInput(f"{path} does not exist: a frontend directory holds package.json",
                           hint="framework scaffold frontend <name> writes one") from exc
    except ValueError as exc:
        raise InvalidInput(f"{path} is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise InvalidInput(f"{path} is not a JSON object")
    return data


def split_spec(spec: str) -> tuple[str, str | None]:
    """`clsx@2.1.1` -> (clsx, 2.1.1); `@scope/pkg@1` -> (@scope/pkg, 1); `react` -> (react, None)."""
    at = spec.rfind("@")
    return (spec[:at], spec[at + 1:] or None) if at > 0 else (spec, None)


def _missing(specs: list[str], declared: dict[str, Any]) -> list[str]:
    have = {**(declared.get("dependencies") or {}), **(declared.get("devDependencies") or {})}
    out: list[str] = []
    for spec in specs:
        if split_spec(spec)[0] not in have and spec not in out:
            out.append(spec)
    return out


def _edit_package_json(frontend_root: Path, deps: list[str], dev: list[str]) -> None:
    """--no-install: add the packages to package.json (sorted, as package managers write them)."""
    data = _package_json(frontend_root)
    for key, specs in (("dependencies", deps), ("devDependencies", dev)):
        if not specs:
            continue
        table = dict(data.get(key) or {})
        for spec in specs:
            name, version = split_spec(spec)
            table[name] = version or "latest"
        data[key] = dict(sorted(table.items()))
    atomic_write_bytes(frontend_root / "package.json", (json.dumps(data, indent=2) + "\n").encode("utf-8"))


def _run_manager(frontend_root: Path, manager: str, deps: list[str], dev: list[str]) -> list[list[str]]:
    exe = shutil.which(manager)
    if exe is None:
        raise InvalidInput(f"{manager} is not on PATH (the frontend's lockfile says {manager})",
                           hint="install it, or pass --no-install to only add the packages to package.json")
    ran = []
    for specs, extra in ((deps, []), (dev, [DEV_FLAG[manager]])):
        if not specs:
            continue
        argv = [manager, *ADD[manager], *extra, *specs]
        try:
            done = subprocess.run([exe, *argv[1:]], cwd=frontend_root, capture_output=True, text=True,
                                  timeout=INSTALL_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired as exc:
            raise InvalidInput(f"{' '.join(argv)} did not finish in {INSTALL_TIMEOUT_S} s") from exc
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-12:]
            raise InvalidInput(f"{' '.join(argv)} failed (exit {done.returncode}); no component file was written",
                               hint="\n".join(tail) or None)
        ran.append(argv)
    return ran


# ---- install ----------------------------------------------------------------------------------

def _install_dir(frontend_dir: str, given: str | None) -> str:
    """--dir, relative to the frontend's directory and inside it."""
    if given is None:
        return DEFAULT_DIR
    if not given.strip() or "\x00" in given:
        raise UsageError("--dir needs a directory inside the frontend (e.g. src/components/ui)")
    rel = posixpath.normpath(given.replace("\\", "/"))
    if posixpath.isabs(rel) or rel == ".." or rel.startswith("../"):
        raise UsageError(f"--dir {given[:80]!r} must be a path inside the frontend's directory ({frontend_dir})")
    return rel


def _destination(item: RegistryItem, file_path: str, target: str | None, install_dir: str) -> str:
    """Where a registry file lands, relative to the frontend: its `target` when it has one, else the
    install directory plus the file's name."""
    if target:  # shadcn writes `~/` for the project's root: here, the frontend's directory
        return safe_rel(target.removeprefix("~/"), f"{item.name}: target")
    return posixpath.join(install_dir, posixpath.basename(safe_rel(file_path, f"{item.name}: file")))


def install_components(project: Project, names: list[str], *, frontend: str | None = None,
                       directory: str | None = None, registry: str | None = None, overwrite: bool = False,
                       install: bool = True, dry_run: bool = False) -> ComponentInstall:
    if not names:
        raise UsageError("name at least one component", hint="framework component list shows them")
    entry = pick_frontend(project, frontend)
    root = project.root / entry.dir
    if not (root / "package.json").is_file():
        raise InvalidInput(f"frontend {entry.name}: {entry.dir}/package.json does not exist",
                           hint="framework scaffold frontend <name> writes a frontend")
    install_dir = _install_dir(entry.dir, directory)
    reg = open_registry(registry)
    try:
        items = reg.resolve(names)
    finally:
        reg.close()
    planned: dict[str, tuple[str, bytes]] = {}  # frontend-relative path -> (component, content)
    for item in items:
        for f in item.files:
            dest = _destination(item, f.path, f.target, install_dir)
            planned[dest] = (item.name, (f.content or "").encode("utf-8"))
    files, changed = [], []
    for dest, (component, data) in planned.items():
        target = root / dest
        status = "created"
        if target.is_file():
            status = "unchanged" if target.read_bytes() == data else "overwritten"
        elif target.exists():
            raise InvalidInput(f"{entry.dir}/{dest} exists and is not a file")
        files.append(InstalledFile(path=f"{entry.dir}/{dest}", component=component, status=status))
        if status != "unchanged":
            changed.append((target, data))
    refused = [f.path for f in files if f.status == "overwritten"]
    if refused and not overwrite:
        # Refused before anything is written: a changed file is the user's until they say otherwise.
        raise Conflict(f"{len(refused)} file(s) differ from the registry's: {', '.join(refused)}",
                       hint="pass --overwrite to replace them (your changes are lost), or --dir elsewhere")
    declared = _package_json(root)
    deps = _missing([d for i in items for d in i.dependencies], declared)
    dev = _missing([d for i in items for d in i.dev_dependencies], declared)
    manager = package_manager(root)
    result = ComponentInstall(registry=reg.where, frontend=entry.name, dir=f"{entry.dir}/{install_dir}",
                              dry_run=dry_run, components=[i.name for i in items], files=files,
                              dependencies=deps, dev_dependencies=dev, package_manager=manager)
    if dry_run:
        return result
    if deps or dev:
        if install:
            result.install_command = _run_manager(root, manager, deps, dev)
        else:
            _edit_package_json(root, deps, dev)
            result.package_json_edited = True
    for target, data in changed:
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(target, data, durable=False)
    return result
