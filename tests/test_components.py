"""`framework component list / search / install` (docs/reference-frontends.md#components): the default
registry, a team registry as a directory and over HTTP, registry dependencies, the overwrite rule,
--dir, --no-install, --dry-run and --json. The package manager running for real, the type check and the
Chromium render of installed components are in tests/test_scenarios.py (one shared frontend build)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from engine.authoring.component_registry import default_registry
from engine.authoring.components import install_components, list_components, package_manager
from engine.errors import Conflict, InvalidInput, NotFound, UsageError
from engine.project import Project
from tests.conftest import run_cli


def _project(root: Path, frontends: str = "  - name: web\n    dir: apps/web\n") -> Project:
    root.mkdir(parents=True, exist_ok=True)
    (root / "framework.yaml").write_text(f"name: shop\nfrontends:\n{frontends}")
    for name in ("apps/web", "apps/admin"):
        (root / name).mkdir(parents=True, exist_ok=True)
        (root / name / "package.json").write_text(json.dumps({"name": name.split("/")[1], "private": True,
                                                              "dependencies": {"react": "19.3.1"}}))
    return Project(root)


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_list_and_search_the_default_registry_through_the_cli(tmp_path: Path) -> None:
    """docs/reference-frontends.md#components: `component list` shows the default registry's items (name
    and description; --json the registry-item fields); `search` keeps the items holding every word and an
    empty result is exit 0."""
    listed = run_cli("framework", "component", "list", cwd=tmp_path)
    assert listed.exit_code == 0, listed.stderr
    names = [line.split()[0] for line in listed.stdout.splitlines()]
    assert {"button", "card", "input", "label", "dialog", "utils"} <= set(names)
    found = run_cli("framework", "component", "search", "modal", "dialog", "--json", cwd=tmp_path)
    doc = json.loads(found.stdout)
    assert doc["ok"] and doc["query"] == "modal dialog"
    assert [c["name"] for c in doc["components"]] == ["dialog"]
    assert doc["components"][0]["registry_dependencies"] == ["button", "utils"]
    none = run_cli("framework", "component", "search", "spreadsheet", cwd=tmp_path)
    assert none.exit_code == 0 and "no component matches 'spreadsheet'" in none.stdout


def test_default_registry_follows_the_shadcn_schema_and_every_file_is_shipped() -> None:
    """docs/reference-frontends.md#components: registry.json holds `items` in shadcn's registry-item shape;
    every item's files exist under the registry and its registryDependencies name items of the registry."""
    index = json.loads((default_registry() / "registry.json").read_text())
    assert index["$schema"] == "https://ui.shadcn.com/schema/registry.json"
    names = {item["name"] for item in index["items"]}
    for item in index["items"]:
        assert item["type"] in ("registry:ui", "registry:lib"), item
        assert set(item.get("registryDependencies", [])) <= names, item["name"]
        for f in item["files"]:
            assert (default_registry() / f["path"]).is_file(), f


def test_install_resolves_registry_dependencies_and_edits_package_json(tmp_path: Path) -> None:
    """docs/reference-frontends.md#components: install writes the named items and their registry
    dependencies (dependencies first, each once) into src/components/ui/; --no-install adds the npm
    dependencies to package.json (pinned, sorted) and runs no package manager; a second run is unchanged."""
    project = _project(tmp_path / "shop")
    result = install_components(project, ["form-field", "dialog"], install=False)
    assert result.components == ["utils", "input", "label", "form-field", "button", "dialog"]
    assert [(f.path, f.status) for f in result.files][:2] == [
        ("apps/web/src/components/ui/utils.ts", "created"), ("apps/web/src/components/ui/input.tsx", "created")]
    ui = tmp_path / "shop" / "apps/web/src/components/ui"
    assert sorted(p.name for p in ui.iterdir()) == ["button.tsx", "dialog.tsx", "form-field.tsx", "input.tsx",
                                                    "label.tsx", "utils.ts"]
    assert (ui / "dialog.tsx").read_bytes() == (default_registry() / "ui/dialog.tsx").read_bytes()
    assert result.dependencies == ["clsx@2.1.1"] and result.package_json_edited and not result.install_command
    package = json.loads((tmp_path / "shop/apps/web/package.json").read_text())
    assert package["dependencies"] == {"clsx": "2.1.1", "react": "19.3.1"}
    again = install_components(project, ["dialog"], install=False)
    assert {f.status for f in again.files} == {"unchanged"}
    assert again.dependencies == [] and not again.package_json_edited  # clsx is declared now


