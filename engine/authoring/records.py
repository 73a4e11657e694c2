"""`project scaffolded`, `project rescaffold`, `project disown` (docs/reference-authoring.md#commands).

Rescaffold re-creates a deleted scaffold-once file exactly as its scaffold would write it today, and
refuses a path that still exists. Disown is one-way: generation never writes the file again, and
`ci verify-generated` no longer checks it; re-adopt by deleting the file and its record.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from pydantic import BaseModel

from engine.authoring import markers, operator, ownership, rescaffolders
from engine.authoring.config import load
from engine.authoring.generate import build_plan, state_files
from engine.authoring.new import project_plan
from engine.errors import EngineError, InvalidInput, UsageError
from engine.paths import atomic_write_bytes
from engine.project import Project


class RescaffoldRefused(EngineError):
    """`project rescaffold` refuses a path that still exists (exit 1, `path_exists`)."""

    code = "path_exists"


class ScaffoldedFile(BaseModel):
    path: str
    born: str
    by: str
    present: bool


class ScaffoldedList(BaseModel):
    files: list[ScaffoldedFile]


class PathsResult(BaseModel):
    paths: list[str]
    reason: str | None = None


def _rel(project: Project, path: str) -> str:
    full = (Path.cwd() / path).resolve() if not Path(path).is_absolute() else Path(path).resolve()
    root = project.root.resolve()
    if root not in (full, *full.parents):
        # Paths are taken relative to the project root too (`project rescaffold internal/...`).
        full = (root / path).resolve()
        if root not in full.parents:
            raise UsageError(f"{path}: outside the project")
    return full.relative_to(root).as_posix()


def list_scaffolded(project: Project, absent: bool = False) -> ScaffoldedList:
    files = [ScaffoldedFile(path=b.path, born=b.born, by=b.by, present=(project.root / b.path).exists())
             for b in ownership.scaffolded(project.root)]
    return ScaffoldedList(files=[f for f in files if not (absent and f.present)])


def rescaffold(project: Project, paths: list[str]) -> PathsResult:
    rels = [_rel(project, p) for p in paths]
    births = {b.path: b for b in ownership.scaffolded(project.root)}
    born = set(births)
    for rel in rels:
        if (project.root / rel).exists():
            raise RescaffoldRefused(f"{rel} exists: rescaffold only re-creates deleted scaffold-once files",
                                    hint="delete it first if you want the scaffold's version back")
        if rel not in born:
            raise InvalidInput(f"{rel} is not a scaffold-once file of this project (.framework/scaffolded.json)",
                               hint="framework project scaffolded lists them")
    cfg = load(project)
    with tempfile.TemporaryDirectory(prefix="framework-rescaffold-") as tmp:
        plan, _ = build_plan(project, cfg, Path(tmp))
    plan.gofmt()
    service = next((str(s.get("name")) for s in cfg.services), None)
    known = {**project_plan(cfg, service).files, **operator.scaffold_plan(project.root, cfg).files, **plan.files}
    for rel in rels:
        if rel not in known:
            scaffold = rescaffolders.lookup(births[rel].by)
            extra = scaffold(project, cfg, rel, births[rel].args) if scaffold else None
            if extra is not None and rel in extra.files:
                known[rel] = extra.files[rel]
        item = known.get(rel)
        if item is None or item.kind != "scaffold":
            raise InvalidInput(f"{rel}: no scaffold produces this file today (its RPC or feature is gone)")
    for rel in rels:
        atomic_write_bytes(project.root / rel, known[rel].content.encode("utf-8"), known[rel].mode)  # scaffold: as is
    return PathsResult(paths=rels)


def disown(project: Project, paths: list[str], reason: str) -> PathsResult:
    if not reason.strip():
        raise UsageError("--reason is required: say why the file leaves generation")
    rels = [_rel(project, p) for p in paths]
    recorded = set(state_files(project.root))
    for rel in rels:
        path = project.root / rel
        generated = rel in recorded or (path.is_file() and markers.has_marker(path.read_text(encoding="utf-8")))
        if not generated:
            raise InvalidInput(f"{rel} is not a generated file", hint="only generated files can be disowned")
    ownership.record_disowned(project.root, rels, reason.strip())
    return PathsResult(paths=rels, reason=reason.strip())
