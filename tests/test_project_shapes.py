"""`framework project shapes`, `project graph` and `project delete service` (docs/reference-project.md) on the
session's generated project (`project new shop --service order`), copied once per purpose: one copy gets
hand-written shapes, one a worker, a frontend and a dangling workload, one a second service to delete."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.authoring_fixtures import fw, fw_text, go, go_caches, go_trimpath  # noqa: F401
from tests.lint_fixtures import lint_cache, lint_env  # noqa: F401

# -trimpath: the copies of the generated project share the machine's Go build cache (tests/authoring_fixtures.py).
pytestmark = pytest.mark.usefixtures("go_trimpath")

PROTO = "proto/order/v1/order.proto"


@pytest.fixture(autouse=True)
def shapes_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """One per-file source cache per worker (the suite gives each test its own HOME)."""
    path = tmp_path_factory.getbasetemp() / "shapes-xdg"
    path.mkdir(exist_ok=True)
    monkeypatch.setenv("XDG_CACHE_HOME", str(path))


def _insert(path: Path, after: str, text: str) -> int:
    """Insert `text` on the line after the first line holding `after`; returns the new line's number."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if after in line) + 1
    lines.insert(at, text)
    path.write_text("".join(lines), encoding="utf-8")
    return at + 1


@pytest.fixture(scope="module")
def shaped(authored: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int]]:
    """A copy with an RPC added by hand (not generated), a hand-written migration, handler and webhook hook."""
    root = Path(shutil.copytree(authored, tmp_path_factory.mktemp("shaped") / "shop", symlinks=True))
    lines = {"rpc": _insert(root / PROTO, "rpc GetOrder(", "  rpc RefundOrder(GetOrderRequest) returns "
                                                           "(GetOrderResponse) {}\n")}
    (root / "db/migrations/20990101000000_create_refunds.up.sql").write_text(
        "-- refunds of orders\n\nCREATE TABLE refunds (\n  id bigserial PRIMARY KEY,\n  amount bigint NOT NULL\n);\n")
    lines["table"] = 3
    (root / "internal/handlers/order/refund.go").write_text(
        "package order\n\nimport \"context\"\n\n// Audit is a helper of the handler.\n"
        "func (h *Handler) Audit(ctx context.Context) error {\n\treturn nil\n}\n")
    lines["handler"] = 6
    (root / "internal/webhooks/stripe").mkdir(parents=True)
    (root / "internal/webhooks/stripe/handle.go").write_text(
        "package stripe\n\nimport \"context\"\n\ntype Delivery struct{ ID string }\n\n"
        "func Handle(ctx context.Context, d Delivery) error {\n\treturn nil\n}\n")
    lines["hook"] = 7
    return root, lines


def _find(shapes: list[dict], kind: str, name: str) -> dict:
    hits = [s for s in shapes if s["kind"] == kind and s["name"] == name]
    assert len(hits) == 1, f"{kind} {name} not found once in {[(s['kind'], s['name']) for s in shapes]}"
    return hits[0]


def test_shapes_finds_hand_written_rpc_table_handler_and_hook_at_their_lines(shaped: tuple[Path, dict]) -> None:
    """docs/reference-project.md#project-shapes: an RPC added by hand to a proto (generate not run: the descriptor
    cache is stale), a table from a migration, a handler func and a hook, each at its exact file and line."""
    root, lines = shaped
    code, doc, err = fw("project", "shapes", cwd=root)
    assert code == 0, err
    shapes = doc["shapes"]
    rpc = _find(shapes, "rpc", "order.v1.OrderService.RefundOrder")
    assert (rpc["file"], rpc["line"]) == (PROTO, lines["rpc"])
    assert rpc["detail"].startswith("/order.v1.OrderService/RefundOrder")
    table = _find(shapes, "table", "refunds")
    assert (table["file"], table["line"]) == ("db/migrations/20990101000000_create_refunds.up.sql", lines["table"])
    assert table["detail"] == "2 columns"
    handler = _find(shapes, "handler", "order.Audit")
    assert (handler["file"], handler["line"]) == ("internal/handlers/order/refund.go", lines["handler"])
    get = _find(shapes, "handler", "order.GetOrder")
    assert get["detail"] == "/order.v1.OrderService/GetOrder" and get["file"].endswith("rpc_get_order.go")
    hook = _find(shapes, "hook", "stripe.Handle")
    assert (hook["file"], hook["line"]) == ("internal/webhooks/stripe/handle.go", lines["hook"])
    entity = _find(shapes, "message", "order.v1.Order")
    assert entity["detail"].startswith("entity") and entity["file"] == PROTO
    assert not [s for s in shapes if s["file"].endswith("framework/v1/options.proto")]


