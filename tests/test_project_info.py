"""`framework project annotations`, `capabilities`, `features` and `libraries` (docs/reference-project.md): the
annotation spec printed from the analyzers' own table, capabilities generated from the real command trees, the
feature graph from the one feature table, the runtime libraries from the real Go toolchain. One generated project
(the session's `project new`, copied once for this module since `libraries` writes its cache); in-process engine
calls, one real CLI run per command."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.authoring_fixtures import _GO_ENV, fw, fw_text, go_caches
from tests.conftest import REPO

__all__ = ["go_caches"]


@pytest.fixture(scope="module")
def shop(authored: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A private copy of the session's `project new shop --service order` (libraries writes .framework/cache)."""
    import os

    for key, value in _GO_ENV.items():
        os.environ.setdefault(key, value)
    yield Path(shutil.copytree(authored, tmp_path_factory.mktemp("pinfo") / "shop", symlinks=True))


# -- annotations -----------------------------------------------------------------------------------------------


def test_annotations_print_the_analyzers_own_table() -> None:
    """docs/reference-project.md#project-annotations: the printed spec is the table the lint analyzers read, the
    same object and no copy, and every row of it is printed in table order."""
    from engine.authoring import annotation_spec
    from engine.inspection import annotations
    from engine.lint import proto, sql

    assert annotations.MARKERS is annotation_spec.MARKERS
    assert sql.spec is annotation_spec and proto.spec is annotation_spec  # the analyzers' view of it
    result = annotations.list_annotations()
    assert [r.name for r in result.annotations] == [a.name for a in annotation_spec.MARKERS]
    assert [r.analyzers for r in result.annotations] == [list(a.analyzers) for a in annotation_spec.MARKERS]
    entity = annotations.list_annotations(["entity"])
    assert {r.kind for r in entity.annotations} == {"proto-message", "column", "table"}
    assert "framework:ref" in {r.name for r in entity.annotations}
    assert {r.name for r in annotations.list_annotations(["go,config"]).annotations} >= {
        "framework:computed", "framework:guards", "contracts.exclude"}


def test_every_marker_the_go_analyzers_read_is_in_the_table() -> None:
    """docs/reference-lint.md#markers: the Go analyzers (assets/lint/go) match `framework:` markers in comments;
    each one they read is a row of the one table, so `project annotations` prints it."""
    from engine.authoring.annotation_spec import MARKERS

    names = {a.name for a in MARKERS}
    read = set()
    for source in (REPO / "assets" / "lint" / "go").rglob("*.go"):  # analyzers/, plugin/, the vet tool
        read |= set(re.findall(r"\"(framework:[a-z-]+)", source.read_text(encoding="utf-8")))
    assert read >= {"framework:computed", "framework:read-only", "framework:guards", "framework:optional-dep"}
    assert read <= names, read - names


def test_annotations_cli_prints_every_marker_and_refuses_an_unknown_kind(tmp_path: Path) -> None:
    """docs/reference-project.md#project-annotations: the command prints every marker of the table; an unknown
    kind exits 2 naming the kinds, with no traceback."""
    from engine.authoring.annotation_spec import MARKERS

    code, text, err = fw_text("project", "annotations", cwd=tmp_path)
    assert code == 0, err
    for marker in MARKERS:
        assert marker.name in text, marker.name
    code, doc, err = fw("project", "annotations", "--kind", "colum", cwd=tmp_path)
    assert code == 2 and doc["exit_code"] == 2 and not doc["ok"]
    assert "colum" in doc["error"]["message"] and "column" in doc["error"]["hint"] and "entity" in doc["error"]["hint"]
    assert "Traceback" not in err


# -- capabilities ----------------------------------------------------------------------------------------------


def _paths(command: Any, path: list[str]) -> Iterator[str]:
    """Every command path of a click tree (groups included), walked here independently of app/cli/capabilities."""
    yield " ".join(path)
    for name, child in (getattr(command, "commands", None) or {}).items():
        yield from _paths(child, [*path, name])


