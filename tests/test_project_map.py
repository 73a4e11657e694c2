"""`framework project map` and `framework project audit` (docs/reference-project.md#project-map,
docs/reference-project.md#project-audit) on a project made by `project new` (tests/authoring_fixtures.py
`authored`): one git checkout per module with a hand-edited generated file, a disowned one, a new user file, an
orphaned handler and ignored files; tests that write take their own copy."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.authoring.records import disown
from engine.inspection.audit import audit
from engine.inspection.hashcache import CACHE
from engine.inspection.map import project_map
from engine.project import Project
from tests.authoring_fixtures import fw, fw_text, go_caches  # noqa: F401
from tests.lint_fixtures import lint_cache, lint_env  # noqa: F401

DRIFTED = "internal/bootstrap/bootstrap.go"
DISOWNED = "internal/bootstrap/observability.go"
USER = "internal/handlers/order/pricing.go"
ORPHAN = "internal/handlers/order/rpc_cancel_order.go"
SCAFFOLD = "internal/handlers/order/rpc_get_order.go"
GENERATED = "gen/order/v1/order.pb.go"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=root, check=True,
                   capture_output=True)


@pytest.fixture(scope="module")
def mapped(authored: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The session's project as a git checkout, then: a generated file edited by hand, one disowned, a new user
    file, a handler whose RPC the protos do not declare, and files git ignores (/tmp/ in the project's
    .gitignore, a `*.log` pattern) or that sit in vendored directories (node_modules)."""
    root = Path(shutil.copytree(authored, tmp_path_factory.mktemp("map") / "shop", symlinks=True))
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "project new")
    with (root / DRIFTED).open("a") as f:
        f.write("// a hand edit\n")
    disown(Project(root), [DISOWNED], "custom middleware")
    (root / USER).write_text("package order\n\n// Price is the user's own code.\nfunc Price() int { return 1 }\n")
    stub = (root / SCAFFOLD).read_text().replace(") GetOrder(", ") CancelOrder(")
    (root / ORPHAN).write_text(stub)
    (root / ".gitignore").write_text((root / ".gitignore").read_text() + "*.log\n")
    for ignored in ("tmp/air.out", "debug.log", "node_modules/x/index.js", "web/node_modules/y.js"):
        (root / ignored).parent.mkdir(parents=True, exist_ok=True)
        (root / ignored).write_text("x\n")
    yield root


def _own(doc: dict) -> dict[str, str]:
    return {n["path"]: n["ownership"] for n in doc["nodes"] if n["kind"] == "file"}


def test_map_tags_each_file_with_its_ownership(mapped: Path) -> None:
    """docs/reference-project.md#project-map: a hand-edited generated file is drifted, a disowned one disowned, a
    birth-ledger file scaffold, an untouched generated file generated, a new file user; what git ignores and
    vendored directories are left out; the text tree tags each file and counts each directory (a real CLI run)."""
    code, doc, err = fw("project", "map", cwd=mapped)
    assert code == 0 and doc["ok"], err
    own = _own(doc)
    assert own[DRIFTED] == "drifted"
    assert own[DISOWNED] == "disowned"
    assert own[SCAFFOLD] == "scaffold" and own["framework.yaml"] == "scaffold"
    assert own[GENERATED] == "generated"
    assert own[USER] == "user" and own[ORPHAN] == "user"
    assert not {p for p in own if p.endswith((".log", "air.out", ".js")) or p.startswith(".git/")}
    assert doc["counts"]["drifted"] == 1 and doc["counts"]["disowned"] == 1
    assert doc["files"] == len(own) == sum(doc["counts"].values())
    internal = next(n for n in doc["nodes"] if n["path"] == "internal")
    assert internal["kind"] == "dir" and internal["counts"]["drifted"] == 1 and internal["counts"]["user"] == 2
    code, text, _ = fw_text("project", "map", cwd=mapped)
    assert code == 0
    assert "bootstrap.go  [DRIFTED]" in text and "observability.go  [disowned]" in text
    assert "rpc_get_order.go  [scaffold]" in text and "pricing.go  [user]" in text
    assert text.splitlines()[0].startswith("shop/  (") and "1 drifted" in text.splitlines()[0]


