"""What `project shapes` and `project graph` read from a project's sources, cached per file by content
hash (docs/reference-project.md#project-shapes): a changed file is read again, the others come from
`<user cache>/framework/shapes/`.

- protos: the descriptor (buf's image with source info) for the whole proto set, keyed by the hash of
  every proto file; the descriptor cache `gen/framework_descriptor.json` is used when `generate` is
  current, else the protos are compiled with buf;
- migrations: the tables each `.up.sql` creates, with their lines (engine/database's statement splitter
  and pglast's parser);
- Go: each file's package, imports and top-level funcs and methods with their lines, read by go/ast in
  a small Go program of `assets/inspect/go` built once (engine/lint/gotool.go_tool, as the lint analyzers).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from engine.authoring.annotation_spec import OPTIONS_PROTO
from engine.project import Project

MIGRATIONS = "db/migrations"
GO_DIRS = ("internal",)  # handlers, hooks, packages and workers all live there
_SKIP_DIRS = {".git", "node_modules", "bin", "tmp", "testdata", "vendor"}


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _code_identity() -> str:
    """Changes when the reading code changes (this module and the Go reader): old entries are dropped."""
    from engine.lint.gotool import source_hash
    from engine.paths import assets_dir

    return _digest(Path(__file__).read_bytes())[:16] + source_hash(assets_dir() / "inspect" / "go")


class SourceCache:
    """One JSON file per project root: {identity, protos: {hash, shapes}, files: {path: {hash, data}}}."""

    def __init__(self, root: Path) -> None:
        from engine.paths import cache_dir

        self.root = root
        self.path = cache_dir() / "shapes" / f"{_digest(str(root.resolve()).encode())[:24]}.json"
        self.identity = _code_identity()
        self.dirty = False
        try:
            data = json.loads(self.path.read_bytes())
        except (OSError, ValueError):
            data = {}
        if not isinstance(data, dict) or data.get("identity") != self.identity:
            data = {"identity": self.identity, "files": {}, "protos": {}}
        self.data: dict[str, Any] = data
        self.descriptor: dict[str, Any] | None = None  # read once per command
        self.descriptor_read = False

    def get(self, rel: str, digest: str) -> Any:
        entry = self.data["files"].get(rel)
        return entry["data"] if isinstance(entry, dict) and entry.get("hash") == digest else None

    def put(self, rel: str, digest: str, value: Any) -> None:
        self.data["files"][rel] = {"hash": digest, "data": value}
        self.dirty = True

    def save(self) -> None:
        stale = [rel for rel in self.data["files"] if not (self.root / rel).is_file()]
        for rel in stale:  # deleted files leave the cache
            del self.data["files"][rel]
        if not (self.dirty or stale):
            return
        from engine.paths import atomic_write_bytes

        try:
            atomic_write_bytes(self.path, json.dumps(self.data, separators=(",", ":")).encode(), 0o600,
                               durable=False)
        except OSError:
            pass  # a read-only cache only costs speed


def _walk(root: Path, top: str, suffix: str) -> list[str]:
    """Paths (relative to `root`, `/`-separated, sorted) of the files under `top` ending in `suffix`."""
    out: list[str] = []
    base = os.path.join(root, top)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS and not d.startswith("."))
        rel = os.path.relpath(dirpath, root).replace(os.sep, "/")
        out += [f"{rel}/{n}" for n in sorted(filenames) if n.endswith(suffix)]
    return out


def _read(root: Path, rel: str) -> bytes:
    with open(os.path.join(root, rel), "rb") as f:
        return f.read()


# ---- protos ----------------------------------------------------------------------------------------

def descriptor(project: Project, cache: SourceCache, proto_dir: str) -> dict[str, Any] | None:
    """The descriptor of the project's protos as a dict (Descriptor.model_dump), None without protos."""
    if not cache.descriptor_read:
        cache.descriptor = _descriptor(project, cache, proto_dir)
        cache.descriptor_read = True
    return cache.descriptor


def _descriptor(project: Project, cache: SourceCache, proto_dir: str) -> dict[str, Any] | None:
    files = _walk(project.root, proto_dir, ".proto")
    if not files:
        return None
    h = hashlib.sha256(proto_dir.encode())
    for rel in files:
        h.update(rel.encode() + b"\0" + _read(project.root, rel) + b"\0")
    digest = h.hexdigest()
    protos = cache.data["protos"]
    if protos.get("hash") == digest:
        return protos["descriptor"]  # type: ignore[no-any-return]
    desc = _load_descriptor(project, proto_dir)
    cache.data["protos"] = {"hash": digest, "descriptor": desc}
    cache.dirty = True
    return desc