def test_shapes_filters_by_kind_and_grep_and_rereads_only_a_changed_file(shaped: tuple[Path, dict]) -> None:
    """docs/reference-project.md#project-shapes: --kind keeps the listed kinds, --grep searches name and detail;
    the per-file cache re-reads a changed file only (its new line shows) and keeps the others' entries."""
    from engine.inspection.shapes import project_shapes
    from engine.inspection.sources import SourceCache
    from engine.project import Project

    root, _ = shaped
    project = Project(root)
    only = project_shapes(project, kinds=["rpc,table"])
    assert {s.kind for s in only.shapes} == {"rpc", "table"} and only.kinds == ["rpc", "table"]
    grepped = project_shapes(project, grep="Refund|refund")
    assert {(s.kind, s.name) for s in grepped.shapes} == {("rpc", "order.v1.OrderService.RefundOrder"),
                                                           ("table", "refunds")}
    by_detail = project_shapes(project, kinds=["handler"], grep="/order.v1.OrderService/Ping$")
    assert [s.name for s in by_detail.shapes] == ["order.Ping"]
    before = SourceCache(root).data["files"]
    refund = root / "internal/handlers/order/refund.go"
    refund.write_text(refund.read_text().replace("// Audit is", "// (moved)\n// Audit is"))
    moved = project_shapes(project, kinds=["handler"], grep="Audit")
    assert [s.line for s in moved.shapes] == [7]
    after = SourceCache(root).data["files"]
    assert after["internal/handlers/order/refund.go"]["hash"] != before["internal/handlers/order/refund.go"]["hash"]
    untouched = "internal/handlers/order/rpc_get_order.go"
    assert after[untouched] == before[untouched]


def test_shapes_bad_regex_and_kind_are_usage_errors(shaped: tuple[Path, dict]) -> None:
    """docs/reference-project.md#project-shapes: a bad --grep or --kind exits 2 with a clear message, no traceback."""
    root, _ = shaped
    code, doc, err = fw("project", "shapes", "--grep", "Order(", cwd=root)
    assert code == 2 and doc["error"]["code"] == "usage", err
    assert "not a valid regular expression" in doc["error"]["message"] and "Traceback" not in err
    code, doc, err = fw("project", "shapes", "--kind", "rpc,widget", cwd=root)
    assert code == 2 and "widget" in doc["error"]["message"] and "rpc, message, enum" in doc["error"]["hint"]


def test_shapes_answers_the_same_with_or_without_typer(shaped: tuple[Path, dict]) -> None:
    """docs/reference-project.md#project-shapes: a well-formed `project shapes` skips Typer (bench/project.py);
    the same request in a form only Typer parses (`--kind=rpc`) answers the same document and text."""
    root, _ = shaped
    fast = fw("project", "shapes", "--kind", "rpc", "--grep", "Order", cwd=root)
    typer_path = fw("project", "shapes", "--kind=rpc", "--grep=Order", cwd=root)
    assert fast[0] == 0 and fast[:2] == typer_path[:2] and fast[1]["shapes"], (fast, typer_path)
    text = [fw_text("project", "shapes", *args, cwd=root) for args in (("--kind", "rpc"), ("--kind=rpc",))]
    assert text[0][0] == 0 and text[0] == text[1] and ": rpc " in text[0][1]