def test_capabilities_omit_no_command_of_either_program(tmp_path: Path) -> None:
    """docs/reference-project.md#project-capabilities: every command of the real Typer trees of `framework` and of
    `platform` (`platform framework ...` being the framework program) is listed, with the registry's one-line help
    where the registry names it; every lint analyzer and marker is listed (the CLI's --json document)."""
    from app.cli import build
    from app.registry import PROGRAMS
    from engine.authoring.annotation_spec import MARKERS
    from engine.lint.model import ANALYZERS

    code, doc, err = fw("project", "capabilities", cwd=tmp_path)
    assert code == 0 and doc["ok"], err
    listed = {c["path"]: c for c in doc["commands"]}
    framework, platform = build("framework"), build("platform")
    expected = set(_paths(framework, ["framework"]))
    expected |= {p for p in _paths(platform, ["platform"]) if not p.startswith("platform framework")}
    routed = {"framework" + p[len("platform framework"):]
              for p in _paths(platform.commands["framework"], ["platform", "framework"])}
    assert routed <= expected  # `platform framework X` runs `framework X`
    assert expected - set(listed) == set()
    assert "framework project capabilities" in listed and "framework project checkouts" in listed
    for program, spec in PROGRAMS.items():
        for group, entry in spec.groups.items():
            for name, help_text in entry.commands.items():
                assert listed[f"{program} {group} {name}"]["help"] == help_text
    assert "--tree" in listed["framework project checkouts"]["options"]
    assert [a["name"] for a in doc["analyzers"]] == [a.name for a in ANALYZERS]
    assert [m["name"] for m in doc["markers"]] == [m.name for m in MARKERS]
    computed = next(a for a in doc["analyzers"] if a["name"] == "computed-fields")
    assert computed["markers"] == ["framework:computed"]
    assert doc["counts"]["commands"] == sum(1 for c in doc["commands"] if not c["group"])


# -- features --------------------------------------------------------------------------------------------------


def test_features_resolve_the_generated_project(shop: Path) -> None:
    """docs/reference-project.md#project-features: the graph of `project new --disable`'s features from the one
    table (the names `project new` validates against), all enabled in a new project, each with the files it made
    (CLI --json)."""
    from engine.authoring.config import FEATURES
    from engine.authoring.features import FEATURE_TABLE

    assert FEATURES == tuple(f.name for f in FEATURE_TABLE)
    code, doc, err = fw("project", "features", cwd=shop)
    assert code == 0 and doc["ok"], err
    nodes = {f["name"]: f for f in doc["features"]}
    assert list(nodes) == list(FEATURES) and all(f["enabled"] for f in nodes.values())
    assert doc["warnings"] == []
    assert "internal/entities/order.go" in nodes["orm"]["present"]
    assert ".air.toml" in nodes["hot_reload"]["present"]
    assert "proto/order/v1/order.proto" in nodes["codegen"]["present"]
    assert set(nodes["orm"]["requires"]) == {"codegen", "migrations"}
    assert set(nodes["codegen"]["required_by"]) == {"orm", "frontend"}
    assert {"source": "orm", "target": "migrations"} in doc["edges"]


def test_a_disabled_feature_an_enabled_one_requires_is_a_warning(tmp_path: Path) -> None:
    """docs/reference-project.md#project-features: codegen disabled while orm stays enabled is a warning naming
    both, at `project new --disable` and in `project features` (warnings never gate); an unknown feature in
    framework.yaml is an error naming the known ones."""
    from engine.authoring.new import new_project
    from engine.errors import ConfigError
    from engine.inspection.features import features
    from engine.project import Project

    made = new_project("tool", parent=tmp_path, kind="cli", disable=["codegen,ci"])
    result = features(Project(Path(made.root)))
    assert made.warnings == result.warnings
    off = {f.name for f in result.features if not f.enabled}
    assert off == {"codegen", "ci"}
    assert len(result.warnings) == 2  # orm and frontend both need codegen; nothing needs ci
    assert all("requires codegen" in w for w in result.warnings)
    assert {w.split()[0] for w in result.warnings} == {"orm", "frontend"}
    (tmp_path / "tool" / "framework.yaml").write_text("name: tool\nfeatures:\n  gRPC: false\n")
    with pytest.raises(ConfigError) as err:
        features(Project(tmp_path / "tool"))
    assert "gRPC" in err.value.message and "hot_reload" in (err.value.hint or "")


# -- libraries -------------------------------------------------------------------------------------------------