def _load_descriptor(project: Project, proto_dir: str) -> dict[str, Any]:
    from engine.authoring.descriptor import compile_descriptor, read_cache
    from engine.authoring.generate import current

    if current(project):  # the last generate's inputs are unchanged: its descriptor cache is exact
        desc = read_cache(project.root)
        if all(s.line for s in desc.services) and all(m.line for m in desc.messages if _local(desc, m.file)):
            return desc.model_dump(mode="json")
    return compile_descriptor(project.root, proto_dir).model_dump(mode="json")


def _local(desc: Any, name: str) -> bool:
    f = desc.file(name)
    return bool(f and f.local)


def own_proto(name: str) -> bool:
    """A file of the project (the vendored framework options proto is the framework's)."""
    return name != OPTIONS_PROTO


# ---- migrations ------------------------------------------------------------------------------------

def tables(project: Project, cache: SourceCache) -> list[dict[str, Any]]:
    """[{name, file, line, columns}] of every CREATE TABLE in db/migrations/*.up.sql, in file order."""
    out: list[dict[str, Any]] = []
    base = project.root / MIGRATIONS
    for path in sorted(base.glob("*.up.sql")) if base.is_dir() else []:
        rel = path.relative_to(project.root).as_posix()
        data = path.read_bytes()
        digest = _digest(data)
        found = cache.get(rel, digest)
        if found is None:
            found = _tables_of(data.decode("utf-8", errors="replace"))
            cache.put(rel, digest, found)
        out += [{**t, "file": rel} for t in found]
    return out


def _tables_of(text: str) -> list[dict[str, Any]]:
    from pglast import ast, parse_sql

    from engine.database.statements import split

    out: list[dict[str, Any]] = []
    for statement in split(text):
        if "create" not in statement.code[:40].lower():
            continue
        try:
            parsed = parse_sql(statement.code)
        except Exception:  # noqa: BLE001 - an unparsable statement is `lint --migration-safety`'s to report
            continue
        for raw in parsed:
            stmt = raw.stmt
            if isinstance(stmt, ast.CreateStmt) and stmt.relation is not None and stmt.relation.relname:
                rel = stmt.relation
                name = f"{rel.schemaname}.{rel.relname}" if rel.schemaname else str(rel.relname)
                columns = sum(1 for e in stmt.tableElts or () if isinstance(e, ast.ColumnDef))
                out.append({"name": name, "line": statement.line, "columns": columns})
    return out


# ---- Go ------------------------------------------------------------------------------------------

def go_files(project: Project, cache: SourceCache, tops: tuple[str, ...] = GO_DIRS) -> dict[str, dict[str, Any]]:
    """{path: {package, imports, funcs: [{name, receiver, line, params}]}} of the project's Go files under
    `tops` (tests left out); the misses are read in one run of the Go reader."""
    out: dict[str, dict[str, Any]] = {}
    missing: dict[str, str] = {}
    for top in tops:
        for rel in _walk(project.root, top, ".go"):
            if rel.endswith("_test.go"):
                continue
            digest = _digest(_read(project.root, rel))
            found = cache.get(rel, digest)
            if found is None:
                missing[rel] = digest
            else:
                out[rel] = found
    if missing:
        for rel, value in _read_go(project.root, sorted(missing)).items():
            if rel in missing:
                cache.put(rel, missing[rel], value)
                out[rel] = value
    return dict(sorted(out.items()))


def _read_go(root: Path, rels: list[str]) -> dict[str, dict[str, Any]]:
    from engine.lint.gotool import LinterCannotRun, go_tool
    from engine.paths import assets_dir

    tool = go_tool(assets_dir() / "inspect" / "go", "frameworkshapes", "building the Go source reader")
    out: dict[str, dict[str, Any]] = {}
    for start in range(0, len(rels), 500):  # argv stays well under the system's limit
        proc = subprocess.run([str(tool), str(root), *rels[start:start + 500]], capture_output=True, text=True,
                              timeout=300)
        if proc.returncode != 0:
            raise LinterCannotRun(f"the Go source reader failed (exit {proc.returncode}): {proc.stderr.strip()[-500:]}")
        out.update(json.loads(proc.stdout))
    return out