def test_map_depth_and_filter(mapped: Path) -> None:
    """docs/reference-project.md#project-map: `--depth N` keeps entries at most N deep (directory counts still
    cover their subtree); `--filter` takes ownerships or path globs, comma-separated."""
    project = Project(mapped)
    top = project_map(project, depth=1)
    assert top.nodes and {n.depth for n in top.nodes} == {1}
    assert next(n for n in top.nodes if n.path == "internal").counts["drifted"] == 1
    assert project_map(project, depth=0).nodes == [] and project_map(project, depth=0).counts["drifted"] == 1
    only = project_map(project, filter_="drifted,disowned")
    assert {n.path for n in only.nodes if n.kind == "file"} == {DRIFTED, DISOWNED}
    assert {n.path for n in only.nodes if n.kind == "dir"} == {"internal", "internal/bootstrap"}
    handlers = project_map(project, filter_="internal/handlers/*")
    files = {n.path for n in handlers.nodes if n.kind == "file"}
    assert SCAFFOLD in files and USER in files and all(p.startswith("internal/handlers/") for p in files)
    both = project_map(project, filter_="scaffold,*.proto")
    assert {n.ownership for n in both.nodes if n.kind == "file"} == {"scaffold"}
    assert all(n.path.endswith(".proto") for n in both.nodes if n.kind == "file")
    code, doc, _ = fw("project", "map", "--depth", "2", "--filter", "generated", cwd=mapped)
    assert code == 0 and max(n["depth"] for n in doc["nodes"]) == 2
    assert doc["filter"] == ["generated"] and doc["counts"]["scaffold"] == 0 and doc["counts"]["generated"] > 5


def test_map_refuses_bad_input(mapped: Path, tmp_path: Path) -> None:
    """docs/reference-project.md#project-map (exit codes): an unknown --filter word or a negative --depth is
    refused with exit 2 and a hint; outside a project map and audit exit 1 (docs/reference-project.md#project-audit);
    no traceback; nothing written."""
    before = sorted(p for p in mapped.rglob("*") if ".git" not in p.parts)
    code, doc, err = fw("project", "map", "--filter", "drifted,bogus", cwd=mapped)
    assert code == 2 and doc["error"]["code"] == "usage" and "'bogus'" in doc["error"]["message"]
    assert "drifted" in doc["error"]["hint"] and "Traceback" not in err
    code, doc, err = fw("project", "map", "--depth", "-1", cwd=mapped)
    assert code == 2 and "--depth -1" in doc["error"]["message"] and "Traceback" not in err
    for command in ("map", "audit"):
        code, doc, err = fw("project", command, cwd=tmp_path)
        assert code == 1 and doc["error"]["code"] == "project_not_found" and "Traceback" not in err
    assert sorted(p for p in mapped.rglob("*") if ".git" not in p.parts) == before


def test_map_cache_rereads_only_changed_files(mapped: Path, tmp_path: Path) -> None:
    """docs/reference-project.md#project-map (cache): hashes are kept by path, size and mtime in
    .framework/cache/map.json, so a second map reads no file and a change re-reads that file only; an
    unreadable cache is rebuilt; the cache directory ignores itself."""
    root = Path(shutil.copytree(mapped, tmp_path / "shop", symlinks=True))
    (root / CACHE).unlink(missing_ok=True)
    first = project_map(Project(root))
    assert first.read == first.files
    assert project_map(Project(root)).read == 0
    target = root / GENERATED
    target.write_text(target.read_text() + "// edited\n")
    again = project_map(Project(root))
    assert again.read == 1 and {n.path: n.ownership for n in again.nodes}[GENERATED] == "drifted"
    (root / CACHE).write_text("{not json")
    assert project_map(Project(root)).read == first.files
    assert (root / CACHE.parent / ".gitignore").read_text().strip().endswith("*")
    status = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True).stdout
    assert ".framework/cache" not in status