def test_libraries_index_the_modules_generated_code_imports(shop: Path) -> None:
    """docs/reference-project.md#project-libraries: the go.mod modules the generated code imports, with their
    versions and the generated files that import them, from `go mod edit -json` and `go list -json`."""
    from engine.authoring import tools
    from engine.inspection.libraries import libraries
    from engine.project import Project

    libs = {lib.name: lib for lib in libraries(Project(shop)).libraries}
    assert set(libs) == {"connectrpc.com/connect", "google.golang.org/protobuf"}
    connect = libs["connectrpc.com/connect"]
    assert connect.version == tools.CONNECT_VERSION and connect.generated
    assert "gen/order/v1/orderv1connect/order.connect.go" in connect.generated_files
    assert "gen/order/v1/orderv1connect" in connect.used_by
    protobuf = libs["google.golang.org/protobuf"]
    assert protobuf.version == tools.PROTOC_GEN_GO_VERSION
    assert "google.golang.org/protobuf/reflect/protoreflect" in protobuf.packages
    assert "gen/order/v1/order.pb.go" in protobuf.generated_files


def test_library_signatures_come_from_go_doc_and_are_cached_by_version(shop: Path) -> None:
    """docs/reference-project.md#project-libraries: a name's full exported signatures are `go doc -all` of each
    package the project imports, cached by module version under .framework/cache/libraries/ (a second call reads
    the cache; the cache directory ignores itself); the CLI prints them, and an unknown name exits 1 listing the
    known libraries."""
    from engine.inspection.libraries import libraries
    from engine.project import Project

    first = libraries(Project(shop), ["connect"]).signatures
    assert [s.package for s in first] == ["connectrpc.com/connect"] and not first[0].cached
    assert "func NewClient[Req, Res any](" in first[0].text and "type Request[T any] struct" in first[0].text
    cache = shop / ".framework" / "cache" / "libraries" / "go" / f"connectrpc.com%connect@{first[0].version}"
    assert (cache / "connectrpc.com%connect.txt").read_text(encoding="utf-8") == first[0].text
    assert (shop / ".framework" / "cache" / ".gitignore").read_text(encoding="utf-8").splitlines()[-1] == "*"
    code, text, err = fw_text("project", "libraries", "connectrpc.com/connect", cwd=shop)
    assert code == 0, err
    assert "func NewClient[Req, Res any](" in text
    again = libraries(Project(shop), ["connectrpc.com/connect"]).signatures
    assert again[0].cached and again[0].text == first[0].text
    code, doc, err = fw("project", "libraries", "pgx", cwd=shop)
    assert code == 1 and doc["error"]["code"] == "not_found"
    assert "pgx" in doc["error"]["message"] and "connectrpc.com/connect" in doc["error"]["hint"]
    assert "Traceback" not in err


def test_npm_libraries_of_a_frontends_generated_clients(tmp_path: Path) -> None:
    """docs/reference-project.md#project-libraries: a frontend's generated clients' imports that its package.json
    declares are npm libraries, with the installed version; their signatures are the declared .d.ts."""
    from engine.inspection.libraries import libraries
    from engine.project import Project

    (tmp_path / "framework.yaml").write_text("name: site\nfrontends:\n  - name: web\n")
    front = tmp_path / "frontends" / "web"
    (front / "src" / "gen" / "framework").mkdir(parents=True)
    (front / "package.json").write_text(json.dumps({"dependencies": {"@connectrpc/connect": "^2.0.0",
                                                                     "react": "19.0.0"}}))
    (front / "src" / "gen" / "framework" / "clients.ts").write_text(
        '// framework:hash sha256:' + "0" * 64 + '\nimport { createClient } from "@connectrpc/connect";\n'
        'import type { Transport } from "@connectrpc/connect";\nimport { x } from "./local";\n')
    installed = front / "node_modules" / "@connectrpc" / "connect"
    installed.mkdir(parents=True)
    (installed / "package.json").write_text(json.dumps({"version": "2.0.2", "types": "index.d.ts"}))
    (installed / "index.d.ts").write_text("export declare function createClient(): void;\n")
    result = libraries(Project(tmp_path))
    assert [(lib.name, lib.version, lib.ecosystem) for lib in result.libraries] == [
        ("@connectrpc/connect", "2.0.2", "npm")]
    assert result.libraries[0].generated_files == ["frontends/web/src/gen/framework/clients.ts"]
    sig = libraries(Project(tmp_path), ["all"]).signatures
    assert [s.text for s in sig] == ["export declare function createClient(): void;\n"]
