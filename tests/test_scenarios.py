"""`framework scaffold scenario` and installed components end to end (docs/reference-frontends.md#scenarios,
docs/reference-frontends.md#components): one project whose vite-spa frontend (`scaffold frontend`) gets
components through `component install` (npm runs for real), passes its typecheck and lint scripts with
them on its page, and is served by `env up dev` (its Vite dev server, base path /shop); a
scaffolded scenario and a copy of it (`--from`) then run with Playwright in the machine's headless
Chromium against that dev stack, the copy asserting that the installed dialog renders and opens."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.authoring.scenarios import scaffold_scenario
from engine.errors import InvalidInput, NotFound, UsageError
from engine.project import Project
from tests.authoring_fixtures import _GO_ENV
from tests.conftest import BIN, run_cli
from tests.devstack_fixtures import free_base, git

# The machine's npm cache (each test has its own HOME): packages come from it when it has them.
NPM_ENV = {"npm_config_cache": os.environ.get("npm_config_cache") or str(Path.home() / ".npm"),
           "npm_config_prefer_offline": "true", "npm_config_update_notifier": "false"}
DEV_ENV = """import framework

environment = framework.Environment {
    name = "dev"
    kind = "local"
    target = framework.Process {}
}
"""
# The user's page: the scaffolded vite-spa's App, rewritten with the installed components.
APP = """import { Card, CardContent, CardHeader, CardTitle } from "./components/ui/card";
import {
  Dialog, DialogClose, DialogContent, DialogDescription, DialogTitle, DialogTrigger,
} from "./components/ui/dialog";
import { FormField } from "./components/ui/form-field";

export default function App() {
  return (
    <Card>
      <CardHeader>
        <CardTitle>Orders</CardTitle>
      </CardHeader>
      <CardContent>
        <FormField label="Customer" defaultValue="Ada" />
        <Dialog>
          <DialogTrigger>Refund</DialogTrigger>
          <DialogContent>
            <DialogTitle>Refund order 42?</DialogTitle>
            <DialogDescription>The customer is paid back.</DialogDescription>
            <DialogClose>Cancel</DialogClose>
          </DialogContent>
        </Dialog>
      </CardContent>
    </Card>
  );
}
"""
# What a user adds to the copied scenario: the installed dialog renders and opens in Chromium.
DIALOG_STEPS = """
test("the installed dialog opens with its title", async ({ page }) => {
  await page.goto(frontendURL(frontend));
  await expect(page.getByRole("heading", { name: "Orders" })).toBeVisible();
  await expect(page.getByLabel("Customer")).toHaveValue("Ada");
  await page.getByRole("button", { name: "Refund" }).click();
  await expect(page.getByRole("dialog")).toBeVisible();
  await expect(page.getByRole("heading", { name: "Refund order 42?" })).toBeVisible();
  await page.getByRole("button", { name: "Cancel" }).click();
  await expect(page.getByRole("dialog")).toBeHidden();
});
"""


def _env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """A home of the module's own (the module fixture runs before the per-test isolated home)."""
    return {**_GO_ENV, **NPM_ENV, "PATH": f"{BIN}:{os.environ['PATH']}", "HOME": str(home),
            "XDG_CACHE_HOME": str(home / ".cache"), "XDG_CONFIG_HOME": str(home / ".config"),
            "FRAMEWORK_LEDGER_HOME": str(home / ".framework" / "ledger"), **(extra or {})}


def _framework_json(*args: str, cwd: Path, home: Path) -> dict:
    result = run_cli("framework", *args, "--json", cwd=cwd, env=_env(home), timeout=600)
    doc = json.loads(result.stdout)
    assert doc["ok"], result.stderr + result.stdout
    return doc


