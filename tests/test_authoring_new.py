"""`framework project new` options and its dev stack (`project new` and project
kinds: docs/reference-authoring.md#commands; `env up` runs the generated `deploy/kcl/dev`:
docs/reference-authoring.md#walk-through-from-project-new-to-a-served-rpc)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from engine.authoring.config import FEATURES
from tests.authoring_fixtures import fw, fw_text, git, go, go_caches, go_trimpath, project_copy
from tests.devstack_fixtures import free_base, healthz, stacks_cleanup

# -trimpath: the copies of the generated project share the machine's Go build cache (tests/authoring_fixtures.py).
pytestmark = pytest.mark.usefixtures("go_trimpath")


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file()}


def test_disable_removes_each_feature_part(authored: Path, tmp_path: Path) -> None:
    """`project new --disable` (docs/reference-authoring.md#features---disable): each feature really removes
    its part (compared with the session's project, which has every feature), and the project still builds,
    vets and tests."""
    disabled = ["orm", "migrations", "ci", "build", "deploy", "contracts", "docs", "observability", "hot_reload"]
    code, doc, err = fw("project", "new", "lean", "--service", "order", "--disable", ",".join(disabled[:4]),
                        *[a for f in disabled[4:] for a in ("--disable", f)], cwd=tmp_path)
    assert code == 0, err
    assert doc["disabled"] == sorted(disabled)
    lean, full = _files(tmp_path / "lean"), _files(authored)
    parts = {"orm": "internal/entities/order.go", "migrations": "db/migrations/README.md",
             "ci": ".github/workflows/ci.yml", "deploy": "deploy/kcl/dev/main.k", "docs": "README.md",
             "observability": "internal/bootstrap/observability.go", "hot_reload": ".air.toml",
             "contracts": "internal/ordercore/contract.go"}
    for feature, part in parts.items():
        assert part in full and part not in lean, feature
    assert not [p for p in lean if p.startswith("db/migrations/")]  # no create-table migration either
    config = yaml.safe_load((tmp_path / "lean/framework.yaml").read_text())
    assert config["binaries"] == [] and {f for f, on in config["features"].items() if not on} == set(disabled)
    code, _, err = fw_text("build", cwd=tmp_path / "lean")
    assert code == 1 and "build feature is disabled" in err
    for args in (("build", "./..."), ("vet", "./..."), ("test", "./...")):
        proc = go(*args, cwd=tmp_path / "lean")
        assert proc.returncode == 0, (args, proc.stderr)


def test_codegen_disabled_and_other_kinds_build(tmp_path: Path) -> None:
    """Project kinds (service, cli, library; docs/reference-authoring.md#commands) and `--disable codegen`
    (no buf config, no protos, no gen/): each builds and vets."""
    cases = {"plain": ("--disable", "codegen"), "tool": ("--kind", "cli"), "kit": ("--kind", "library")}
    for name, args in cases.items():
        code, _, err = fw("project", "new", name, *args, cwd=tmp_path)
        assert code == 0, (name, err)
        root = tmp_path / name
        for args2 in (("build", "./..."), ("vet", "./...")):
            proc = go(*args2, cwd=root)
            assert proc.returncode == 0, (name, args2, proc.stderr)
    plain = _files(tmp_path / "plain")
    assert not {"buf.yaml", "buf.gen.yaml"} & plain and not [p for p in plain if p.startswith(("proto/", "gen/"))]
    assert "internal/bootstrap/bootstrap.go" in plain
    assert "cmd/tool/main.go" in _files(tmp_path / "tool") and "deploy/kcl/dev/main.k" not in _files(tmp_path / "tool")
    assert "kit.go" in _files(tmp_path / "kit") and not [p for p in _files(tmp_path / "kit") if p.startswith("cmd/")]


def test_new_refuses_existing_work_unless_force_or_in_place(tmp_path: Path) -> None:
    """`project new --force`, `--in-place`, `--name` (docs/reference-authoring.md#commands); bad input exits
    2 with a clear message."""
    (tmp_path / "shop").mkdir()
    (tmp_path / "shop/notes.txt").write_text("mine")
    code, doc, _ = fw("project", "new", "shop", "--disable", "codegen", cwd=tmp_path)
    assert code == 1 and "not empty" in doc["error"]["message"]
    code, _, err = fw("project", "new", "shop", "--disable", "codegen", "--in-place", "--name", "store",
                      cwd=tmp_path / "shop")
    assert code == 0, err
    assert yaml.safe_load((tmp_path / "shop/framework.yaml").read_text())["name"] == "store"
    assert (tmp_path / "shop/notes.txt").read_text() == "mine"
    code, doc, _ = fw("project", "new", "shop", "--disable", "codegen", "--in-place", cwd=tmp_path / "shop")
    assert code == 1 and "already holds a project" in doc["error"]["message"]
    code, _, err = fw("project", "new", "shop", "--disable", "codegen", "--in-place", "--force",
                      cwd=tmp_path / "shop")
    assert code == 0, err
    for bad in (("--disable", "turbo"), ("--kind", "daemon"), ("--frontend", "Web_UI"),
                ("--kind", "cli", "--frontend", "web")):
        code, _, err = fw_text("project", "new", "x", *bad, cwd=tmp_path)
        assert code == 2 and err.strip(), bad
    assert not (tmp_path / "x").exists()
    assert set(FEATURES) >= {"orm", "hot_reload"}


def test_introspect_handlers_lists_procedures_sorted(authored: Path, tmp_path: Path) -> None:
    """`project introspect handlers` (docs/reference-authoring.md#commands): /<package>.<Service>/<Method>
    per RPC, sorted; --format json;
    --proto-dir compiles another directory."""
    code, out, err = fw_text("project", "introspect", "handlers", cwd=authored)
    assert code == 0, err
    lines = out.split()
    assert lines == sorted(lines) and "/order.v1.OrderService/Ping" in lines and len(lines) == 6
    code, out, _ = fw_text("project", "introspect", "handlers", "--format", "json", cwd=authored)
    assert json.loads(out) == lines
    other = tmp_path / "protos/a/v1"
    other.mkdir(parents=True)
    (other / "a.proto").write_text('syntax = "proto3";\npackage a.v1;\nservice Z { rpc B(M) returns (M); '
                                   "rpc A(M) returns (M); }\nmessage M {}\n")
    code, out, err = fw_text("project", "introspect", "handlers", "--proto-dir", str(tmp_path / "protos"),
                             cwd=tmp_path)
    assert code == 0, err
    assert out.split() == ["/a.v1.Z/A", "/a.v1.Z/B"]


def test_env_up_runs_the_generated_dev_stack(project_copy: Path, stacks_cleanup: list) -> None:
    """docs/reference-authoring.md#walk-through-from-project-new-to-a-served-rpc: `deploy/kcl/dev` of a new
    project is something `framework env up` runs: it builds the Go binary (build type go, main
    ./cmd/<name>), starts it on the declared port (env PORT) and the health check passes; the served RPC
    answers the request `api curl` prints."""
    base = free_base()
    dev = project_copy / "deploy/kcl/dev/main.k"
    dev.write_text(dev.read_text().replace("port = 8080", f"port = {base}"))
    (project_copy / ".gitignore").write_text("/bin/\n.framework/\n")
    git(project_copy, "init", "-q", "-b", "main")
    git(project_copy, "add", "-A")
    git(project_copy, "commit", "-qm", "new")
    code, doc, err = fw("env", "up", "dev", cwd=project_copy)
    assert code == 0, (doc, err)
    assert {p["name"]: p["ports"] for p in doc["processes"]} == {"shop": [base]}
    assert healthz(base)
    code, out, err = fw_text("api", "curl", "order.GetOrder", "--port", str(base), cwd=project_copy)
    assert code == 0, err
    answer = subprocess.run(["bash", "-c", out.strip()], capture_output=True, text=True, timeout=30)
    assert answer.returncode == 0 and json.loads(answer.stdout) == {}, answer


def test_api_curl_short_forms_and_ambiguity() -> None:
    """`api curl` (docs/reference-authoring.md#commands): the short service form when unique; a clear error listing the
    candidates when not; a zero-value body from the descriptor (nested, repeated, enum, int64)."""
    from engine.authoring.curl import resolve, zero_value
    from engine.authoring.descriptor import Descriptor, Field, Message, Method, Service
    from engine.errors import InvalidInput

    desc = Descriptor(
        services=[Service(package=f"shop.{v}", name="ShopService", file=f"shop/{v}/shop.proto",
                          methods=[Method(name="Get", input="shop.v1.GetRequest", output="shop.v1.GetRequest")])
                  for v in ("v1", "v2")],
        messages=[Message(full_name="shop.v1.GetRequest", go_name="GetRequest", file="f", fields=[
            Field(name="id", json_name="id", number=1, type="int64"),
            Field(name="tags", json_name="tags", number=2, type="string", repeated=True),
            Field(name="kind", json_name="kind", number=3, type="enum", type_name="shop.v1.Kind"),
            Field(name="at", json_name="at", number=4, type="message", type_name="google.protobuf.Timestamp"),
            Field(name="next", json_name="next", number=5, type="message", type_name="shop.v1.GetRequest")])],
        enums={"shop.v1.Kind": "KIND_UNSPECIFIED"})
    svc, method = resolve(desc, "shop.v2.ShopService.Get")
    assert svc.procedure(method.name) == "/shop.v2.ShopService/Get"
    try:
        resolve(desc, "ShopService.Get")
        raise AssertionError("ambiguous short form accepted")
    except InvalidInput as exc:
        assert "shop.v1.ShopService" in exc.message and "shop.v2.ShopService" in exc.message
    assert zero_value(desc, "shop.v1.GetRequest") == {
        "id": "0", "tags": [], "kind": "KIND_UNSPECIFIED", "at": "1970-01-01T00:00:00Z", "next": {}}