def test_a_changed_file_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    """docs/reference-frontends.md#components: a file that differs from the registry's is refused (exit 1,
    code conflict, naming it) and nothing else is written, not even the new files; --overwrite replaces it
    and reports `overwritten`."""
    project = _project(tmp_path / "shop")
    install_components(project, ["button"], install=False)
    mine = tmp_path / "shop/apps/web/src/components/ui/button.tsx"
    mine.write_text(mine.read_text() + "// my change\n")
    before = _tree(tmp_path / "shop")
    with pytest.raises(Conflict) as refused:
        install_components(project, ["dialog"], install=False)
    assert refused.value.exit_code == 1 and "apps/web/src/components/ui/button.tsx" in refused.value.message
    assert _tree(tmp_path / "shop") == before
    result = install_components(project, ["dialog"], install=False, overwrite=True)
    assert {f.path.rsplit("/", 1)[1]: f.status for f in result.files} == {
        "utils.ts": "unchanged", "button.tsx": "overwritten", "dialog.tsx": "created"}
    assert "// my change" not in mine.read_text()


def test_dir_frontend_dry_run_and_bad_input(tmp_path: Path) -> None:
    """docs/reference-frontends.md#components: --dir is inside the frontend (one outside is exit 2);
    --frontend picks among several (none with several is exit 1 naming them); --dry-run writes nothing;
    an unknown component or frontend is exit 1 naming it."""
    project = _project(tmp_path / "shop", "  - name: web\n    dir: apps/web\n  - name: admin\n    dir: apps/admin\n")
    with pytest.raises(InvalidInput, match="which frontend"):
        install_components(project, ["card"], install=False)
    before = _tree(tmp_path / "shop")
    dry = install_components(project, ["card"], frontend="admin", directory="src/ui", dry_run=True)
    assert dry.dir == "apps/admin/src/ui" and [f.status for f in dry.files] == ["created", "created"]
    assert _tree(tmp_path / "shop") == before
    install_components(project, ["card"], frontend="admin", directory="src/ui", install=False)
    assert (tmp_path / "shop/apps/admin/src/ui/card.tsx").is_file()
    with pytest.raises(UsageError) as outside:
        install_components(project, ["card"], frontend="admin", directory="../../etc")
    assert outside.value.exit_code == 2
    with pytest.raises(NotFound, match="no component 'carousel'"):
        install_components(project, ["carousel"], frontend="admin")
    with pytest.raises(NotFound, match="no frontend 'mobile'"):
        install_components(project, ["card"], frontend="mobile")
    with pytest.raises(UsageError):
        install_components(project, ["../card"], frontend="admin")


def test_a_missing_package_manager_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/reference-frontends.md#components: the package manager runs before any file is written; when the
    lockfile's manager (pnpm here) is not on PATH the install is exit 1 naming it and pointing to
    --no-install, and the frontend is as it was."""
    project = _project(tmp_path / "shop")
    (tmp_path / "shop/apps/web/pnpm-lock.yaml").write_text("lockfileVersion: '9.0'\n")
    before = _tree(tmp_path / "shop")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(InvalidInput, match="pnpm is not on PATH") as missing:
        install_components(project, ["button"])
    assert missing.value.exit_code == 1 and "--no-install" in (missing.value.hint or "")
    assert _tree(tmp_path / "shop") == before


def test_package_manager_follows_the_lockfile(tmp_path: Path) -> None:
    """docs/reference-frontends.md#components: the package manager is the lockfile's (pnpm-lock.yaml,
    yarn.lock, bun.lock, package-lock.json), else package.json's packageManager, else npm."""
    (tmp_path / "package.json").write_text('{"packageManager": "yarn@4.5.0"}')
    assert package_manager(tmp_path) == "yarn"
    (tmp_path / "package-lock.json").write_text("{}")
    assert package_manager(tmp_path) == "npm"
    (tmp_path / "pnpm-lock.yaml").write_text("")
    assert package_manager(tmp_path) == "pnpm"


