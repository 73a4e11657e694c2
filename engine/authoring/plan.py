"""A plan of file writes and how it is applied under the ownership rules (docs/reference-authoring.md,
Ownership): generated files are stamped with their hash marker and rewritten freely; scaffold-once files
are written only at birth (recorded in .framework/scaffolded.json) and never again; disowned files are
never written. `--dry-run` computes the same statuses and writes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from engine.authoring import markers, ownership
from engine.paths import atomic_write_bytes


def scratch_dir() -> str | None:
    """tmpfs when there is one: generation's throwaway trees are created and removed by the hundred."""
    import os

    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None

Kind = Literal["generated", "scaffold"]


class PlannedFile(BaseModel):
    path: str
    kind: Kind
    content: str
    mode: int = 0o644
    gofmt: bool = False  # rendered Go whose layout gofmt settles (aligned struct fields)


class FileResult(BaseModel):
    path: str
    kind: Kind
    status: str  # written | created | unchanged | owned | exists | disowned | removed


class Plan:
    def __init__(self) -> None:
        self.files: dict[str, PlannedFile] = {}

    def generated(self, path: str, content: str, gofmt: bool = False) -> None:
        self.files[path] = PlannedFile(path=path, kind="generated", content=content, gofmt=gofmt)

    def scaffold(self, path: str, content: str, mode: int = 0o644) -> None:
        self.files.setdefault(path, PlannedFile(path=path, kind="scaffold", content=content, mode=mode))

    def gofmt(self) -> None:
        """Format the rendered Go files with gofmt in one run (buf's output is formatted already)."""
        import shutil
        import subprocess
        import tempfile

        gofmt = shutil.which("gofmt")
        go_files = [p for p, f in self.files.items() if p.endswith(".go") and f.gofmt]
        if gofmt is None or not go_files:
            return
        with tempfile.TemporaryDirectory(prefix="framework-gofmt-", dir=scratch_dir()) as tmp:
            base = Path(tmp)
            for rel in go_files:
                (base / rel).parent.mkdir(parents=True, exist_ok=True)
                (base / rel).write_text(self.files[rel].content, encoding="utf-8")
            subprocess.run([gofmt, "-w", str(base)], capture_output=True, check=False)
            for rel in go_files:
                self.files[rel].content = (base / rel).read_text(encoding="utf-8")

    def final(self, item: PlannedFile) -> str:
        return markers.stamp(item.path, item.content) if item.kind == "generated" else item.content

    def apply(self, root: Path, by: str, *, dry_run: bool = False, force: bool = False,
              args: dict[str, str] | None = None) -> list[FileResult]:
        """Write what the ownership rules allow. `force` is an explicit request to write scaffold-once
        files anyway: `project new --force`, `scaffold service --force`, a named `scaffold rpc`.
        `args` are recorded with the births: what `project rescaffold` re-runs the scaffold with."""
        self.gofmt()
        born = {b.path for b in ownership.scaffolded(root)}
        gone = {d.path for d in ownership.disowned(root)}
        results: list[FileResult] = []
        writes: list[tuple[Path, bytes, int]] = []
        births: list[str] = []
        for path in sorted(self.files):
            item = self.files[path]
            content = self.final(item)
            target = root / path
            if path in gone:
                status = "disowned"
            elif item.kind == "generated":
                old = target.read_text(encoding="utf-8") if target.is_file() else None
                status = "unchanged" if old == content else "written"
            elif path in born and not force:
                status = "owned"  # the user's from birth: never overwritten (even when deleted)
            elif target.exists() and not force:
                status = "exists"
            else:
                status = "created"
            if status in ("written", "created"):
                writes.append((target, content.encode("utf-8"), item.mode))
                if item.kind == "scaffold":
                    births.append(path)
            results.append(FileResult(path=path, kind=item.kind, status=status))
        if not dry_run:
            _write_all(writes)
        if births and not dry_run:
            ownership.record_births(root, births, by, args)
        return results


def _write_all(writes: list[tuple[Path, bytes, int]]) -> None:
    """Each file renamed into place (never half-written) without an fsync each: generated files are
    regenerable and a lost birth is re-created by `project rescaffold`; the ownership ledger is durable.
    File creation dominates a large generation, so a few threads overlap it."""
    for parent in sorted({target.parent for target, _, _ in writes}):
        parent.mkdir(parents=True, exist_ok=True)
    if len(writes) < 32:
        for target, data, mode in writes:
            atomic_write_bytes(target, data, mode, durable=False)
        return
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=4) as pool:
        for future in [pool.submit(atomic_write_bytes, t, d, m, durable=False) for t, d, m in writes]:
            future.result()


def changed(results: list[FileResult]) -> list[str]:
    return [r.path for r in results if r.status in ("written", "created", "removed")]
