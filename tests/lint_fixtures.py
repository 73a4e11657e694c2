"""Shared pieces of the `framework lint` tests (docs/reference-lint.md): two copies of the session's generated
project (tests/authoring_fixtures.py `authored`), one seeded with a violation of every rule and one using every
marker correctly, each linted once per worker; the vet tool and results cache in one directory per worker.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.authoring_fixtures import _GO_ENV

PROTO = "proto/order/v1/order.proto"
HANDLERS = "internal/handlers/order"
MIGRATION = "db/migrations/20990101000000_add_total.up.sql"


@pytest.fixture(scope="session")
def lint_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One directory per worker, shared by every module that imports this fixture."""
    path = tmp_path_factory.getbasetemp() / "lint-cache"
    path.mkdir(exist_ok=True)
    return path


# golangci-lint's analysis cache is the machine's, like Go's build cache (safe for parallel runs): a session
# does not analyze the standard library and the module cache again.
GOLANGCI_CACHE = {"GOLANGCI_LINT_CACHE": os.environ.get("GOLANGCI_LINT_CACHE")
                  or str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "golangci-lint")}
# The built tools (golangci-lint with the framework's analyzers: a link of golangci-lint, tens of CPU-seconds;
# the vet tool) are the machine's too, named by the hash of their sources: built once, not once per worker.
LINT_TOOLS = {"FRAMEWORK_LINT_TOOLS": os.environ.get("FRAMEWORK_LINT_TOOLS")
              or str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "framework-lint-tools")}