def test_map_outside_git_applies_the_gitignore(mapped: Path, tmp_path: Path) -> None:
    """docs/reference-project.md#project-map: outside a git checkout the root .gitignore's patterns apply (the
    project's /tmp/, a *.log glob) and vendored directories are skipped all the same."""
    root = Path(shutil.copytree(mapped, tmp_path / "shop", symlinks=True, ignore=shutil.ignore_patterns(".git")))
    own = {n.path: n.ownership for n in project_map(Project(root)).nodes if n.kind == "file"}
    assert own[DRIFTED] == "drifted" and own[USER] == "user"
    assert not {p for p in own if p.endswith((".log", "air.out", ".js"))}


def test_audit_reports_each_category(mapped: Path) -> None:
    """docs/reference-project.md#project-audit: drift is an error (exit 1) naming the file; the orphaned handler
    is found at its file and the line of its method; the disowned file is info with its reason; the version pin
    matches; the lint summary runs `framework lint`'s engine and is skipped with --no-lint (a real CLI run)."""
    code, doc, err = fw("project", "audit", "--no-lint", cwd=mapped)
    assert code == 1 and doc["error"]["code"] == "audit_failed", err
    cats = {c["name"]: c for c in doc["categories"]}
    assert list(cats) == ["drift", "orphaned-handlers", "migrations-entities", "disowned", "version-pin", "lint"]
    assert cats["drift"]["status"] == "error"
    assert [f["file"] for f in cats["drift"]["findings"]] == [DRIFTED]
    orphan = cats["orphaned-handlers"]
    line = next(i for i, text in enumerate((mapped / ORPHAN).read_text().splitlines(), 1) if ") CancelOrder(" in text)
    assert orphan["status"] == "warning"
    assert [(f["file"], f["line"]) for f in orphan["findings"]] == [(ORPHAN, line)]
    assert "CancelOrder" in orphan["findings"][0]["message"]
    assert cats["migrations-entities"]["status"] == "ok"
    assert cats["disowned"]["status"] == "ok"
    assert cats["disowned"]["findings"] == [{"severity": "info", "file": DISOWNED, "line": None,
                                             "message": "disowned: custom middleware"}]
    assert cats["version-pin"]["status"] == "ok" and cats["lint"]["status"] == "skipped"
    code, text, _ = fw_text("project", "audit", "--no-lint", cwd=mapped)
    assert code == 1 and f"{ORPHAN}:{line}:" in text and text.startswith("ERROR    drift")