@pytest.fixture
def team_registry(tmp_path: Path) -> Iterator[str]:
    """A team registry in shadcn's built form (registry.json plus <name>.json items with contents inline)
    served over real HTTP on 127.0.0.1."""
    site = tmp_path / "site" / "r"
    site.mkdir(parents=True)
    items = [
        {"name": "brand", "type": "registry:lib", "dependencies": ["clsx@2.1.1"],
         "files": [{"path": "lib/brand.ts", "type": "registry:lib", "target": "~/src/lib/brand.ts"}]},
        {"name": "hero", "type": "registry:block", "description": "A landing hero", "registryDependencies": ["brand"],
         "devDependencies": ["@types/node@20.19.43"],
         "files": [{"path": "blocks/hero.tsx", "type": "registry:block"}]},
    ]
    (site / "registry.json").write_text(json.dumps({"name": "team", "homepage": "https://ui.example", "items": items}))
    contents = {"brand": 'export const brand = "Acme";\n',
                "hero": 'import { brand } from "../../lib/brand";\nexport const Hero = () => brand;\n'}
    for item in items:
        built = {**item, "files": [{**f, "content": contents[item["name"]]} for f in item["files"]]}
        (site / f"{item['name']}.json").write_text(json.dumps(built))
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(tmp_path / "site")))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/r"
    server.shutdown()
    server.server_close()


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def test_a_registry_url_installs_items_with_targets(tmp_path: Path, team_registry: str) -> None:
    """docs/reference-frontends.md#components: --registry <URL> reads registry.json and each built
    <name>.json over HTTP; a file's `target` places it relative to the frontend, others go to the install
    directory; dependencies and devDependencies both reach package.json."""
    project = _project(tmp_path / "shop")
    listed = list_components(team_registry)
    assert [c["name"] for c in listed.components] == ["brand", "hero"]
    result = install_components(project, ["hero"], registry=team_registry, install=False)
    assert [(f.path, f.component) for f in result.files] == [
        ("apps/web/src/lib/brand.ts", "brand"), ("apps/web/src/components/ui/hero.tsx", "hero")]
    assert (tmp_path / "shop/apps/web/src/lib/brand.ts").read_text() == 'export const brand = "Acme";\n'
    package = json.loads((tmp_path / "shop/apps/web/package.json").read_text())
    assert package["dependencies"]["clsx"] == "2.1.1" and package["devDependencies"] == {"@types/node": "20.19.43"}
    with pytest.raises(InvalidInput, match="cannot fetch"):
        list_components("http://127.0.0.1:9/r")  # nothing listens on the discard port


def test_a_registry_directory_and_bad_registries_through_the_cli(tmp_path: Path) -> None:
    """docs/reference-frontends.md#components: --registry <dir> in the source form (files read from their
    paths); a registry without registry.json, with a file path escaping it or a dependency cycle is exit 1
    with a message naming the problem and nothing written; --json carries the error."""
    _project(tmp_path / "shop")
    reg = tmp_path / "reg"
    (reg / "src").mkdir(parents=True)
    (reg / "src" / "tag.tsx").write_text("export const Tag = 1;\n")
    items = [{"name": "tag", "type": "registry:ui", "files": [{"path": "src/tag.tsx", "type": "registry:ui"}]},
             {"name": "evil", "files": [{"path": "../../etc/passwd"}]},
             {"name": "a", "registryDependencies": ["b"], "files": []},
             {"name": "b", "registryDependencies": ["a"], "files": []}]
    (reg / "registry.json").write_text(json.dumps({"name": "mine", "items": items}))
    ok = run_cli("framework", "component", "install", "tag", "--registry", str(reg), cwd=tmp_path / "shop")
    assert ok.exit_code == 0, ok.stderr
    assert ok.stdout.splitlines() == ["created     apps/web/src/components/ui/tag.tsx  (tag)"]
    before = _tree(tmp_path / "shop")
    for name, message in (("evil", "must be a relative path inside"), ("a", "cycle: a -> b -> a")):
        bad = run_cli("framework", "component", "install", name, "--registry", str(reg), "--json",
                      cwd=tmp_path / "shop")
        doc = json.loads(bad.stdout)
        assert bad.exit_code == 1 and not doc["ok"] and message in doc["error"]["message"], bad.stdout
        assert "Traceback" not in bad.stderr
    empty = run_cli("framework", "component", "list", "--registry", str(tmp_path / "shop"), cwd=tmp_path)
    assert empty.exit_code == 1 and "no registry.json" in empty.stderr
    assert _tree(tmp_path / "shop") == before
