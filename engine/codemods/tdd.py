"""`framework project migrate tdd` (docs/reference-project.md#project-migrate-tdd): hand-rolled handler tests moved
onto the generated test harness (`NewHarness`, `NewHarnessFor` in each service's generated `harness_test.go`).

Python only chooses the files and writes: the rewrite is `assets/codemods/go`, a Go program (go/ast edits,
go/format) built once and cached the way `framework lint` builds its vet tool (`engine.lint.gotool.go_tool`).
A real run writes through a sandboxed copy of the checkout (`engine.authoring.sandbox`); `--dry-run` prints the
unified diff per file and writes nothing. A file that cannot be rewritten safely is listed with its reason and
left alone (exit 1); a second run changes nothing.
"""

from __future__ import annotations

import difflib
import json
import subprocess
import tempfile
from pathlib import Path

from pydantic import BaseModel

from engine.errors import EngineError, InvalidInput, UsageError
from engine.project import Project

HARNESS = "harness_test.go"
GENERATED_TESTS = {HARNESS, "handler_test.go"}


class CodemodCannotRun(EngineError):
    """The rewriter cannot be built or run (no Go toolchain, a build failure): exit 2, named
    (docs/reference-project.md#project-migrate-tdd)."""

    exit_code = 2
    code = "codemod_cannot_run"


class TddFile(BaseModel):
    path: str  # relative to the project root
    status: str  # rewritten | unchanged | skipped
    reason: str | None = None  # why a skipped file was left alone
    line: int | None = None  # where (when known)
    changes: list[str] = []  # per test function, what moved onto the harness
    diff: str = ""  # unified diff of a rewritten file


class TddResult(BaseModel):
    dry_run: bool = False
    files: list[TddFile] = []
    rewritten: list[str] = []
    skipped: list[str] = []
    written: list[str] = []  # files changed in the checkout (none on --dry-run)


def _rewriter() -> Path:
    from engine.lint.gotool import LinterCannotRun, go_tool
    from engine.paths import assets_dir

    try:
        return go_tool(assets_dir() / "codemods" / "go", "frameworktdd", "project migrate tdd: building the rewriter")
    except LinterCannotRun as exc:  # the shared builder's error, named for this command
        raise CodemodCannotRun(exc.message.replace("go vet: ", "project migrate tdd: "), hint=exc.hint) from None


def _services(root: Path) -> dict[str, tuple[str, dict[str, str]]]:
    """Handler directory -> (service name, RPC name -> unary | server | client | bidi), from the descriptor cache."""
    from engine.authoring import gocode
    from engine.authoring.descriptor import read_cache

    out: dict[str, tuple[str, dict[str, str]]] = {}
    for svc in read_cache(root).services:
        out[gocode.handler_dir(svc)] = (svc.name, {m.name: m.stream or "unary" for m in svc.methods})
    return out


def _scope(root: Path, path: str | None, handler_dirs: list[str]) -> list[str]:
    """The hand-written `_test.go` files of the handler directories, limited to `--path` (a directory or a file)."""
    candidates = sorted(f"{d}/{p.name}" for d in handler_dirs if (root / d).is_dir()
                        for p in (root / d).glob("*_test.go") if p.name not in GENERATED_TESTS and p.is_file())
    if path is None:
        return candidates
    target = (Path.cwd() / path).resolve()
    if not target.exists():
        raise UsageError(f"--path {path}: no such file or directory")
    try:
        rel = target.relative_to(root.resolve()).as_posix()
    except ValueError:
        raise UsageError(f"--path {path}: outside the project ({root})") from None
    if target.is_file():
        if rel not in candidates:
            raise UsageError(f"--path {path}: not a hand-written _test.go file of a handler directory",
                             hint="handler tests live in internal/handlers/<service>/ (the generated "
                                  "handler_test.go and harness_test.go are not migrated)")
        return [rel]
    return [c for c in candidates if rel == "." or c.startswith(rel + "/")]


