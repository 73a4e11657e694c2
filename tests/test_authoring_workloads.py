"""Workers, webhooks, packages, adapters, libraries (docs/reference-authoring.md#workers-and-webhooks,
docs/reference-authoring.md#packages-adapters-and-libraries): one project carries every scaffold, and
its `go build`, `go vet` and `go test` pass with the real toolchain (the PostgreSQL event bus against a
real server); the worker runs under `env up dev`; `project rescaffold` re-creates every scaffold-once
file; `--dry-run` and a failing scaffold leave the checkout untouched."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.authoring_fixtures import _GO_ENV, fw, fw_text, git, go, go_caches, go_trimpath, goflags, tree
from tests.devstack_fixtures import free_base, healthz, stacks_cleanup
from tests.pg_fixtures import pg_server, pg_url

# -trimpath: the copies of the generated project share the machine's Go build cache (tests/authoring_fixtures.py).
pytestmark = pytest.mark.usefixtures("go_trimpath")

__all__ = ["go_caches", "pg_server", "pg_url", "stacks_cleanup"]

# One real CLI run per command; the rest in-process (the rule under test is the scaffold, not the CLI).
SCAFFOLDS = [
    ("scaffold", "worker", "mailer"),
    ("scaffold", "webhook", "gh", "--service", "order", "--sender", "github"),
    ("scaffold", "package", "pricing"),
    ("scaffold", "adapter", "payments"),
    ("package", "new", "bus", "--kind", "eventbus"),
    ("scaffold", "library", "textutil"),
]


@pytest.fixture(scope="module")
def workloads(authored: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A copy of the session's project with every scaffold of this file run through the real CLI."""
    for key, value in _GO_ENV.items():
        os.environ.setdefault(key, value)
    root = Path(shutil.copytree(authored, tmp_path_factory.mktemp("workloads") / "shop", symlinks=True))
    for args in SCAFFOLDS:
        code, doc, err = fw(*args, cwd=root)
        assert code == 0 and doc["ok"], (args, doc, err)
    from engine.authoring.packages import scaffold_library
    from engine.authoring.scaffold import scaffold_handler_file
    from engine.authoring.scaffold_workloads import scaffold_webhook
    from engine.project import Project

    project = Project(root)
    for hook, sender in (("shop_orders", "shopify"), ("legacy", "github-legacy"), ("plain", "generic")):
        scaffold_webhook(project, hook, service="order", sender=sender)  # every sender preset builds and passes
    scaffold_library(project, "slugs", path="pkg/slugs", no_exclude=True)
    scaffold_handler_file(project, "order", "pricing")
    yield root


