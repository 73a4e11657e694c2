"""A generated project builds, vets, passes its own tests and serves a real Connect call
(`project new`, `generate`, `api curl`: docs/reference-authoring.md#commands; default port 8080:
docs/reference-authoring.md#walk-through-from-project-new-to-a-served-rpc)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from engine import __version__
from tests.authoring_fixtures import (
    authored,
    fw,
    fw_text,
    go,
    go_caches,
    go_trimpath,
    project_copy,
    served,
    tree,
    wait_http,
)
from tests.deploy_fixtures import free_port

# -trimpath: the copies of the generated project share the machine's Go build cache (tests/authoring_fixtures.py).
pytestmark = pytest.mark.usefixtures("go_trimpath")


def test_project_new_writes_the_project_and_records_its_births(authored: Path) -> None:
    """`project new` (docs/reference-authoring.md#commands): framework.yaml (framework_version pinned to
    ours), protos, migrations dir, deploy/kcl/dev, README; scaffold-once files recorded in
    .framework/scaffolded.json at birth."""
    config = yaml.safe_load((authored / "framework.yaml").read_text())
    assert config["framework_version"] == __version__
    assert config["module"] == "example.com/shop" and config["kind"] == "service"
    assert [s["name"] for s in config["services"]] == ["order"]
    assert config["binaries"] == [{"name": "shop", "main": "./cmd/shop"}]
    for rel in ("proto/order/v1/order.proto", "db/migrations/README.md", "deploy/kcl/dev/main.k", "README.md",
                "buf.yaml", "buf.gen.yaml", "go.mod", "go.sum", "gen/framework_descriptor.json"):
        assert (authored / rel).is_file(), rel
    born = {b["path"] for b in json.loads((authored / ".framework/scaffolded.json").read_text())["files"]}
    assert {"framework.yaml", "proto/order/v1/order.proto", "internal/handlers/order/rpc_ping.go",
            "internal/handlers/order/rpc_get_order.go", "README.md"} <= born
    # Generated files are not scaffold-once.
    assert "internal/bootstrap/bootstrap.go" not in born and "gen/order/v1/order.pb.go" not in born


def test_generated_project_builds_vets_and_passes_its_own_tests(authored: Path) -> None:
    """docs/reference-authoring.md#walk-through-from-project-new-to-a-served-rpc: a generated project builds
    with go build ./..., passes go vet and its own generated tests (handler routing, port resolution PORT >
    config `port` > 8080, /healthz)."""
    for args in (("build", "./..."), ("vet", "./..."), ("test", "-count=1", "-v", "./...")):  # one test binary link
        proc = go(*args, cwd=authored)
        assert proc.returncode == 0, f"go {' '.join(args)}:\n{proc.stdout}\n{proc.stderr}"
    assert "--- PASS: TestEveryUnaryRPCHasAHandler" in proc.stdout and "--- PASS: TestPort" in proc.stdout


def test_generate_twice_changes_nothing_byte_for_byte(project_copy: Path) -> None:
    """`generate` is idempotent (docs/reference-authoring.md#speed): a second run (even a full one that
    compiles again) changes nothing."""
    before = tree(project_copy)
    code, doc, err = fw("generate", cwd=project_copy)
    assert code == 0, err
    assert doc["up_to_date"] is True
    code, doc, err = fw("generate", "--full", cwd=project_copy)
    assert code == 0, err
    assert doc["changed"] == [] and doc["up_to_date"] is False
    assert tree(project_copy) == before


def test_served_rpc_answers_the_exact_command_api_curl_prints(project_copy: Path, served: list) -> None:
    """docs/reference-authoring.md#walk-through-from-project-new-to-a-served-rpc: generate, build, start the
    service, call one RPC with the exact command `api curl` printed (run with curl) and get a real answer; a
    user's edit to a scaffold-once handler survives `generate`; the service listens on env PORT."""
    stub = project_copy / "internal/handlers/order/rpc_ping.go"
    text = stub.read_text()
    assert "connect.NewResponse(&orderv1.PingResponse{})" in text
    edited = text.replace("connect.NewResponse(&orderv1.PingResponse{})",
                          'connect.NewResponse(&orderv1.PingResponse{Message: "pong: " + req.Msg.GetMessage()})')
    stub.write_text(edited)
    # A proto change forces a real regeneration; the user's handler stays as they wrote it.
    proto = project_copy / "proto/order/v1/order.proto"
    proto.write_text(proto.read_text().replace("string message = 1;\n}\n\nmessage PingResponse",
                                               "string message = 1;\n  int64 count = 2;\n}\n\nmessage PingResponse"))
    code, doc, err = fw("generate", cwd=project_copy)
    assert code == 0, err
    assert "gen/order/v1/order.pb.go" in doc["changed"]
    assert stub.read_text() == edited
    code, out, err = fw_text("build", cwd=project_copy)
    assert code == 0, err
    port = free_port()
    served.append(subprocess.Popen([str(project_copy / "bin/shop")], cwd=project_copy,
                                   env={"PORT": str(port), "PATH": "/usr/bin:/bin"},
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    wait_http(f"http://127.0.0.1:{port}/healthz")
    code, out, err = fw_text("api", "curl", "OrderService.Ping", "--port", str(port), "--body",
                             '{"message":"hi"}', cwd=project_copy)
    assert code == 0, err
    command = out.strip()
    assert command.startswith("curl ") and "-X POST" in command and "Content-Type: application/json" in command
    assert f"http://127.0.0.1:{port}/order.v1.OrderService/Ping" in command
    answer = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=30)
    assert answer.returncode == 0, answer.stderr
    assert json.loads(answer.stdout) == {"message": "pong: hi"}
    # The zero-value body from the descriptor: proto3 JSON (int64 as a string).
    code, doc, err = fw("api", "curl", "order.v1.OrderService.Ping", "--port", str(port), cwd=project_copy)
    assert doc["body"] == '{"message":"","count":"0"}'
    answer = subprocess.run(["bash", "-c", doc["command"]], capture_output=True, text=True, timeout=30)
    assert json.loads(answer.stdout) == {"message": "pong: "}