def test_audit_lint_summary_is_skipped_without_the_tools(mapped: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/reference-project.md#project-audit: the lint category says skipped when a linter's tool is not
    installed (here golangci-lint, pointed at a path that does not exist), and never gates."""
    monkeypatch.setenv("FRAMEWORK_GOLANGCI_LINT", str(mapped / "no-such-golangci-lint"))
    report = audit(Project(mapped))
    lint = next(c for c in report.categories if c.name == "lint")
    assert lint.status == "skipped" and "golangci-lint not installed" in lint.summary


def _copy(authored: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(authored, tmp_path / "shop", symlinks=True))


def test_audit_version_pin(authored: Path, tmp_path: Path) -> None:
    """docs/reference-project.md#project-audit (version-pin): a framework_version newer than this framework is an
    error (exit 1), an older one a warning that never gates (exit 0), a pin that is not a version an error."""
    root = _copy(authored, tmp_path)
    config = root / "framework.yaml"
    text = config.read_text()
    line = next(i for i, t in enumerate(text.splitlines(), 1) if t.startswith("framework_version:"))
    results = {}
    for pin in ("99.0.0", "0.0.1", "banana"):
        config.write_text(text.replace("framework_version: 0.1.0", f"framework_version: {pin}"))
        report = audit(Project(root), lint=False)
        results[pin] = (next(c for c in report.categories if c.name == "version-pin"), report.exit_code)
    newer, code = results["99.0.0"]
    assert newer.status == "error" and code == 1 and newer.findings[0].line == line
    assert "newer than this framework" in newer.findings[0].message
    older, code = results["0.0.1"]
    assert older.status == "warning" and code == 0 and "project upgrade" in older.findings[0].message
    assert results["banana"][0].status == "error"
    code, doc, _ = fw("project", "audit", "--no-lint", cwd=root)  # the last pin written: banana
    assert code == 1 and next(c for c in doc["categories"] if c["name"] == "version-pin")["status"] == "error"


def test_audit_migrations_versus_entities(authored: Path, tmp_path: Path) -> None:
    """docs/reference-project.md#project-audit (migrations-entities): a table with no framework:entity message is a
    warning at its migration's CREATE TABLE line; an entity whose table no migration creates is an error at its
    message's line in the proto."""
    root = _copy(authored, tmp_path)
    (root / "db/migrations/20990101000000_audit_log.up.sql").write_text(
        "-- a table of our own\n\nCREATE TABLE audit_log (\n    id bigint PRIMARY KEY\n);\n")
    migration = next(p for p in (root / "db/migrations").glob("*_create_orders.up.sql"))
    migration.unlink()
    os.utime(root / "gen/framework_descriptor.json")  # the cache stays the fresh one: no buf run needed
    report = audit(Project(root), lint=False)
    cat = next(c for c in report.categories if c.name == "migrations-entities")
    found = {(f.severity, f.file, f.line) for f in cat.findings}
    proto_line = next(i for i, t in enumerate((root / "proto/order/v1/order.proto").read_text().splitlines(), 1)
                      if t.startswith("message Order "))
    assert found == {("warning", "db/migrations/20990101000000_audit_log.up.sql", 3),
                     ("error", "proto/order/v1/order.proto", proto_line)}
    assert cat.status == "error" and report.exit_code == 1


@pytest.mark.usefixtures("lint_env")
def test_audit_lint_summary_runs_the_lint_engine(mapped: Path) -> None:
    """docs/reference-project.md#project-audit (lint): the lint category is `framework lint`'s whole run, in-process
    with its cache: the same counts as `lint` itself, an error-level finding an error of the category."""
    from engine.lint.run import lint as run_lint

    report = audit(Project(mapped))
    category = next(c for c in report.categories if c.name == "lint")
    direct = run_lint(Project(mapped))  # cached now: the same run
    assert category.summary.startswith(f"{direct.errors} errors, {direct.warnings} warnings")
    assert category.status == ("error" if direct.errors else "warning" if direct.warnings else "ok")
    assert len([f for f in category.findings if f.file]) == len(direct.findings)
    assert all(r.status == "cached" for r in direct.linters if r.status not in ("skipped", "not-implemented"))


def test_map_of_a_project_its_enclosing_checkout_ignores(mapped: Path, tmp_path: Path) -> None:
    """docs/reference-project.md#project-map: a project inside a git checkout that ignores its directory is still
    mapped in full (the root .gitignore's patterns applied instead of git's empty listing)."""
    outer = tmp_path / "outer"
    outer.mkdir()
    _git(outer, "init", "-q")
    (outer / ".gitignore").write_text("scratch/\n")
    root = Path(shutil.copytree(mapped, outer / "scratch" / "shop", symlinks=True,
                                ignore=shutil.ignore_patterns(".git")))
    own = {n.path: n.ownership for n in project_map(Project(root)).nodes if n.kind == "file"}
    assert own[DRIFTED] == "drifted" and own["framework.yaml"] == "scaffold" and "debug.log" not in own