@pytest.fixture(scope="module")
def wired(authored: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy with a worker and a webhook of the order service (the scaffolds), a web frontend whose page calls
    the order client, and a dev workload that names nothing of the project; an entity with no table. The scaffolds
    in-process (their commands are tested in tests/test_authoring_workloads.py)."""
    from engine.authoring.scaffold_workloads import scaffold_webhook, scaffold_worker
    from engine.project import Project

    root = Path(shutil.copytree(authored, tmp_path_factory.mktemp("wired") / "shop", symlinks=True))
    scaffold_worker(Project(root), "mailer")
    scaffold_webhook(Project(root), "stripe", service="order")
    with (root / "framework.yaml").open("a") as f:
        f.write("frontends:\n  - name: web\n    kind: web\n    dir: web\n    port: 3000\n")
    (root / "web/src/app").mkdir(parents=True)
    (root / "web/src/app/page.tsx").write_text(
        'import { orderClient } from "../gen/framework/clients";\n\n'
        "export default async function Page() {\n  return (await orderClient().ping({})).message;\n}\n")
    (root / "internal/handlers/order/core.go").write_text(
        'package order\n\nimport "example.com/shop/internal/ordercore"\n\nvar _ ordercore.Contract\n')
    with (root / PROTO).open("a") as f:
        f.write("\n// framework:entity\nmessage Refund {\n  int64 id = 1;\n}\n")
    kcl = root / "deploy/kcl/dev/main.k"
    kcl.write_text(kcl.read_text().replace("    workloads = [\n", '    workloads = [\n        framework.Workload {\n'
                                           '            name = "ghost"\n            run = ["bin/ghost"]\n'
                                           "        }\n", 1))
    return root


def test_graph_shows_frontend_worker_and_environment_edges_and_warns_of_dangling(wired: Path) -> None:
    """docs/reference-project.md#project-graph: a frontend calling a service's client and a worker workload are
    edges; a workload naming nothing of the project and an entity without a table are warnings (exit 0); an
    unknown --env is exit 1."""
    code, doc, err = fw("project", "graph", "--env", "dev", cwd=wired)
    assert code == 0, err
    edges = {(e["source"], e["target"]) for e in doc["edges"]}
    assert ("frontend:web", "service:order") in edges
    assert ("environment:dev", "workload:dev/mailer") in edges
    assert ("workload:dev/mailer", "worker:mailer") in edges
    assert ("workload:dev/shop", "service:order") in edges
    assert ("service:order", "entity:order.v1.Order") in edges
    assert ("webhook:stripe", "service:order") in edges
    assert ("service:order", "package:ordercore") in edges
    kinds = {n["kind"] for n in doc["nodes"]}
    assert {"service", "package", "entity", "frontend", "worker", "workload", "environment"} <= kinds
    assert any("ghost" in w for w in doc["warnings"]), doc["warnings"]
    assert any("entity order.v1.Refund has no table" in w for w in doc["warnings"]), doc["warnings"]
    code, doc, err = fw("project", "graph", "--env", "nope", cwd=wired)
    assert code == 1 and doc["error"]["code"] == "environment_not_found" and "dev" in doc["error"]["hint"]


def test_delete_service_refused_while_a_frontend_calls_it(wired: Path) -> None:
    """docs/reference-project.md#project-delete-service: refused (exit 1) naming the frontend calling its client
    and the webhook of it; nothing written."""
    from tests.authoring_fixtures import tree

    before = tree(wired)
    code, doc, err = fw("project", "delete", "service", "order", cwd=wired)
    assert code == 1, err
    message = doc["error"]["message"]
    assert "still depended on" in message and "frontend:web" in message and "webhook:stripe" in message
    assert tree(wired) == before


def test_delete_service_refused_then_done_and_the_project_still_builds(authored: Path, tmp_path: Path) -> None:
    """docs/reference-project.md#project-delete-service: refused while another service imports its client;
    then the handler scaffold, framework.yaml entry, dev KCL workload and birth records go, the proto keeps its
    messages (the tombstone), and `go build ./...` passes."""
    from engine.authoring.scaffold import scaffold_services
    from engine.errors import InvalidInput
    from engine.inspection.delete import delete_service
    from engine.inspection.shapes import project_shapes
    from engine.project import Project

    root = Path(shutil.copytree(authored, tmp_path / "shop", symlinks=True))
    assert scaffold_services(Project(root), ["billing"]).born == ["billing"]
    caller = root / "internal/handlers/order/billing_client.go"
    caller.write_text('package order\n\nimport billingv1connect "example.com/shop/gen/billing/v1/billingv1connect"\n\n'
                      "var _ = billingv1connect.NewBillingServiceClient\n")
    with pytest.raises(InvalidInput, match="service:order"):
        delete_service(Project(root), "billing")
    caller.unlink()
    from engine.authoring.workloads import DEV_KCL, add_dev_workload

    assert add_dev_workload(root, "billing") is None
    dry = delete_service(Project(root), "billing", dry_run=True)
    assert {"path": "internal/handlers/billing/rpc_ping.go", "change": "removed"} in dry.files
    assert (root / "internal/handlers/billing/rpc_ping.go").is_file()
    code, doc, err = fw("project", "delete", "service", "billing", cwd=root)
    assert code == 0, err
    assert not (root / "internal/handlers/billing").exists()
    assert not (root / "gen/billing/v1/billingv1connect").exists()
    proto = (root / "proto/billing/v1/billing.proto").read_text()
    assert "service BillingService {" not in proto and "message PingRequest" in proto and "tombstone" in proto
    assert "billing" not in (root / "framework.yaml").read_text()
    assert "billing" not in (root / DEV_KCL).read_text() and "shop" in (root / DEV_KCL).read_text()
    births = json.loads((root / ".framework/scaffolded.json").read_text())["files"]
    assert not [b for b in births if b["path"].startswith("internal/handlers/billing/")]
    code, doc, err = fw("project", "scaffolded", "--absent", cwd=root)
    assert code == 0 and doc["files"] == [], doc
    shapes = project_shapes(Project(root), grep="billing")
    assert {s.kind for s in shapes.shapes} == {"message"}
    built = go("build", "./...", cwd=root)
    assert built.returncode == 0, built.stderr
    code, doc, err = fw("generate", cwd=root)
    assert code == 0 and doc["changed"] == [], doc