def _make_project(root: Path) -> None:
    """A bare project with a local dev environment for `scaffold frontend` to register its frontend in."""
    (root / "framework.yaml").write_text("name: shop\n")
    (root / "deploy" / "kcl" / "dev").mkdir(parents=True)
    (root / "deploy" / "kcl" / "dev" / "main.k").write_text(DEV_ENV)
    (root / ".gitignore").write_text(".framework/\nnode_modules/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "shop")


def _npm(web: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["npm", "run", "--silent", *args], cwd=web, capture_output=True, text=True, check=False,
                          env={**os.environ, **_env(home)}, timeout=300)


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """The shared build: a scaffolded frontend, components installed (real npm), typecheck and lint, two
    scenarios, the dev stack up, one Playwright run. Each step's output is kept for the tests to assert on."""
    if shutil.which("npm") is None or not Path("/usr/bin/chromium").exists():
        pytest.fail("npm and /usr/bin/chromium are needed (make system-deps)")
    base = tmp_path_factory.mktemp("scenario")
    root, home = base / "shop", base / "home"
    root.mkdir()
    home.mkdir()
    port = free_base() + 11
    _make_project(root)
    web = root / "frontends" / "web"
    steps: dict = {"root": root, "port": port}
    steps["frontend"] = _framework_json("scaffold", "frontend", "web", "--kind", "vite-spa", "--port", str(port),
                                        "--base-path", "/shop", cwd=root, home=home)
    steps["install"] = _framework_json("component", "install", "dialog", "form-field", "card", cwd=root, home=home)
    (web / "src" / "App.tsx").write_text(APP)
    steps["tsc"] = _npm(web, home, "typecheck")
    steps["lint"] = _npm(web, home, "lint")
    steps["scaffold"] = _framework_json("scaffold", "scenario", "smoke", cwd=root, home=home)
    steps["copy"] = _framework_json("scaffold", "scenario", "refund_dialog", "--from", "smoke", cwd=root, home=home)
    copy = root / "scenarios" / "refund_dialog.scenario.ts"
    copy.write_text(copy.read_text() + DIALOG_STEPS)
    up = run_cli("framework", "env", "up", "dev", "--no-build", "--background", "--json", cwd=root, env=_env(home))
    try:
        steps["up"] = json.loads(up.stdout)
        assert steps["up"]["ok"], up.stderr
        report = root / "report.json"
        steps["run"] = subprocess.run(
            ["npx", "playwright", "test", "--reporter=json"], cwd=root / "scenarios", capture_output=True, text=True,
            timeout=300, check=False,
            env={**os.environ, **_env(home, {"FRAMEWORK_BIN": str(BIN / "framework"),
                                             "PLAYWRIGHT_JSON_OUTPUT_NAME": str(report)})})
        steps["report"] = json.loads(report.read_text()) if report.is_file() else {}
    finally:
        run_cli("framework", "env", "down", "dev", cwd=root, env=_env(home))
    yield steps


def test_installed_components_build_and_the_scaffolded_scenarios_pass_in_chromium(shop: dict) -> None:
    """docs/reference-frontends.md#components: install into a frontend `scaffold frontend` made adds the npm
    dependencies with its package manager (npm: its package-lock.json), pinned exactly, and the installed
    sources pass the frontend's own typecheck (tsc, strict) and lint (eslint) scripts.
    docs/reference-frontends.md#scenarios: the scaffolded scenario passes out of the box against the frontend
    `env up dev` serves (its URL found through `framework env devstack port`, under its base path), and a copy
    made with --from, extended by the user, proves the installed dialog renders and opens in headless Chromium.
    One test for both: they read the one built project (a second test would build it again on another
    xdist worker)."""
    doc, web = shop["install"], shop["root"] / "frontends" / "web"
    assert doc["frontend"] == "web" and doc["dir"] == "frontends/web/src/components/ui"
    assert doc["package_manager"] == "npm" and doc["dependencies"] == ["clsx@2.1.1"]
    assert doc["install_command"] == [["npm", "install", "--save-exact", "--no-audit", "--no-fund", "clsx@2.1.1"]]
    assert json.loads((web / "package.json").read_text())["dependencies"]["clsx"] == "2.1.1"
    lock = json.loads((web / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/clsx"]["version"] == "2.1.1"
    assert (web / "node_modules" / "clsx" / "package.json").is_file()
    assert {f["path"].rsplit("/", 1)[1] for f in doc["files"]} == {
        "utils.ts", "button.tsx", "dialog.tsx", "input.tsx", "label.tsx", "form-field.tsx", "card.tsx"}
    assert shop["tsc"].returncode == 0, shop["tsc"].stdout + shop["tsc"].stderr
    assert shop["lint"].returncode == 0, shop["lint"].stdout + shop["lint"].stderr
    files = {f["path"]: f["status"] for f in shop["scaffold"]["files"]}
    assert files == dict.fromkeys(["scenarios/.gitignore", "scenarios/package-lock.json", "scenarios/package.json",
                                   "scenarios/playwright.config.ts", "scenarios/smoke.scenario.ts",
                                   "scenarios/support/stack.ts"], "created")
    assert shop["scaffold"]["installed"] and not shop["copy"]["installed"]
    assert shop["copy"]["source"] == "smoke" and shop["copy"]["frontend"] == "web"
    smoke = (shop["root"] / "scenarios" / "smoke.scenario.ts").read_text()
    assert f'const frontend = {{ name: "web", port: {shop["port"]}, basePath: "/shop" }};' in smoke
    assert [(p["name"], p["ports"]) for p in shop["up"]["processes"]] == [("web", [shop["port"]])]
    run = shop["run"]
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    outcomes = {(spec["file"], spec["title"]): [t["status"] for t in spec["tests"]]
                for suite in shop["report"]["suites"] for sub in [suite, *suite.get("suites", [])]
                for spec in sub.get("specs", [])}
    assert outcomes == {
        ("refund_dialog.scenario.ts", "the installed dialog opens with its title"): ["expected"],
        ("refund_dialog.scenario.ts", "the web frontend loads against the dev stack without errors"): ["expected"],
        ("smoke.scenario.ts", "the web frontend loads against the dev stack without errors"): ["expected"]}


def test_without_npm_nothing_is_scaffolded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/reference-frontends.md#scenarios: `npm ci` runs before anything is written, so without npm the
    scaffold is exit 1 naming npm and the checkout is as it was (no scenarios/, no staging directory)."""
    from engine.authoring.tools import ToolMissing

    (tmp_path / "framework.yaml").write_text("name: shop\nfrontends:\n  - name: web\n")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(ToolMissing, match="npm") as missing:
        scaffold_scenario(Project(tmp_path), "smoke")
    assert missing.value.exit_code == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["framework.yaml"]


def test_scaffold_scenario_refusals_and_retargeting(tmp_path: Path) -> None:
    """docs/reference-frontends.md#scenarios: an existing scenario is never overwritten (exit 1); --from
    an unknown scenario is exit 1 naming the ones there are; --frontend retargets a copy; an unknown
    frontend is exit 1; --dry-run writes nothing; a bad name is exit 2."""
    (tmp_path / "framework.yaml").write_text("name: shop\nfrontends:\n  - name: web\n  - name: admin\n"
                                             "    kind: vite-spa\n    base_path: /admin\n")
    project = Project(tmp_path)
    with pytest.raises(InvalidInput, match="which frontend"):
        scaffold_scenario(project, "smoke", install=False)
    dry = scaffold_scenario(project, "smoke", frontend="web", dry_run=True)
    assert dry.dry_run and not (tmp_path / "scenarios").exists()
    first = scaffold_scenario(project, "smoke", frontend="web", install=False)
    assert first.path == "scenarios/smoke.scenario.ts" and not first.installed
    text = (tmp_path / first.path).read_text()
    assert 'const frontend = { name: "web", port: 3000, basePath: "" };' in text
    with pytest.raises(InvalidInput, match="exists"):
        scaffold_scenario(project, "smoke", frontend="web", install=False)
    with pytest.raises(NotFound, match="no scenario 'missing'") as unknown:
        scaffold_scenario(project, "other", source="missing", install=False)
    assert unknown.value.hint == "scenarios: smoke"
    copy = scaffold_scenario(project, "admin_smoke", source="smoke", frontend="admin", install=False)
    copied = (tmp_path / copy.path).read_text()
    assert 'const frontend = { name: "admin", port: 5173, basePath: "/admin" };' in copied
    assert 'test.describe("admin_smoke"' in copied and "framework scenario: admin_smoke " in copied
    assert {f["path"]: f["status"] for f in copy.files}["scenarios/package.json"] == "owned"
    with pytest.raises(NotFound, match="no frontend 'mobile'"):
        scaffold_scenario(project, "m", frontend="mobile", install=False)
    with pytest.raises(UsageError):
        scaffold_scenario(project, "9lives", frontend="web", install=False)
    births = json.loads((tmp_path / ".framework" / "scaffolded.json").read_text())["files"]
    assert {"scenarios/smoke.scenario.ts", "scenarios/admin_smoke.scenario.ts"} <= {b["path"] for b in births}
