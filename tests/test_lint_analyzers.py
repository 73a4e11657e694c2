"""`framework lint`'s analyzers and the field's tools, each against a project that breaks its rule and one that
keeps it (docs/reference-lint.md#analyzers): the finding's analyzer, rule, file and line asserted.

Both projects are copies of the session's `project new` project, linted once each in-process.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.lint.run import VET_GO, WHOLE_GO
from tests.authoring_fixtures import go_caches  # noqa: F401
from tests.lint_fixtures import (  # noqa: F401
    HANDLERS,
    MIGRATION,
    PROTO,
    line_of,
    lint_cache,
    lint_env,
    lint_in_process,
    lint_projects,
)

pytestmark = pytest.mark.timeout(600)

# analyzer, rule, file, a text on the expected line
VIOLATIONS = [
    ("time-bucketing", "time-bucketing", f"{HANDLERS}/deps.go", "time.Local"),
    ("optional-deps-guard", "optional-deps-guard", f"{HANDLERS}/deps.go", "d.Mailer.Send"),
    ("conventions", "conventions", f"{HANDLERS}/rpc_delete_order.go", "func (h *Handler) GetOrder"),
    ("db", "db", PROTO, "message Invoice"),
    ("migration-safety", "adding-required-field", MIGRATION, "ADD COLUMN total"),
    ("column-markers", "column-markers", MIGRATION, "derived-from=nope"),
    ("column-markers", "column-markers", MIGRATION, "COMMENT ON TABLE orders IS 'framework:immutable'"),
    ("config-deps", "config-deps", "framework.yaml", "./cmd/missing"),
    ("proto-markers", "proto-markers", PROTO, "string seeded_marker"),  # the element it annotates
    ("proto-options", "proto-options", PROTO, "rpc DeleteOrder"),
    ("static-export", "static-export", PROTO, "rpc RefreshReport"),
    ("vendored-protos", "vendored-protos", "proto/framework/v1/options.proto", "bool mine"),
    ("read-only-fields", "read-only-fields", f"{HANDLERS}/model.go", "seeded: read-only-fields"),
    ("computed-fields", "computed-fields", f"{HANDLERS}/model.go", "seeded: computed-fields"),
    ("guarded-fields", "guarded-fields", f"{HANDLERS}/model.go", 'r.Status = "approved"'),
    ("tests", "tests", "internal/handlers/ping/rpc_ping.go", "func (h *Handler) Ping"),
    ("fixture-drift", "fixture-drift", "db/seeds/vocab.yaml", "invoices:"),
    ("fixture-drift", "fixture-drift", "db/seeds/vocab.yaml", "orders.nope"),
    ("contract", "contract", "internal/ordercore/service.go", "func (Service) Extra"),
    ("create-nullability", "create-nullability", PROTO, "string note = 10"),
    ("go vet", "printf", f"{HANDLERS}/deps.go", "fmt.Printf"),
    ("golangci-lint", "errcheck", f"{HANDLERS}/deps.go", "os.Remove"),
    ("config-reach", "config-reach", f"{HANDLERS}/deps.go", 'os.Getenv("MAILER_URL")'),
    ("buf lint", "FIELD_LOWER_SNAKE_CASE", PROTO, "badName"),
]


GO = ("time-bucketing", "optional-deps-guard", "conventions", "read-only-fields", "computed-fields", "contract",
      "guarded-fields", "tests", "config-reach")


@pytest.fixture(scope="module")
def reports(lint_projects: tuple[Path, Path], lint_cache: Path) -> dict[str, Any]:
    seeded, clean = lint_projects
    return {"seeded": lint_in_process(seeded, lint_cache), "clean": lint_in_process(clean, lint_cache),
            "roots": (seeded, clean)}


@pytest.mark.parametrize(("analyzer", "rule", "file", "needle"), VIOLATIONS,
                         ids=[f"{v[0]}-{v[1]}-{i}" for i, v in enumerate(VIOLATIONS)])
def test_violation_is_reported_at_its_file_and_line(reports: dict[str, Any], analyzer: str, rule: str, file: str,
                                                     needle: str) -> None:
    """docs/reference-lint.md#analyzers: each rule reports a violation at its file and line, under its analyzer
    (or the tool's own rule id for go vet and buf lint)."""
    seeded = reports["roots"][0]
    line = line_of(seeded, file, needle)
    hits = [(f.analyzer, f.rule, f.file, f.line) for f in reports["seeded"].findings]
    assert (analyzer, rule, file, line) in hits, hits


@pytest.mark.parametrize("analyzer", sorted({v[0] for v in VIOLATIONS}))
def test_project_keeping_the_rule_has_no_finding(reports: dict[str, Any], analyzer: str) -> None:
    """docs/reference-lint.md#analyzers: the project that uses each marker as the rule wants (guarded optional
    dependency, UTC buckets, valid column markers, read_only on a read, a static_export service of reads) has no
    finding of that analyzer, and the analyzer ran."""
    report = reports["clean"]
    assert [f for f in report.findings if f.analyzer == analyzer] == []
    ran = {r.name for r in report.linters if r.status in ("ran", "cached")}
    assert analyzer in ran or any(analyzer in name for name in ran) or (
        analyzer in GO and WHOLE_GO in ran)


def test_missing_golangci_lint_is_exit_two_named(lint_projects: tuple[Path, Path], lint_cache: Path,
                                                 monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """docs/reference-lint.md#golangci-lint: without the golangci-lint binary a whole run exits 2 and names it,
    even when its results for the same content are cached (never a silent pass)."""
    _, clean = lint_projects
    monkeypatch.setenv("FRAMEWORK_GOLANGCI_LINT", str(tmp_path / "absent" / "golangci-lint"))
    report = lint_in_process(clean, lint_cache)
    assert report.exit_code == 2
    assert [(r.name, "make go-tools" in (r.reason or "") or "not installed" in (r.reason or ""))
            for r in report.failed] == [("golangci-lint", True)]


def test_clean_project_exits_zero_and_seeded_exits_one(reports: dict[str, Any]) -> None:
    """docs/reference-lint.md#exit-codes: 1 on any error-level finding, 0 otherwise; every analyzer of
    docs/reference-lint.md#analyzers is in this build (none listed as not implemented)."""
    assert reports["clean"].exit_code == 0, reports["clean"].findings
    assert reports["seeded"].exit_code == 1
    assert not [r.name for r in reports["clean"].linters if r.status == "not-implemented"]


def test_whole_run_loads_the_go_packages_once(reports: dict[str, Any]) -> None:
    """docs/reference-lint.md#go-analyzers: a whole run type-checks the Go packages once, in golangci-lint built
    with the framework's analyzers as a module plugin: no separate `go vet -vettool` load, and go vet's passes and
    the analyzers' findings come out of that one run under their own names."""
    for report in (reports["seeded"], reports["clean"]):
        ran = [r.name for r in report.linters if r.status in ("ran", "cached")]
        assert WHOLE_GO in ran and VET_GO not in ran and "golangci-lint" not in ran, ran
    analyzers = {f.analyzer for f in reports["seeded"].findings}
    assert {"go vet", "golangci-lint", "time-bucketing", "contract"} <= analyzers
    assert not any(f.rule == "framework" or f.rule == "govet" for f in reports["seeded"].findings)


_STORE_BAD = '''import { createConnectTransport } from "@connectrpc/connect-web";
import { apiBaseUrl } from "./gen/framework/clients";

export const transport = createConnectTransport({ baseUrl: apiBaseUrl });

export async function loadOrders(): Promise<unknown> {
  // fetch(apiBaseUrl) in a comment is not a call
  const res = await fetch(`${apiBaseUrl}/order.v1.OrderService/ListOrders`, { method: "POST", body: "{}" });
  return res.json();
}
'''
_STORE_GOOD = '''import { orderClient } from "./gen/framework/clients";

export async function loadOrders(): Promise<unknown> {
  const docs = await fetch("https://cdn.example.com/help.json");  // not the API
  return [await orderClient().listOrders({}), await docs.json()];
}
'''


def test_frontend_stores_reports_raw_api_access_at_its_line(lint_projects: tuple[Path, Path], lint_cache: Path,
                                                            tmp_path: Path) -> None:
    """docs/reference-lint.md#frontend-stores: outside src/gen/, a Connect transport built by hand and a raw
    `fetch` to the API's address are findings at their file and line; a store calling the generated client (and a
    fetch elsewhere) is not; the generated clients.ts itself is never read."""
    import shutil

    _, clean = lint_projects
    project = Path(shutil.copytree(clean, tmp_path / "shop", symlinks=True))
    web = "frontends/web"
    for rel, text in {"package.json": '{"name": "web", "private": true}\n', "src/orders.ts": _STORE_BAD,
                      "src/good.ts": _STORE_GOOD,
                      "src/gen/framework/clients.ts": 'import { createClient } from "@connectrpc/connect";\n'}.items():
        (project / web / rel).parent.mkdir(parents=True, exist_ok=True)
        (project / web / rel).write_text(text, encoding="utf-8")
    report = lint_in_process(project, lint_cache, analyzers=["frontend-stores"])
    hits = sorted((f.analyzer, f.rule, f.file, f.line) for f in report.findings)
    bad = f"{web}/src/orders.ts"
    assert hits == [("frontend-stores", "frontend-stores", bad, line_of(project, bad, "import { createConnect")),
                    ("frontend-stores", "frontend-stores", bad, line_of(project, bad, "await fetch("))], hits
    assert report.exit_code == 1
    (project / bad).write_text(_STORE_GOOD, encoding="utf-8")
    report = lint_in_process(project, lint_cache, analyzers=["frontend-stores"])
    assert report.findings == [] and report.exit_code == 0


def test_two_load_fallback_reports_the_same_findings(reports: dict[str, Any], lint_cache: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/reference-lint.md#go-analyzers: with golangci-lint named by $FRAMEWORK_GOLANGCI_LINT (a build that may not
    hold the plugin) a whole run falls back to two loads, the vet tool beside golangci-lint without its govet, and
    reports the same analyzers' and tools' findings at the same places as the one-load run."""
    from engine.lint import golangci

    monkeypatch.setenv("FRAMEWORK_GOLANGCI_LINT", golangci.binary())
    seeded = reports["roots"][0]
    report = lint_in_process(seeded, lint_cache)
    ran = [r.name for r in report.linters if r.status in ("ran", "cached")]
    assert VET_GO in ran and "golangci-lint" in ran and WHOLE_GO not in ran, ran

    def places(findings: list[Any]) -> set[tuple[str, str, str, int]]:
        return {(f.analyzer, f.rule, f.file, f.line) for f in findings}

    assert places(report.findings) == places(reports["seeded"].findings)