def test_every_scaffold_builds_vets_and_passes_its_tests(workloads: Path, pg_url: str) -> None:
    """Each scaffold's output builds, vets and passes its own generated tests
    (docs/reference-authoring.md#workers-and-webhooks); the PostgreSQL event bus's test really runs against a
    PostgreSQL server (its DSN in EVENTBUS_TEST_DATABASE_URL), the webhook's test posts a delivery signed
    by the platform's signer and a forged one."""
    for step in (("build", "./..."), ("vet", "./...")):
        proc = go(*step, cwd=workloads)
        assert proc.returncode == 0, (step, proc.stderr)
    env = {**os.environ, **_GO_ENV, "GOFLAGS": goflags(), "EVENTBUS_TEST_DATABASE_URL": pg_url}
    proc = subprocess.run(["go", "test", "-count=1", "-vet=off", "-v", "./..."], cwd=workloads, capture_output=True,
                          text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    for test in ("TestPostgresBus", "TestMemoryBus", "TestSignedForgedAndDuplicate", "TestRefusals",
                 "TestRunStopsOnShutdown", "TestRunWorkerReturnsItsError", "TestWorkerHealthz", "TestLookup",
                 "TestLookupOverHTTP", "TestSlug"):
        assert f"--- PASS: {test} " in proc.stdout, test
    assert "--- SKIP" not in proc.stdout


def test_scaffolds_wire_the_project(workloads: Path) -> None:
    """What each scaffold writes (docs/reference-authoring.md#workers-and-webhooks): framework.yaml entries,
    the dev environment's workload, the bootstrap's webhook routes, the contracts' mocks, the library's
    `contracts.exclude`; the user's files are recorded in the birth ledger with the scaffold's arguments."""
    cfg = yaml.safe_load((workloads / "framework.yaml").read_text())
    assert cfg["workers"] == [{"name": "mailer", "main": "./cmd/mailer"}]
    assert {"name": "mailer", "main": "./cmd/mailer"} in cfg["binaries"]
    assert cfg["webhooks"] == [{"name": "gh", "service": "order", "sender": "github"},
                               {"name": "shop_orders", "service": "order", "sender": "shopify"},
                               {"name": "legacy", "service": "order", "sender": "github-legacy"},
                               {"name": "plain", "service": "order", "sender": "generic"}]
    assert cfg["contracts"] == {"exclude": ["internal/textutil"]}
    dev = (workloads / "deploy/kcl/dev/main.k").read_text()
    assert 'name = "mailer"' in dev and "port = 8081" in dev and 'main = "./cmd/mailer"' in dev
    boot = (workloads / "internal/bootstrap/bootstrap.go").read_text()
    assert 'mux.Handle("POST /webhooks/order/gh", gh.New())' in boot
    assert 'mux.Handle("POST /webhooks/order/shop_orders", shoporders.New())' in boot
    hook = (workloads / "internal/webhooks/gh/webhook.go").read_text()
    assert 'SignatureHeader = "X-Hub-Signature-256"' in hook and 'SignaturePrefix = "sha256="' in hook
    assert '"X-GitHub-Delivery", "Idempotency-Key"' in hook
    assert '"crypto/sha1"' in (workloads / "internal/webhooks/legacy/webhook.go").read_text()
    shopify = (workloads / "internal/webhooks/shop_orders/webhook.go").read_text()
    assert "base64.StdEncoding.DecodeString" in shopify and '"X-Shopify-Hmac-Sha256"' in shopify
    for mock in ("pricing/pricingmock", "payments/paymentsmock", "bus/busmock"):
        assert (workloads / "internal" / mock / "mock.go").is_file(), mock
    assert "type Bus struct" in (workloads / "internal/bus/busmock/mock.go").read_text()
    assert "github.com/jackc/pgx/v5 v5.7.5" in (workloads / "go.mod").read_text()
    assert "framework:outbound-io" in (workloads / "internal/payments/service.go").read_text()
    assert not (workloads / "pkg/slugs/contract.go").exists()
    births = {b["path"]: b for b in json.loads((workloads / ".framework/scaffolded.json").read_text())["files"]}
    assert births["internal/workers/mailer/worker.go"]["args"] == {"name": "mailer"}
    assert births["internal/bus/postgres.go"]["by"] == "scaffold package"
    assert births["internal/bus/postgres.go"]["args"] == {"name": "bus", "type": "adapter", "kind": "eventbus"}
    assert births["pkg/slugs/slugs.go"]["args"] == {"name": "slugs", "path": "pkg/slugs"}
    # generated, not born: rewritten by every generate
    for generated in ("cmd/mailer/main.go", "internal/webhooks/gh/webhook.go", "internal/bootstrap/worker.go"):
        assert generated not in births and "framework:hash" in (workloads / generated).read_text()


def test_rescaffold_recreates_every_scaffold_once_file(workloads: Path) -> None:
    """`project rescaffold` (docs/reference-authoring.md#ownership) re-creates every deleted scaffold-once file
    of these scaffolds, `scaffold handler-file`'s included, byte for byte as the scaffold wrote it."""
    from engine.authoring import ownership
    from engine.authoring.records import rescaffold
    from engine.project import Project

    mine = [b.path for b in ownership.scaffolded(workloads) if b.by not in ("project new", "generate",
                                                                            "scaffold entity")]
    assert len(mine) == 23 and "internal/handlers/order/pricing.go" in mine, mine
    before = {p: (workloads / p).read_bytes() for p in mine}
    for path in mine:
        (workloads / path).unlink()
    code, doc, err = fw("project", "rescaffold", "internal/handlers/order/pricing.go", cwd=workloads)
    assert code == 0 and doc["paths"] == ["internal/handlers/order/pricing.go"], (doc, err)
    rescaffold(Project(workloads), [p for p in mine if p != "internal/handlers/order/pricing.go"])
    assert {p: (workloads / p).read_bytes() for p in mine} == before
    # A handler file born before the ledger recorded arguments is re-created from its path.
    ledger = workloads / ".framework/scaffolded.json"
    recorded = ledger.read_text()
    data = json.loads(recorded)
    for item in data["files"]:
        item.pop("args", None)
    ledger.write_text(json.dumps(data))
    try:
        (workloads / "internal/handlers/order/pricing.go").unlink()
        rescaffold(Project(workloads), ["internal/handlers/order/pricing.go"])
        assert (workloads / "internal/handlers/order/pricing.go").read_bytes() == before[
            "internal/handlers/order/pricing.go"]
    finally:
        ledger.write_text(recorded)


def test_dry_run_and_failure_leave_the_checkout_untouched(authored: Path, tmp_path: Path) -> None:
    """`--dry-run` on each scaffold lists the files it would write and changes nothing; a scaffold that fails
    half-way (its generate cannot compile the protos) leaves the checkout as it was
    (docs/reference-authoring.md#commands)."""
    from engine.authoring.packages import scaffold_library, scaffold_package
    from engine.authoring.scaffold_workloads import scaffold_webhook, scaffold_worker
    from engine.errors import EngineError
    from engine.project import Project

    root = Path(shutil.copytree(authored, tmp_path / "shop", symlinks=True))
    project = Project(root)
    before = tree(root)
    runs = {
        "worker": (lambda: scaffold_worker(project, "mailer", dry_run=True),
                   {"internal/workers/mailer/worker.go", "cmd/mailer/main.go", "deploy/kcl/dev/main.k"}),
        "worker --no-generate": (lambda: scaffold_worker(project, "mailer", no_generate=True, dry_run=True),
                                 {"internal/workers/mailer/worker.go", "framework.yaml"}),
        "webhook": (lambda: scaffold_webhook(project, "gh", service="order", dry_run=True),
                    {"internal/webhooks/gh/handle.go", "internal/webhooks/gh/webhook.go"}),
        "package": (lambda: scaffold_package(project, "pricing", dry_run=True),
                    {"internal/pricing/contract.go", "internal/pricing/pricingmock/mock.go"}),
        "library": (lambda: scaffold_library(project, "textutil", dry_run=True),
                    {"internal/textutil/textutil.go", "framework.yaml"}),
    }
    for what, (call, expected) in runs.items():
        result = call()
        listed = {f["path"] for f in result.files}
        assert result.dry_run and expected <= listed, (what, listed)
        assert tree(root) == before, what
    assert "cmd/mailer/main.go" not in {f["path"] for f in scaffold_worker(project, "m2", no_generate=True,
                                                                          dry_run=True).files}
    proto = root / "proto/order/v1/order.proto"
    proto.write_text(proto.read_text() + "\nthis is not proto\n")
    broken = tree(root)
    for call in (lambda: scaffold_worker(project, "mailer"), lambda: scaffold_package(project, "pricing")):
        with pytest.raises(EngineError):
            call()
        assert tree(root) == broken


def test_bad_input_is_refused_cleanly(authored: Path) -> None:
    """Bad input (docs/reference-authoring.md#workers-and-webhooks): `scaffold webhook` without `--service` or
    with an unknown sender is bad usage (exit 2); an unknown service, or a worker whose name is taken,
    is refused (exit 1); nothing is written."""
    from engine.authoring.packages import scaffold_library, scaffold_package
    from engine.authoring.scaffold_workloads import scaffold_webhook, scaffold_worker
    from engine.errors import InvalidInput, UsageError
    from engine.project import Project

    before = tree(authored)
    code, doc, _ = fw("scaffold", "webhook", "gh", cwd=authored)
    assert code == 2 and "--service" in doc["error"]["message"]
    code, out, err = fw_text("scaffold", "library", "x", "--path", "../outside", cwd=authored)
    assert code == 2 and "--path" in err and "Traceback" not in err
    project = Project(authored)
    refused = {
        UsageError: [lambda: scaffold_webhook(project, "gh", service="order", sender="gitlab"),
                     lambda: scaffold_package(project, "bus", type_="service", kind="eventbus"),
                     lambda: scaffold_worker(project, "http"),
                     lambda: scaffold_library(project, "x", path="gen/x"),
                     lambda: scaffold_library(project, "x", path="/abs/x"),
                     lambda: scaffold_library(project, "x", path="a b/x")],
        InvalidInput: [lambda: scaffold_webhook(project, "gh", service="nope"),
                       lambda: scaffold_worker(project, "shop")],
    }
    for error, calls in refused.items():
        for call in calls:
            with pytest.raises(error) as caught:
                call()
            assert caught.value.message, error
    assert tree(authored) == before


def test_worker_runs_under_env_up_dev(workloads: Path, tmp_path: Path, stacks_cleanup: list) -> None:
    """The worker is a workload of the dev environment (docs/reference-authoring.md#workers-and-webhooks):
    `env up dev` builds and starts it beside the service, its health check passes, and `env ps` shows it."""
    root = Path(shutil.copytree(workloads, tmp_path / "shop", symlinks=True))
    base = free_base()
    dev = root / "deploy/kcl/dev/main.k"
    dev.write_text(dev.read_text().replace("port = 8080", f"port = {base}").replace("port = 8081",
                                                                                    f"port = {base + 1}"))
    (root / ".gitignore").write_text("/bin/\n.framework/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "new")
    code, doc, err = fw("env", "up", "dev", cwd=root)
    assert code == 0, (doc, err)
    assert {p["name"]: p["ports"] for p in doc["processes"]} == {"shop": [base], "mailer": [base + 1]}
    assert healthz(base + 1)
    code, ps, err = fw("env", "ps", cwd=root)
    assert code == 0, err
    stack = next(s for s in ps["stacks"] if Path(s["project_root"]).resolve() == root.resolve())
    assert stack["status"] == "running", stack
    mailer = next(p for p in stack["processes"] if p["name"] == "mailer")
    assert mailer["alive"] and mailer["kind"] == "workload" and mailer["ports"] == [base + 1], mailer


def test_sender_presets_sign_as_the_platform_verifies() -> None:
    """The webhook scaffold's sender presets are the platform's (docs/reference-webhooks.md#endpoints, HMAC):
    every preset is a valid trigger `webhook.hmac`, a value it signs is accepted by the platform's verifier
    and one signed with another secret is not, its signature header is one the platform strips from stored
    payloads, and the `generic` row is the trigger's default configuration."""
    from engine.hooks.models import HmacConfig
    from engine.hooks.payload import SECRET_HEADERS
    from engine.hooks.signature import sign, verify
    from engine.webhook_senders import SENDERS

    body = b'{"action":"opened"}'
    for name, sender in SENDERS.items():
        config = HmacConfig(header=sender.header, algorithm=sender.algorithm, prefix=sender.prefix,
                            encoding=sender.encoding)
        value = sender.sign(b"s3cret", body)
        assert value == sign(b"s3cret", body, config), name
        assert verify(b"s3cret", body, value, config), name
        assert not verify(b"s3cret", body, sender.sign(b"other", body), config), name
        assert sender.header.lower() in SECRET_HEADERS, name
    generic = SENDERS["generic"]
    assert HmacConfig() == HmacConfig(header=generic.header, algorithm=generic.algorithm, prefix=generic.prefix,
                                      encoding=generic.encoding)
