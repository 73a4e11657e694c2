"""`framework lint` (docs/reference-lint.md): the field's linters and the framework's analyzers, in parallel, with
results cached by the content of their inputs (a second unchanged run reads the cache)."""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from engine import __version__
from engine.errors import EngineError, UsageError
from engine.lint import golang
from engine.lint.model import ANALYZERS, BY_NAME, Finding, LinterRun, LintReport, summarize
from engine.paths import atomic_write_bytes
from engine.project import CONFIG_FILE, Project

_PRUNE = {".git", "node_modules", "bin", ".next", "dist", "build", ".venv", ".tools", ".framework"}
_SUFFIXES = {"go": (".go", "go.mod", "go.sum"), "proto": (".proto", "buf.yaml"), "sql": (".sql",),
             "seeds": ("vocab.yaml",),
             "frontend": (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".json")}
IGNORE_WORD = "lint:ignore"
WHOLE_GO = "golangci-lint + go vet + go analyzers"  # one load: golangci-lint's custom build
VET_GO = "go vet + go analyzers"  # one load: the vet tool


def _inputs(root: Path) -> dict[str, list[tuple[str, bytes]]]:
    """Each group's input files (relative path, sha256), read once."""
    out: dict[str, list[tuple[str, bytes]]] = {k: [] for k in _SUFFIXES}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _PRUNE)
        for name in sorted(filenames):
            for group, suffixes in _SUFFIXES.items():
                if name.endswith(suffixes):
                    path = Path(dirpath, name)
                    rel = path.relative_to(root).as_posix()
                    out[group].append((rel, hashlib.sha256(path.read_bytes()).digest()))
    return out


def _key(*parts: object) -> str:
    h = hashlib.sha256(__version__.encode())
    for part in parts:
        h.update(b"\0" + json.dumps(part, sort_keys=True, default=lambda b: b.hex()).encode())
    return h.hexdigest()


def _key_with(head: str, content: list[Any]) -> str:
    name, parts = json.loads(head)
    return _key(name, parts, *content)


class _Cache:
    def __init__(self) -> None:
        self.dir = golang.lint_cache() / "results"

    def get(self, key: str) -> list[Finding] | None:
        try:
            data = json.loads((self.dir / f"{key}.json").read_text(encoding="utf-8"))
            return [Finding.model_validate(f) for f in data]
        except (OSError, ValueError):
            return None

    def put(self, key: str, findings: list[Finding]) -> None:
        try:
            atomic_write_bytes(self.dir / f"{key}.json",
                               json.dumps([f.model_dump() for f in findings]).encode())
        except OSError:
            pass  # a cache that cannot be written only costs the next run time


def _in_scope(file: str, scope: list[str]) -> bool:
    return not scope or any(file == s or file.startswith(s.rstrip("/") + "/") for s in scope)


def _ignored(root: Path, finding: Finding, lines: dict[str, list[str]]) -> bool:
    """`lint:ignore <analyzer>` in a comment on the finding's line or the line above silences it."""
    if finding.file not in lines:
        try:
            lines[finding.file] = (root / finding.file).read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            lines[finding.file] = []
    text = lines[finding.file]
    for n in (finding.line - 1, finding.line - 2):
        if 0 <= n < len(text) and IGNORE_WORD in text[n]:
            names = text[n].split(IGNORE_WORD, 1)[1].replace(",", " ").split()
            if finding.analyzer in names or finding.rule in names:
                return True
    return False


def _normalize_scope(root: Path, scope: list[str]) -> list[str]:
    out = []
    for item in scope:
        path = (Path.cwd() / item).resolve() if not Path(item).is_absolute() else Path(item).resolve()
        try:
            rel = path.relative_to(root.resolve()).as_posix()
        except ValueError as exc:
            raise UsageError(f"--scope {item!r} is outside the project ({root})") from exc
        if not path.exists():
            raise UsageError(f"--scope {item!r}: no such file or directory")
        out.append("." if rel == "" else rel)
    return [s for s in out if s != "."]