def _run_rewriter(root: Path, files: list[str], services: dict[str, tuple[str, dict[str, str]]]) -> list[dict]:
    import os

    job = {"files": [{"path": str(root / f), "service": services[f.rsplit("/", 1)[0]][0],
                      "methods": services[f.rsplit("/", 1)[0]][1]} for f in files]}
    proc = subprocess.run([str(_rewriter())], input=json.dumps(job), capture_output=True, text=True, timeout=300,
                          env={**os.environ, "GOWORK": "off"})
    if proc.returncode != 0:
        raise CodemodCannotRun(f"project migrate tdd: the rewriter failed (exit {proc.returncode}): "
                               f"{proc.stderr.strip()[-2000:]}")
    files_out = json.loads(proc.stdout).get("files", [])
    return files_out if isinstance(files_out, list) else []


def _diff(rel: str, before: str, after: str) -> str:
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        fromfile=f"a/{rel}", tofile=f"b/{rel}"))


def migrate_tdd(project: Project, *, path: str | None = None, dry_run: bool = False) -> TddResult:
    """Move the hand-rolled handler tests in scope onto the harness (docs/reference-project.md#project-migrate-tdd)."""
    root = project.root
    services = _services(root)
    files = _scope(root, path, sorted(services))
    result = TddResult(dry_run=dry_run)
    if not files:
        return result
    runnable: list[str] = []
    for rel in files:
        where = rel.rsplit("/", 1)[0]
        if not (root / where / HARNESS).is_file():
            result.files.append(TddFile(path=rel, status="skipped", reason=f"no generated harness in {where}/ "
                                        "(run `framework generate` first)"))
        else:
            runnable.append(rel)
    by_path = {str(root / rel): rel for rel in runnable}
    rewritten: dict[str, str] = {}
    for item in _run_rewriter(root, runnable, services) if runnable else []:
        found = by_path.get(str(item.get("path")))
        if found is None:
            continue
        rel = found
        status = str(item.get("status"))
        reason = str(item.get("reason") or "").replace(f"{root}/", "") or None
        entry = TddFile(path=rel, status=status, reason=reason, line=item.get("line") or None,
                        changes=list(item.get("changes") or []))
        if status == "rewritten":
            content = str(item.get("content", ""))
            entry.diff = _diff(rel, (root / rel).read_text(encoding="utf-8"), content)
            rewritten[rel] = content
        result.files.append(entry)
    result.files.sort(key=lambda f: f.path)
    result.rewritten = sorted(rewritten)
    result.skipped = [f.path for f in result.files if f.status == "skipped"]
    if rewritten and not dry_run:
        result.written = _write(root, rewritten)
    return result


def _write(root: Path, rewritten: dict[str, str]) -> list[str]:
    """The rewritten files written into a copy of the checkout, then carried over: an error half-way leaves the
    checkout as it was."""
    from engine.authoring import sandbox
    from engine.authoring.plan import scratch_dir

    with tempfile.TemporaryDirectory(prefix="framework-tdd-", dir=scratch_dir()) as tmp:
        copy = sandbox.copy(root, Path(tmp) / "copy")
        for rel, content in rewritten.items():
            target = copy / rel
            if not target.is_file():
                raise InvalidInput(f"{rel} disappeared while it was rewritten")
            target.write_text(content, encoding="utf-8")
        changes = sandbox.diff(root, copy)
        unexpected = [p for p, _ in changes if p not in rewritten]
        if unexpected:
            raise InvalidInput(f"the checkout changed while it was rewritten: {', '.join(unexpected[:5])}",
                               hint="run the command again")
        sandbox.carry_over(copy, root, changes)
    return sorted(p for p, _ in changes)


def exit_code(result: TddResult) -> int:
    """0: every file in scope is on the harness (or had nothing to move); 1: some were left alone."""
    return 1 if result.skipped else 0
