"""Scaffolding (docs/reference-authoring.md#commands; `--resume` and `--force` together are an error):
entities with their CRUD quintet and owned migration (applied on a real PostgreSQL), service batches, RPC
stubs, handler files, binaries; every `--dry-run` writes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.authoring_fixtures import fw, fw_text, go, go_caches, go_trimpath, project_copy, tree
from tests.pg_fixtures import pg_url

# -trimpath: the copies of the generated project share the machine's Go build cache (tests/authoring_fixtures.py).
pytestmark = pytest.mark.usefixtures("go_trimpath")


def test_every_dry_run_lists_files_and_writes_nothing(authored: Path) -> None:
    """Every scaffold has --dry-run (docs/reference-authoring.md#commands) listing the files it would write;
    none is written. One real CLI run (its --json document); the rest in-process (the rule is the engine's)."""
    from engine.authoring.generate import generate
    from engine.authoring.scaffold import (
        scaffold_binary,
        scaffold_handler_file,
        scaffold_missing,
        scaffold_rpc,
        scaffold_services,
    )
    from engine.project import Project

    before = tree(authored)
    code, doc, err = fw("scaffold", "entity", "invoice", "--dry-run", cwd=authored)
    assert code == 0, err
    assert doc["dry_run"] is True
    listed = {"entity": {f["path"] for f in doc["files"]}}
    project = Project(authored)
    runs = {
        "service": lambda: scaffold_services(project, ["billing", "audit"], dry_run=True),
        "rpc": lambda: scaffold_rpc(project, "order", "Refund", stream="server", dry_run=True),
        "handler-file": lambda: scaffold_handler_file(project, "order", "pricing", dry_run=True),
        "binary": lambda: scaffold_binary(project, "migrator", dry_run=True),
    }
    for what, call in runs.items():
        result = call()
        assert result.dry_run is True, what
        listed[what] = {f["path"] for f in result.files}
    expected = {
        "entity": {"proto/order/v1/order.proto", "internal/entities/invoice.go",
                   "internal/handlers/order/rpc_create_invoice.go"},
        "service": {"proto/billing/v1/billing.proto", "framework.yaml", "internal/handlers/audit/rpc_ping.go"},
        "rpc": {"internal/handlers/order/rpc_refund.go"},
        "handler-file": {"internal/handlers/order/pricing.go"},
        "binary": {"cmd/migrator/main.go", "framework.yaml"},
    }
    for what, paths in expected.items():
        assert paths <= listed[what], (what, listed[what])
        migrations = [p for p in listed[what] if p.startswith("db/migrations/")]
        assert bool(migrations) == (what == "entity"), what
        assert tree(authored) == before, what
    assert scaffold_missing(project, dry_run=True).files == []  # nothing missing: a no-op
    assert generate(project, dry_run=True, full=True).changed == []
    assert tree(authored) == before


def test_scaffold_births_entities_and_their_table_applies_on_postgresql(project_copy: Path, pg_url: str) -> None:
    """`scaffold` (no noun) and `scaffold entity` (docs/reference-authoring.md#commands): a framework:entity
    message with no table gets the CRUD quintet injected once and an owned create-table migration, then generation; the
    migration applies on PostgreSQL (golang-migrate-compatible runner); a second run is a no-op."""
    proto = project_copy / "proto/order/v1/order.proto"
    proto.write_text(proto.read_text() + "\n// framework:entity\nmessage Customer {\n  int64 id = 1;\n"
                     "  string email = 2;\n  bool vip = 3;\n  repeated string tags = 4;\n}\n")
    code, doc, err = fw("scaffold", "--service", "billing", cwd=project_copy)
    assert code == 0 and doc["born"] == [] and doc["files"] == [], err  # --service: only that service's
    code, doc, err = fw("scaffold", "--service", "order", cwd=project_copy)
    assert code == 0, err
    assert doc["born"] == ["order.v1.Customer"]
    text = proto.read_text()
    for rpc in ("CreateCustomer", "GetCustomer", "ListCustomers", "UpdateCustomer", "DeleteCustomer"):
        assert text.count(f"rpc {rpc}(") == 1, rpc
    migration = [f["path"] for f in doc["files"] if f["path"].endswith("_create_customers.up.sql")]
    assert len(migration) == 1
    born = {b["path"] for b in json.loads((project_copy / ".framework/scaffolded.json").read_text())["files"]}
    assert migration[0] in born and "internal/handlers/order/rpc_list_customers.go" in born
    assert (project_copy / "internal/entities/customer.go").is_file()
    code, doc, err = fw("scaffold", cwd=project_copy)
    assert code == 0 and doc["files"] == [] and doc["born"] == [], err
    code, doc, err = fw("scaffold", "entity", "invoice", cwd=project_copy)
    assert code == 0, err
    assert proto.read_text().count("rpc CreateInvoice(") == 1
    code, doc, err = fw("db", "migrate", "up", "--dsn", pg_url, cwd=project_copy)
    assert code == 0, (doc, err)
    import psycopg

    with psycopg.connect(pg_url) as conn:
        cols = dict(conn.execute("SELECT column_name, data_type FROM information_schema.columns "
                                 "WHERE table_name = 'customers'").fetchall())
        assert cols["email"] == "text" and cols["vip"] == "boolean" and cols["tags"] == "jsonb"
        conn.execute("INSERT INTO invoices (name) VALUES ('first')")
    for args in (("build", "./..."), ("vet", "./...")):
        proc = go(*args, cwd=project_copy)
        assert proc.returncode == 0, proc.stderr


def test_scaffold_service_batch_resume_and_force(project_copy: Path) -> None:
    """`scaffold service` (docs/reference-authoring.md#commands; `--resume` with `--force` is an error): one
    generation run for the batch; an existing service is refused unless --resume (skip) or --force
    (re-create); both together exit 2."""
    code, doc, err = fw("scaffold", "service", "billing", "audit", cwd=project_copy)
    assert code == 0, err
    assert doc["born"] == ["billing", "audit"]
    services = yaml.safe_load((project_copy / "framework.yaml").read_text())["services"]
    assert [s["name"] for s in services] == ["order", "billing", "audit"]
    assert "# The service listens" in (project_copy / "framework.yaml").read_text()  # the user's comments stay
    assert (project_copy / "internal/handlers/audit/rpc_ping.go").is_file()
    assert go("build", "./...", cwd=project_copy).returncode == 0
    code, doc, _ = fw("scaffold", "service", "billing", "shipping", cwd=project_copy)
    assert code == 1 and "billing exists" in doc["error"]["message"]
    assert not (project_copy / "proto/shipping").exists()
    code, doc, err = fw("scaffold", "service", "billing", "shipping", "--resume", cwd=project_copy)
    assert code == 0 and doc["born"] == ["shipping"], err
    code, out, err = fw_text("scaffold", "service", "billing", "--resume", "--force", cwd=project_copy)
    assert code == 2 and "mutually exclusive" in err
    code, out, err = fw_text("api", "curl", "Ping", cwd=project_copy)
    assert code == 2
    code, doc, _ = fw("api", "curl", "PingRequest.Ping", cwd=project_copy)
    assert code == 1 and "services:" in doc["error"].get("hint", "")


def test_scaffold_rpc_handler_file_and_binary(project_copy: Path) -> None:
    """`scaffold rpc` (docs/reference-authoring.md#commands; stub + printed proto snippet when the RPC is
    not in the proto; pb-through stub when it is), `handler-file`, `binary` (an entry under `binaries`)."""
    code, out, err = fw_text("scaffold", "rpc", "order", "Watch", "--stream", "server", cwd=project_copy)
    assert code == 0, err
    assert "rpc Watch(WatchRequest) returns (stream WatchResponse) {}" in out
    stub = project_copy / "internal/handlers/order/rpc_watch.go"
    assert "connect.ServerStream[orderv1.WatchResponse]" in stub.read_text()
    proto = project_copy / "proto/order/v1/order.proto"
    rpc = "  rpc Watch(WatchRequest) returns (stream WatchResponse) {}\n"
    text = proto.read_text().replace("service OrderService {\n", "service OrderService {\n" + rpc)
    proto.write_text(text + "\nmessage WatchRequest {\n}\n\nmessage WatchResponse {\n}\n")
    code, _, err = fw_text("generate", cwd=project_copy)
    assert code == 0, err
    (project_copy / "internal/handlers/order/rpc_ping.go").unlink()
    code, doc, err = fw("scaffold", "rpc", "order", "Ping", cwd=project_copy)
    assert code == 0 and doc["snippet"] is None, err
    assert "connect.Request[orderv1.PingRequest]" in (project_copy / "internal/handlers/order/rpc_ping.go").read_text()
    code, doc, _ = fw("scaffold", "rpc", "order", "Ping", cwd=project_copy)
    assert code == 1 and "exists" in doc["error"]["message"]
    code, doc, _ = fw("scaffold", "rpc", "order", "Ping2", "--stream", "sideways", cwd=project_copy)
    assert code == 2
    code, doc, err = fw("scaffold", "handler-file", "order", "pricing", cwd=project_copy)
    assert code == 0 and (project_copy / "internal/handlers/order/pricing.go").is_file(), err
    code, doc, err = fw("scaffold", "binary", "migrator", cwd=project_copy)
    assert code == 0, err
    binaries = yaml.safe_load((project_copy / "framework.yaml").read_text())["binaries"]
    assert {"name": "migrator", "main": "./cmd/migrator"} in binaries
    code, doc, _ = fw("scaffold", "binary", "migrator", cwd=project_copy)
    assert code == 1
    for args in (("build", "./..."), ("vet", "./..."), ("test", "./internal/handlers/...")):
        proc = go(*args, cwd=project_copy)
        assert proc.returncode == 0, (args, proc.stdout, proc.stderr)
    code, doc, err = fw("build", cwd=project_copy)
    assert code == 0, err
    assert sorted(b["workload"] for b in doc["builds"]) == ["migrator", "shop"]
    assert (project_copy / "bin/migrator").is_file()
    # `build <env>`: the environment's workloads, the same dispatch as `env build` (go: main ./cmd/shop).
    (project_copy / "bin/shop").unlink()
    code, doc, err = fw("build", "dev", cwd=project_copy)
    assert code == 0, err
    assert [(b["workload"], b["type"], b["status"]) for b in doc["builds"]] == [("shop", "go", "built")]
    assert doc["pushed"] is False and doc["release"] is None  # never publishes
    assert (project_copy / "bin/shop").is_file()
    code, doc, _ = fw("generate", cwd=project_copy.parent)
    assert code == 1 and doc["error"]["code"] == "project_not_found"
