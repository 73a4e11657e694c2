"""`framework project libraries [names...]` (docs/reference-project.md#project-libraries): the runtime libraries
the generated code uses, from the real toolchain: the Go modules of the project's go.mod (`go mod edit -json`)
that its packages import (`go list -json ./...`), each with its version and the project's packages and generated
files that import it; the npm packages of the frontends' generated clients (their package.json and the imports of
`src/gen/`). With names (or `all`), each library's full exported signatures: `go doc -all` per imported package,
or the package's declared `.d.ts`, cached by module version under `.framework/cache/libraries/`.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from pydantic import BaseModel

from engine.authoring import tools
from engine.authoring.markers import has_marker
from engine.errors import EngineError, NotFound
from engine.inspection.hashcache import write_cache
from engine.project import Project

CACHE = Path(".framework") / "cache" / "libraries"
_PRUNE = {".git", "node_modules", ".framework", "bin", "vendor", "testdata"}


class Library(BaseModel):
    name: str  # the Go module path or the npm package name
    ecosystem: str  # go | npm
    version: str
    packages: list[str]  # the library's packages the project imports
    used_by: list[str]  # the project's packages (Go: directories) or frontends (npm) that import it
    generated_files: list[str]  # generated files (hash marker) that import it
    generated: bool  # generated code uses it (the libraries a regeneration depends on)


class Signatures(BaseModel):
    name: str
    ecosystem: str
    version: str
    package: str
    cached: bool
    text: str


class LibrariesResult(BaseModel):
    root: str
    libraries: list[Library]
    signatures: list[Signatures] = []


def _go(root: Path, *args: str, timeout: float = 300) -> str:
    proc = subprocess.run([tools.go(), *args], cwd=root, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise EngineError(f"go {' '.join(args)} failed: {detail[-1] if detail else f'exit {proc.returncode}'}",
                          hint="the project's Go code must load: go mod download, then framework generate",
                          code="go_failed")
    return proc.stdout


def _documents(text: str) -> list[dict]:
    decoder, out, i = json.JSONDecoder(), [], 0
    while i < len(text):
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            break
        doc, i = decoder.raw_decode(text, i)
        out.append(doc)
    return out


def go_imports(text: str) -> list[str]:
    """The import paths of one gofmt'ed Go file: its import declarations, which precede every other declaration."""
    out: list[str] = []
    block = False
    for raw in text.splitlines():
        line = raw.split("//", 1)[0].strip() if not raw.strip().startswith('"') else raw.strip()
        if block:
            if line.startswith(")"):
                block = False
            elif '"' in line:
                out.append(line.split('"')[1])
        elif line.startswith("import ("):
            block = True
        elif line.startswith("import ") and '"' in line:
            out.append(line.split('"')[1])
        elif line.startswith(("func ", "type ", "var ", "const ")):
            break
    return out


def _module_of(path: str, modules: list[str]) -> str | None:
    best = [m for m in modules if path == m or path.startswith(m + "/")]
    return max(best, key=len) if best else None


def _go_libraries(root: Path) -> list[Library]:
    if not (root / "go.mod").is_file():
        return []
    mod = json.loads(_go(root, "mod", "edit", "-json"))
    versions = {r["Path"]: r["Version"] for r in mod.get("Require") or []}
    for rep in mod.get("Replace") or []:  # a replaced module is the replacement's version (or a local path)
        new = rep.get("New") or {}
        if rep.get("Old", {}).get("Path") in versions:
            versions[rep["Old"]["Path"]] = new.get("Version") or new.get("Path", "")
    modules = sorted(versions)
    libs: dict[str, Library] = {}
    for pkg in _documents(_go(root, "list", "-e", "-json", "./...")):
        rel = Path(pkg.get("Dir", str(root))).resolve().relative_to(root.resolve()).as_posix()
        if _PRUNE.intersection(Path(rel).parts):
            continue
        imports = set(pkg.get("Imports") or []) | set(pkg.get("TestImports") or []) | set(pkg.get("XTestImports") or [])
        files = (pkg.get("GoFiles") or []) + (pkg.get("TestGoFiles") or []) + (pkg.get("XTestGoFiles") or [])
        by_file = {}
        for name in files:
            text = (Path(pkg["Dir"]) / name).read_text(encoding="utf-8", errors="replace")
            if has_marker(text):
                by_file[f"{rel}/{name}" if rel != "." else name] = set(go_imports(text))
        for path in sorted(imports):
            module = _module_of(path, modules)
            if module is None:
                continue
            lib = libs.setdefault(module, Library(name=module, ecosystem="go", version=versions[module], packages=[],
                                                  used_by=[], generated_files=[], generated=False))
            if path not in lib.packages:
                lib.packages.append(path)
            if rel not in lib.used_by:
                lib.used_by.append(rel)
            lib.generated_files += [f for f, imps in by_file.items() if path in imps and f not in lib.generated_files]
    for lib in libs.values():
        lib.packages.sort()
        lib.used_by.sort()
        lib.generated_files.sort()
        lib.generated = bool(lib.generated_files)
    return [libs[m] for m in sorted(libs)]


