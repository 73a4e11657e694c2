"""`framework lint` as a command (docs/reference-lint.md): its outputs (text grouped by file, `--json`, SARIF 2.1.0
validated against the schema, gate evidence), exit codes, `--scope`, the results cache, silencing, and the frontend
linters (eslint, `tsc --noEmit`) run for real on a hand-made frontend.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.authoring_fixtures import _GO_ENV, go_caches  # noqa: F401
from tests.conftest import REPO, run_cli
from tests.lint_fixtures import (  # noqa: F401
    GOLANGCI_CACHE,
    HANDLERS,
    LINT_TOOLS,
    edit,
    line_of,
    lint_cache,
    lint_env,
    lint_in_process,
    lint_projects,
    write,
)

pytestmark = pytest.mark.timeout(600)
SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
NPM_LINT = REPO / ".tools" / "npm-lint" / "node_modules"


def framework(*args: str, cwd: Path, cache: Path, **env: str) -> tuple[int, str, str]:
    result = run_cli("framework", *args, cwd=cwd, timeout=300,
                     env={**_GO_ENV, **GOLANGCI_CACHE, **LINT_TOOLS, "GOFLAGS": "-buildvcs=false",
                          "FRAMEWORK_LINT_CACHE": str(cache), **env})
    return result.exit_code, result.stdout, result.stderr


def test_json_document_and_sarif_validate(lint_projects: tuple[Path, Path], lint_cache: Path) -> None:
    """docs/reference-lint.md#output: `--json` is one document (ok, exit_code, error, findings with analyzer,
    severity, file, line, column, message, hint); `--format sarif` is SARIF 2.1.0 valid against its schema, each
    result at its file and line; both exit 1 on error-level findings."""
    import jsonschema

    seeded, _ = lint_projects
    code, out, err = framework("lint", "--json", cwd=seeded, cache=lint_cache)
    assert code == 1, err
    doc = json.loads(out)
    assert doc["ok"] is False and doc["exit_code"] == 1 and doc["error"]["code"] == "lint_findings"
    first = doc["findings"][0]
    assert set(first) == {"analyzer", "rule", "severity", "file", "line", "column", "message", "hint"}
    assert doc["errors"] == sum(f["severity"] == "error" for f in doc["findings"])

    code, out, err = framework("lint", "--format", "sarif", cwd=seeded, cache=lint_cache)
    assert code == 1, err
    sarif = json.loads(out)
    jsonschema.Draft4Validator(json.loads(SCHEMA.read_text(encoding="utf-8"))).validate(sarif)
    results = sarif["runs"][0]["results"]
    assert len(results) == len(doc["findings"])
    where = {(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
              r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results}
    assert ("time-bucketing", f"{HANDLERS}/deps.go", line_of(seeded, f"{HANDLERS}/deps.go", "time.Local")) in where
    assert ("buf lint/FIELD_LOWER_SNAKE_CASE", "proto/order/v1/order.proto",
            line_of(seeded, "proto/order/v1/order.proto", "badName")) in where


def test_text_output_grouped_by_file_with_summary_and_gate_json(lint_projects: tuple[Path, Path],
                                                                lint_cache: Path, tmp_path: Path) -> None:
    """docs/reference-lint.md#output: human output is `file:line:col: analyzer: message` grouped under each file,
    then a summary line; `--quiet` prints findings only; `--gate-json` writes gate-shaped evidence that
    `framework gate record --from` reads (docs/reference-lint.md#gate-evidence)."""
    from engine.deploy.gates import gates_from_document

    seeded, _ = lint_projects
    gate_file = tmp_path / "gate.json"
    code, out, _ = framework("lint", "--gate-json", str(gate_file), cwd=seeded, cache=lint_cache)
    assert code == 1
    lines = out.splitlines()
    deps = f"{HANDLERS}/deps.go"
    header = lines.index(deps)
    assert lines[header + 1].startswith(f"  {deps}:") and ": time-bucketing: " in out
    assert lines[-1].startswith(tuple("0123456789")) and " errors, " in lines[-1]
    assert "not implemented" not in out
    code, quiet, _ = framework("lint", "--quiet", cwd=seeded, cache=lint_cache)
    assert code == 1 and all(":" in line and not line.startswith(" ") for line in quiet.splitlines())
    gate = json.loads(gate_file.read_text(encoding="utf-8"))
    assert gate["name"] == "lint" and gate["status"] == "failed" and gate["by_analyzer"]["time-bucketing"] == 1
    recorded = gates_from_document(gate)
    assert [(g.name, g.status) for g in recorded] == [("lint", "failed")]


def test_linter_that_cannot_run_exits_two_named(lint_projects: tuple[Path, Path], lint_cache: Path,
                                                tmp_path: Path) -> None:
    """docs/reference-lint.md#exit-codes: a linter that cannot run exits 2 and is named, never a silent pass:
    a frontend without its node_modules (eslint), a missing golangci-lint binary
    (docs/reference-lint.md#golangci-lint); bad usage exits 2 too."""
    _, clean = lint_projects
    project = Path(shutil.copytree(clean, tmp_path / "shop", symlinks=True))
    write(project, "frontends/web/package.json", '{"name": "web", "private": true}\n')
    code, out, err = framework("lint", "--json", cwd=project, cache=lint_cache)
    doc = json.loads(out)
    assert code == 2 and doc["error"]["code"] == "linter_cannot_run" and "eslint" in doc["error"]["message"]
    absent = str(tmp_path / "absent" / "golangci-lint")
    code, out, err = framework("lint", "--json", cwd=clean, cache=lint_cache, FRAMEWORK_GOLANGCI_LINT=absent)
    doc = json.loads(out)
    assert code == 2 and doc["error"]["code"] == "linter_cannot_run", doc["error"]
    assert "golangci-lint" in doc["error"]["message"] and "Traceback" not in err
    code, _, err = framework("lint", "--format", "xml", cwd=project, cache=lint_cache)
    assert code == 2 and "--format" in err
    code, _, err = framework("lint", "--scope", "/etc", cwd=project, cache=lint_cache)
    assert code == 2 and "outside the project" in err and "Traceback" not in err


def test_second_run_is_cached_and_scope_filters(lint_projects: tuple[Path, Path], lint_cache: Path) -> None:
    """docs/reference-lint.md#cache and #scope: an unchanged second run reads every result from the cache
    (keyed by content); `--scope <file>` keeps only that file's findings and skips whole-project linters."""
    seeded, _ = lint_projects
    first = lint_in_process(seeded, lint_cache)
    second = lint_in_process(seeded, lint_cache)
    assert {r.status for r in second.linters if r.status not in ("skipped", "not-implemented")} == {"cached"}
    assert [f.model_dump() for f in second.findings] == [f.model_dump() for f in first.findings]
    deps = f"{HANDLERS}/deps.go"
    old = os.getcwd()
    os.chdir(seeded)
    try:
        scoped = lint_in_process(seeded, lint_cache, scope=[deps])
    finally:
        os.chdir(old)
    assert {f.file for f in scoped.findings} == {deps}
    assert {f.analyzer for f in scoped.findings} == {"time-bucketing", "optional-deps-guard", "config-reach"}  # no vet
    assert not any(r.name in ("buf lint", "eslint", "tsc") for r in scoped.linters)


def test_lint_ignore_silences_one_analyzer_on_its_line(lint_projects: tuple[Path, Path], lint_cache: Path,
                                                       tmp_path: Path) -> None:
    """docs/reference-lint.md#silencing: `lint:ignore <analyzer>` in a comment on the line above silences that
    analyzer's finding there, and only that analyzer's."""
    seeded, _ = lint_projects
    project = Path(shutil.copytree(seeded, tmp_path / "shop", symlinks=True))
    deps = f"{HANDLERS}/deps.go"
    edit(project, deps, "\tday := time.Date(", "\t// lint:ignore time-bucketing legacy\n\tday := time.Date(")
    edit(project, deps, "\treturn d.Mailer", "\t// lint:ignore conventions wrong name\n\treturn d.Mailer")
    report = lint_in_process(project, lint_cache, analyzers=["time-bucketing", "optional-deps-guard"],
                             scope=[str(project / HANDLERS)])
    assert {f.analyzer for f in report.findings} == {"optional-deps-guard"}


@pytest.mark.skipif(not (NPM_LINT / ".bin" / "eslint").is_file(), reason="make npm-tools installs eslint and tsc")
def test_eslint_and_tsc_findings_with_their_rule_ids(lint_projects: tuple[Path, Path], lint_cache: Path,
                                                     tmp_path: Path) -> None:
    """docs/reference-lint.md#linters: eslint and `tsc --noEmit` run on each frontend and report with their own
    rule ids; `lint.frontend.typecheck: warn` keeps type errors as warnings (exit 0 when nothing else fails)."""
    _, clean = lint_projects
    project = Path(shutil.copytree(clean, tmp_path / "shop", symlinks=True))
    web = project / "frontends" / "web"
    write(project, "frontends/web/package.json", '{"name": "web", "private": true, "type": "module"}\n')
    write(project, "frontends/web/eslint.config.js",
          'export default [{files: ["src/**/*.js"], rules: {"no-unused-vars": "error"}}];\n')
    write(project, "frontends/web/tsconfig.json",
          '{"compilerOptions": {"strict": true, "noEmit": true, "skipLibCheck": true}, "include": ["src"]}\n')
    write(project, "frontends/web/src/store.js", "export function load() {\n  const unused = 1;\n  return 2;\n}\n")
    write(project, "frontends/web/src/api.ts", "export const port: number = \"8080\";\n")
    (web / "node_modules").symlink_to(NPM_LINT, target_is_directory=True)
    report = lint_in_process(project, lint_cache)
    hits = {(f.analyzer, f.rule, f.file, f.line, f.severity) for f in report.findings}
    assert ("eslint", "no-unused-vars", "frontends/web/src/store.js", 2, "error") in hits, hits
    assert ("tsc", "TS2322", "frontends/web/src/api.ts", 1, "error") in hits, hits
    assert report.exit_code == 1
    edit(project, "framework.yaml", "generate:", "lint:\n  frontend:\n    typecheck: warn\ngenerate:")
    (project / "frontends/web/src/store.js").write_text("export const two = 2;\n", encoding="utf-8")
    report = lint_in_process(project, lint_cache)
    assert [(f.analyzer, f.severity) for f in report.findings] == [("tsc", "warning")]
    assert report.exit_code == 0