@pytest.fixture(autouse=True)
def lint_env(lint_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """One vet tool build per worker: the cache outlives each test's own HOME."""
    monkeypatch.setenv("FRAMEWORK_LINT_CACHE", str(lint_cache))
    monkeypatch.setenv("GOLANGCI_LINT_CACHE", GOLANGCI_CACHE["GOLANGCI_LINT_CACHE"])
    monkeypatch.setenv("FRAMEWORK_LINT_TOOLS", LINT_TOOLS["FRAMEWORK_LINT_TOOLS"])
    for key, value in {**_GO_ENV, "GOFLAGS": "-buildvcs=false"}.items():
        monkeypatch.setenv(key, value)


def edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {rel}"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def write(root: Path, rel: str, text: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text, encoding="utf-8")


def line_of(root: Path, rel: str, needle: str) -> int:
    for i, line in enumerate((root / rel).read_text(encoding="utf-8").splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(f"{needle!r} not in {rel}")


_OPTIONS_IMPORT = 'import "framework/v1/options.proto";\n\noption go_package'
_GO_SEEDED = '''package order

import (
	"fmt"
	"os"
	"time"
)

// Deps holds the handlers' collaborators.
type Deps struct {
	// framework:optional-dep
	Mailer interface{ Send(string) error }
}

// Notify mails the day's bucket.
func (d *Deps) Notify(at time.Time) error {
	day := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.Local) // seeded: time-bucketing
	fmt.Printf("%d\\n", "not a number") // seeded: go vet printf
	os.Remove(day.String())             // seeded: golangci-lint errcheck
	_ = os.Getenv("MAILER_URL")         // seeded: config-reach
	return d.Mailer.Send(day.String()) // seeded: optional-deps-guard
}
'''
_GO_CLEAN = '''package order

import (
	"os"
	"time"
)

// Deps holds the handlers' collaborators.
type Deps struct {
	// framework:optional-dep
	Mailer interface{ Send(string) error }
}

// Notify mails the day's bucket.
func (d *Deps) Notify(at time.Time) error {
	if d.Mailer == nil || os.Getenv("MAILER_URL") == "" {
		return nil
	}
	at = at.UTC()
	day := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
	return d.Mailer.Send(day.String())
}
'''
_MODEL = '''package order

import (
	"connectrpc.com/connect"
	orderv1 "example.com/shop/gen/order/v1"
)

// Record is an order as the store keeps it.
type Record struct {
	// framework:read-only
	CreatedBy string
	// framework:computed
	Total int64
	Status string
}

// Validate checks a record before its status moves.
// framework:guards Status
func Validate(r *Record) error { return nil }

// Approve moves the status.
func Approve(r *Record) error {
	SEEDED_GUARD
	r.Status = "approved"
	return nil
}

// CreateRecord sets the read-only field once, at creation.
func CreateRecord(by string) *Record { return &Record{CreatedBy: by} }

// UpdateRecord applies an update.
func UpdateRecord(r *Record, req *connect.Request[orderv1.GetOrderRequest]) {
	r.Total = SEEDED_TOTAL
	SEEDED_UPDATE
}
'''
_SERVICE = '''package ordercore

import "context"

// Service implements Contract.
type Service struct{}

// Greeting answers with a greeting.
func (Service) Greeting(_ context.Context, name string) (string, error) { return "hello " + name, nil }

SEEDED_MARKER
func (Service) Extra() int { return 1 }
'''
_UNTESTED = '''package ping

import (
	"context"

	"connectrpc.com/connect"
	orderv1 "example.com/shop/gen/order/v1"
)

// Handler answers pings.
type Handler struct{}

// Ping answers with the message it was sent.
func (h *Handler) Ping(ctx context.Context,
	req *connect.Request[orderv1.PingRequest]) (*connect.Response[orderv1.PingResponse], error) {
	return connect.NewResponse(&orderv1.PingResponse{Message: req.Msg.Message}), nil
}
'''
_REPORT_SERVICE = '''
// ReportService serves precomputed reports.
service ReportService {
  option (framework.v1.service) = {static_export: true};
  rpc GetReport(GetReportRequest) returns (GetReportResponse) {
    option (framework.v1.method) = {read_only: true};
  }
  rpc RefreshReport(RefreshReportRequest) returns (RefreshReportResponse) {}
}

message GetReportRequest {}
message GetReportResponse {}
message RefreshReportRequest {}
message RefreshReportResponse {}
'''


def seed_violations(root: Path) -> None:
    """One violation of each implemented rule (docs/reference-lint.md#analyzers) and of each tool."""
    write(root, f"{HANDLERS}/deps.go", _GO_SEEDED)
    write(root, f"{HANDLERS}/model.go", _MODEL.replace("SEEDED_TOTAL", "req.Msg.Id // seeded: computed-fields")
          .replace("SEEDED_UPDATE", "r.CreatedBy = \"someone\" // seeded: read-only-fields")
          .replace("\tSEEDED_GUARD\n\tr.Status", "\tr.Status"))
    write(root, "internal/ordercore/service.go",
          _SERVICE.replace("SEEDED_MARKER\n", "// Extra is not in the contract.\n"))
    edit(root, PROTO, "  string name = 2;\n}",
         "  string name = 2;\n  string note = 10; // seeded: create-nullability\n}")
    # tests: a handler package whose generated test is gone.
    write(root, "internal/handlers/ping/rpc_ping.go", _UNTESTED)
    # conventions: GetOrder moved into another RPC's file.
    get = (root / HANDLERS / "rpc_get_order.go").read_text(encoding="utf-8")
    (root / HANDLERS / "rpc_get_order.go").unlink()
    body = get[get.index("// GetOrder handles"):]
    (root / HANDLERS / "rpc_delete_order.go").write_text(
        (root / HANDLERS / "rpc_delete_order.go").read_text(encoding="utf-8") + "\n" + body, encoding="utf-8")
    edit(root, PROTO, "option go_package", _OPTIONS_IMPORT)
    edit(root, PROTO, "rpc DeleteOrder(DeleteOrderRequest) returns (DeleteOrderResponse) {}",
         "rpc DeleteOrder(DeleteOrderRequest) returns (DeleteOrderResponse) {\n"
         "    option (framework.v1.method) = {read_only: true}; // seeded: proto-options\n  }")
    edit(root, PROTO, "message PingRequest {\n  string message = 1;",
         "message PingRequest {\n  string message = 1;\n  string badName = 2; // seeded: buf lint")
    edit(root, PROTO, "// framework:entity\nmessage Order {",
         "// framework:entity\nmessage Order {\n  // framework:entiy\n  string seeded_marker = 9;")
    with (root / PROTO).open("a", encoding="utf-8") as fh:
        fh.write(_REPORT_SERVICE + "\n// framework:entity\nmessage Invoice {\n  int64 id = 1;\n}\n")
    edit(root, "proto/framework/v1/options.proto", "  string owner = 3;", "  string owner = 3;\n  bool mine = 4;")
    write(root, MIGRATION, "ALTER TABLE orders ADD COLUMN total bigint NOT NULL;\n"
          "ALTER TABLE orders ADD COLUMN note text;\n"
          "COMMENT ON COLUMN orders.name IS 'framework:ref=derived-from=nope';\n"
          "COMMENT ON TABLE orders IS 'framework:immutable';\n")
    edit(root, "framework.yaml", "main: ./cmd/shop", "main: ./cmd/missing")
    write(root, "db/seeds/vocab.yaml", "rows: 3\ntables:\n  invoices: {rows: 2}\ncolumns:\n"
          "  orders.nope: {values: [a, b]}\n  name: {values: [x]}\n")


def seed_clean(root: Path) -> None:
    """Every implemented rule's marker used as the rule wants."""
    write(root, f"{HANDLERS}/deps.go", _GO_CLEAN)
    edit(root, "deploy/kcl/dev/main.k", "            run = [", '            env = {MAILER_URL = "smtp://127.0.0.1:2525"}\n'
         "            run = [")
    write(root, f"{HANDLERS}/model.go", _MODEL.replace("SEEDED_TOTAL", "int64(len(r.CreatedBy))")
          .replace("\tSEEDED_UPDATE\n", "")
          .replace("SEEDED_GUARD", "if err := Validate(r); err != nil {\n\t\treturn err\n\t}"))
    write(root, "internal/ordercore/service.go", _SERVICE.replace("SEEDED_MARKER", "// framework:exclude-contract"))
    edit(root, PROTO, "  string name = 2;\n}", "  string name = 2;\n  optional string note = 10;\n}")
    edit(root, PROTO, "option go_package", _OPTIONS_IMPORT)
    edit(root, PROTO, "rpc GetOrder(GetOrderRequest) returns (GetOrderResponse) {}",
         "rpc GetOrder(GetOrderRequest) returns (GetOrderResponse) {\n"
         "    option (framework.v1.method) = {read_only: true, idempotent: true};\n  }")
    with (root / PROTO).open("a", encoding="utf-8") as fh:
        refresh = "  rpc RefreshReport(RefreshReportRequest) returns (RefreshReportResponse) {}\n"
        fh.write(_REPORT_SERVICE.replace(refresh, ""))
    write(root, MIGRATION, "SET lock_timeout = '2s';\nALTER TABLE orders ADD COLUMN note text;\n"
          "COMMENT ON COLUMN orders.created_at IS 'framework:immutable';\n"
          "COMMENT ON COLUMN orders.updated_at IS 'framework:ref=derived-from=created_at';\n"
          "COMMENT ON TABLE orders IS 'framework:owner=order';\n")
    write(root, "db/seeds/vocab.yaml", "rows: 3\ntables:\n  orders: {rows: 2}\ncolumns:\n"
          "  orders.name: {values: [a, b]}\n  note: {values: [x]}\n")


@pytest.fixture(scope="module")
def lint_projects(authored: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(seeded, clean) copies of the session's project."""
    base = tmp_path_factory.mktemp("lint")
    seeded = Path(shutil.copytree(authored, base / "seeded" / "shop", symlinks=True))
    clean = Path(shutil.copytree(authored, base / "clean" / "shop", symlinks=True))
    seed_violations(seeded)
    seed_clean(clean)
    yield seeded, clean


def lint_in_process(root: Path, cache: Path, **kwargs: object) -> object:
    from engine.lint.run import lint
    from engine.project import Project

    saved = {k: os.environ.get(k) for k in ("FRAMEWORK_LINT_CACHE", *_GO_ENV, *GOLANGCI_CACHE, *LINT_TOOLS, "GOFLAGS")}
    os.environ.update({"FRAMEWORK_LINT_CACHE": str(cache), **_GO_ENV, **GOLANGCI_CACHE, **LINT_TOOLS,
                       "GOFLAGS": "-buildvcs=false"})
    try:
        return lint(Project(root), **kwargs)  # type: ignore[arg-type]
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