def _npm_libraries(project: Project) -> list[Library]:
    from engine.authoring.frontends import GEN_DIR, entries

    libs: dict[str, Library] = {}
    for entry in entries(project.config, project.config_path):
        front = project.root / entry.dir
        manifest = front / "package.json"
        if not manifest.is_file():
            continue
        data = json.loads(manifest.read_text(encoding="utf-8"))
        declared = {**(data.get("devDependencies") or {}), **(data.get("dependencies") or {})}
        gen = front / GEN_DIR
        for path in sorted(gen.rglob("*")) if gen.is_dir() else []:
            if path.suffix not in (".ts", ".tsx", ".js", ".mjs") or not path.is_file():
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            for spec in _ts_imports(text):
                name = _npm_name(spec)
                if name is None or name not in declared:
                    continue
                lib = libs.setdefault(name, Library(name=name, ecosystem="npm", version=_npm_version(front, name,
                                                    str(declared[name])), packages=[], used_by=[],
                                                    generated_files=[], generated=True))
                if spec not in lib.packages:
                    lib.packages.append(spec)
                if entry.dir not in lib.used_by:
                    lib.used_by.append(entry.dir)
                rel = path.relative_to(project.root).as_posix()
                if rel not in lib.generated_files:
                    lib.generated_files.append(rel)
    return [libs[n] for n in sorted(libs)]


def _ts_imports(text: str) -> list[str]:
    """Module specifiers of `import ... from "x"` / `export ... from "x"` statements (the generated clients')."""
    out = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("import ", "export ")) and " from " in stripped:
            tail = stripped.rsplit(" from ", 1)[1].strip().rstrip(";")
            if len(tail) > 2 and tail[0] in "\"'" and tail[-1] == tail[0]:
                out.append(tail[1:-1])
    return out


def _npm_name(spec: str) -> str | None:
    if spec.startswith((".", "/")):
        return None
    parts = spec.split("/")
    return "/".join(parts[:2]) if spec.startswith("@") and len(parts) > 1 else parts[0]


def _npm_version(front: Path, name: str, declared: str) -> str:
    installed = front / "node_modules" / name / "package.json"
    try:
        return str(json.loads(installed.read_text(encoding="utf-8"))["version"])
    except (OSError, ValueError, KeyError):
        return declared


def index(project: Project) -> list[Library]:
    return _go_libraries(project.root) + _npm_libraries(project)


def _select(libs: list[Library], names: list[str]) -> list[Library]:
    if not names or "all" in names:
        return libs
    out: list[Library] = []
    for name in names:
        found = [lib for lib in libs if name in (lib.name, lib.name.rsplit("/", 1)[-1]) or name in lib.packages]
        if not found:
            known = ", ".join(lib.name for lib in libs) or "none (no go.mod requirement or frontend client imports)"
            raise NotFound(f"{name!r} is not a runtime library of this project", hint=f"known: {known}")
        out += [lib for lib in found if lib not in out]
    return out


def _cache_path(root: Path, lib: Library, package: str) -> Path:
    safe = lambda s: s.replace("/", "%")  # noqa: E731 - one file per module version and package
    return root / CACHE / lib.ecosystem / f"{safe(lib.name)}@{safe(lib.version)}" / f"{safe(package)}.txt"


def _go_doc(root: Path, package: str) -> str:
    return _go(root, "doc", "-all", package)


def _npm_types(root: Path, project: Project, lib: Library, package: str) -> str:
    for front in lib.used_by:
        base = root / front / "node_modules" / lib.name
        manifest = base / "package.json"
        if not manifest.is_file():
            continue
        data = json.loads(manifest.read_text(encoding="utf-8"))
        types = data.get("types") or data.get("typings")
        if types and (base / types).is_file():
            return (base / types).read_text(encoding="utf-8")
    raise EngineError(f"{lib.name} has no installed type declarations", hint="run npm ci in the frontend",
                      code="not_installed")


def signatures(project: Project, lib: Library) -> list[Signatures]:
    out = []
    root = project.root
    packages = lib.packages if lib.ecosystem == "go" else [lib.name]
    for package in packages:
        path = _cache_path(root, lib, package)
        cacheable = lib.version.startswith("v") or lib.ecosystem == "npm"  # a local replace path has no version
        cached = cacheable and path.is_file()
        if cached:
            text = path.read_text(encoding="utf-8")
        else:
            text = _go_doc(root, package) if lib.ecosystem == "go" else _npm_types(root, project, lib, package)
            if cacheable:
                write_cache(root, path, text)
        out.append(Signatures(name=lib.name, ecosystem=lib.ecosystem, version=lib.version, package=package,
                              cached=cached, text=text))
    return out


def libraries(project: Project, names: list[str] | None = None) -> LibrariesResult:
    libs = index(project)
    result = LibrariesResult(root=str(project.root), libraries=libs)
    if names:
        chosen = _select(libs, names)
        result.libraries = chosen
        for lib in chosen:
            result.signatures += signatures(project, lib)
    return result