def lint(project: Project, analyzers: list[str] | None = None, scope: list[str] | None = None) -> LintReport:
    """Every linter and analyzer when `analyzers` is empty, else those named; `scope` keeps findings under those
    paths and skips whole-project linters (docs/reference-lint.md#scope)."""
    from engine.authoring.config import load

    started = time.perf_counter()
    root = project.root
    cfg = load(project)
    for name in analyzers or []:
        if name not in BY_NAME:
            raise UsageError(f"no analyzer {name!r}", hint=f"analyzers: {', '.join(a.name for a in ANALYZERS)}")
    chosen = analyzers or [a.name for a in ANALYZERS]
    rel_scope = _normalize_scope(root, scope or [])
    whole = not analyzers and not rel_scope  # the field's tools run only on an unselected, unscoped run
    report = LintReport(root=str(root), scope=rel_scope)
    inputs = _inputs(root)
    cache = _Cache()
    proto_dir = cfg.proto_dir
    has_protos = any(f.startswith(f"{proto_dir}/") for f, _ in inputs["proto"])
    has_go = (root / "go.mod").is_file()
    frontends = _frontends(root)

    tasks: list[tuple[str, str, list[Any], Callable[[], list[Finding]]]] = []  # (name, group, key parts, work)
    skipped: list[LinterRun] = []
    fallback: dict[str, list[str]] = {}  # task -> the keys of broader cached results to filter

    def want(name: str) -> bool:
        return name in chosen and BY_NAME[name].done

    for name in chosen:
        if not BY_NAME[name].done:
            status = "failed" if analyzers else "not-implemented"
            skipped.append(LinterRun(name=name, status=status, reason="not implemented in this build "
                                     "(docs/reference-lint.md#analyzers)"))

    # Go (docs/reference-lint.md#go-analyzers): a whole run is one golangci-lint load holding go vet's passes and the
    # Go analyzers (its custom build); selected or scoped analyzers, a project's own golangci-lint configuration or
    # a golangci-lint named by $FRAMEWORK_GOLANGCI_LINT run them in one `go vet -vettool` load instead.
    go_selected = [a.name for a in ANALYZERS if a.group == "go" and want(a.name)]
    custom: tuple[Path, Path] | None = None
    if has_go and whole:  # golangci-lint: found before the cache is read, so a missing binary is never a pass
        from engine.lint import golangci, golangci_plugin

        try:
            golangci.binary()
            if not golangci.has_own_config(root) and not os.environ.get(golangci.OVERRIDE_ENV):
                built = golangci_plugin.binary()
                custom = (built, golangci_plugin.config()) if built else None
            if custom:
                tasks.append((WHOLE_GO, "go", [golangci.VERSION, golang.source_hash()],
                              lambda: golangci.run(root, custom)))
            else:
                tasks.append((golangci.NAME, "go", [golangci.VERSION], lambda: golangci.run(root)))
        except EngineError as exc:
            skipped.append(LinterRun(name=golangci.NAME, status="failed", reason=exc.message))
    elif whole:
        skipped.append(LinterRun(name="golangci-lint", status="skipped", reason="no go.mod"))
    if has_go and (whole or go_selected) and not custom:
        go_scope = [s for s in rel_scope if s.endswith(".go") or (root / s).is_dir()]
        name = VET_GO if whole else "go analyzers"
        if not rel_scope or go_scope:
            tasks.append((name, "go", [go_selected, whole, go_scope, golang.source_hash()],
                          lambda: golang.run(root, go_selected if not whole else [], whole, go_scope)))
            if rel_scope:  # a whole run over the same content already holds the scope's findings
                from engine.lint.golangci import VERSION

                fallback[name] = [json.dumps([WHOLE_GO, [VERSION, golang.source_hash()]]),
                                  json.dumps([VET_GO, [go_selected, True, [], golang.source_hash()]])]
    elif not has_go and (whole or go_selected):
        skipped.append(LinterRun(name=golang.GO_LINTER, status="skipped", reason="no go.mod"))

    pool = ThreadPoolExecutor(max_workers=4)
    proto_names = [n for n in ("proto-markers", "proto-options", "static-export", "vendored-protos") if want(n)]
    image_lock = threading.Lock()
    image_box: list[dict[str, Any]] = []

    def image() -> dict[str, Any] | None:
        """The `buf build` descriptor, built once on first use (a run whose proto results are cached never
        compiles the protos)."""
        if not has_protos:
            return None
        with image_lock:
            if not image_box:
                from engine.lint import proto

                image_box.append(proto.prepare(proto.image(root, proto_dir), proto_dir, root))
            return image_box[0]

    if has_protos:
        from engine.lint import proto

        if whole:
            tasks.append(("buf lint", "proto", [], lambda: proto.buf_lint(root, proto_dir)))
        checks: dict[str, Callable[[], list[Finding]]] = {
            "proto-markers": lambda: proto.proto_markers(image() or {}),
            "proto-options": lambda: proto.proto_options(image() or {}),
            "static-export": lambda: proto.static_export(image() or {}),
            "vendored-protos": lambda: proto.vendored_protos(root, proto_dir, cfg.module),
        }
        for n in proto_names:
            tasks.append((n, "proto", [cfg.module], checks[n]))
    elif whole or proto_names:
        skipped.append(LinterRun(name="buf lint", status="skipped", reason=f"no protos under {proto_dir}/"))

    from engine.lint import sql

    if want("migration-safety"):
        tasks.append(("migration-safety", "sql", [], lambda: sql.migration_safety(root)))
    if want("column-markers"):
        tasks.append(("column-markers", "sql", [], lambda: sql.column_markers(root)))
    if want("fixture-drift"):
        tasks.append(("fixture-drift", "sql+seeds", [], lambda: sql.fixture_drift(root)))
    if want("db"):
        tasks.append(("db", "sql+proto", [], lambda: sql.db(root, image())))
    if want("create-nullability") and has_protos:
        tasks.append(("create-nullability", "sql+proto", [], lambda: sql.create_nullability(root, image())))
    if want("config-deps"):
        from engine.lint.config import config_deps

        tasks.append(("config-deps", "config", [], lambda: config_deps(project)))

    if want("frontend-stores"):
        from engine.lint.frontend_stores import check as frontend_stores

        tasks.append(("frontend-stores", "frontend", [], lambda: frontend_stores(root, frontends)))
    if frontends:
        from engine.lint import frontend

        if whole:
            mode = frontend.typecheck_mode(project)
            for fe in frontends:
                rel = fe.relative_to(root).as_posix()
                tasks.append((f"eslint {rel}", "frontend", [rel], partial(frontend.eslint, root, fe)))
                if mode != "off":
                    tasks.append((f"tsc {rel}", "frontend", [rel, mode], partial(frontend.tsc, root, fe, mode)))
    elif whole:
        skipped.append(LinterRun(name="eslint", status="skipped", reason="no frontends"))
        skipped.append(LinterRun(name="tsc", status="skipped", reason="no frontends"))

    config_text = (root / CONFIG_FILE).read_bytes()
    futures: list[tuple[str, Future[tuple[list[Finding], float]]]] = []
    runs: list[LinterRun] = []
    for name, group, parts, work in tasks:
        groups = group.split("+")
        content = [config_text.hex(), [inputs.get(g, []) for g in groups]]
        key = _key(name, parts, *content)
        cached = cache.get(key)
        for head in fallback.get(name, []) if cached is None else []:
            broader = cache.get(_key_with(head, content))
            if broader is not None:
                cached = [f for f in broader if f.analyzer in go_selected]
                break
        if cached is not None:
            report.findings += cached
            runs.append(LinterRun(name=name, status="cached"))
            continue

        def job(work: Callable[[], list[Finding]] = work, key: str = key) -> tuple[list[Finding], float]:
            t0 = time.perf_counter()
            found = work()
            cache.put(key, found)
            return found, round(time.perf_counter() - t0, 3)

        futures.append((name, pool.submit(job)))
    for name, future in futures:
        try:
            found, seconds = future.result()
            report.findings += found
            runs.append(LinterRun(name=name, status="ran", seconds=seconds))
        except EngineError as exc:
            runs.append(LinterRun(name=name, status="failed", reason=exc.message))
    pool.shutdown(wait=True)
    if want("config-reach") and any(f.analyzer == "config-reach" for f in report.findings):
        from engine.lint import config_reach

        try:  # after the cache: the findings depend on the KCL environments, read on every run
            report.findings = config_reach.unreached(report.findings, config_reach.delivered_keys(project))
        except EngineError as exc:
            report.findings = [f for f in report.findings if f.analyzer != "config-reach"]
            runs.append(LinterRun(name="config-reach", status="failed",
                                  reason=f"the environments do not evaluate: {exc.message}"))
    report.linters = runs + skipped
    lines: dict[str, list[str]] = {}
    excluded = _contract_excludes(project)
    report.findings = [f for f in report.findings if _in_scope(f.file, rel_scope) and not _ignored(root, f, lines)
                       and not (f.analyzer == "contract" and _in_scope(f.file, excluded) and excluded)]
    report.seconds = round(time.perf_counter() - started, 3)
    return summarize(report)


def _contract_excludes(project: Project) -> list[str]:
    """framework.yaml `contracts.exclude`: package paths whose contract the `contract` analyzer leaves alone."""
    contracts = project.config.get("contracts") or {}
    items = contracts.get("exclude") if isinstance(contracts, dict) else None
    return [str(i).rstrip("/") for i in items or [] if isinstance(i, str)]


def _frontends(root: Path) -> list[Path]:
    from engine.lint.frontend import frontend_dirs

    return frontend_dirs(root)
