"""`framework scaffold scenario` and installed components end to end (docs/reference-frontends.md#scenarios,
docs/reference-frontends.md#components): one project whose frontend gets components through
`component install` (npm runs for real), type-checks with tsc, is bundled and served by `env up dev`; a
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
from tests.conftest import BIN, run_cli
from tests.devstack_fixtures import free_base, git

# The machine's npm cache (each test has its own HOME): packages come from it when it has them.
NPM_ENV = {"npm_config_cache": os.environ.get("npm_config_cache") or str(Path.home() / ".npm"),
           "npm_config_prefer_offline": "true", "npm_config_update_notifier": "false"}
PACKAGE = {"name": "web", "private": True, "dependencies": {"react": "19.3.1", "react-dom": "19.3.1"},
           "devDependencies": {"@types/react": "19.3.0", "@types/react-dom": "19.3.0", "esbuild": "0.28.2",
                               "typescript": "5.9.3"}}
TSCONFIG = {"compilerOptions": {"target": "ES2022", "lib": ["DOM", "DOM.Iterable", "ES2022"], "module": "ESNext",
                                "moduleResolution": "Bundler", "jsx": "react-jsx", "strict": True, "noEmit": True,
                                "skipLibCheck": True, "isolatedModules": True, "noUnusedLocals": True},
            "include": ["src"]}
MAIN = """import { createRoot } from "react-dom/client";

import { Card, CardContent, CardHeader, CardTitle } from "./components/ui/card";
import {
  Dialog, DialogClose, DialogContent, DialogDescription, DialogTitle, DialogTrigger,
} from "./components/ui/dialog";
import { FormField } from "./components/ui/form-field";

function App() {
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

createRoot(document.getElementById("root")!).render(<App />);
"""
SERVE = """import functools, http.server, os
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory="dist")
http.server.ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), handler).serve_forever()
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
    return {**NPM_ENV, "PATH": f"{BIN}:{os.environ['PATH']}", "HOME": str(home),
            "XDG_CACHE_HOME": str(home / ".cache"), "XDG_CONFIG_HOME": str(home / ".config"),
            "FRAMEWORK_LEDGER_HOME": str(home / ".framework" / "ledger"), **(extra or {})}


def _framework_json(*args: str, cwd: Path, home: Path) -> dict:
    result = run_cli("framework", *args, "--json", cwd=cwd, env=_env(home), timeout=600)
    doc = json.loads(result.stdout)
    assert doc["ok"], result.stderr + result.stdout
    return doc


def _make_project(root: Path, port: int) -> None:
    web = root / "apps" / "web"
    (web / "src").mkdir(parents=True)
    (web / "dist").mkdir()
    (root / "framework.yaml").write_text(f"name: shop\nfrontends:\n  - name: web\n    kind: vite-spa\n"
                                         f"    dir: apps/web\n    port: {port}\n")
    (root / "deploy" / "kcl" / "dev").mkdir(parents=True)
    (root / "deploy" / "kcl" / "dev" / "main.k").write_text(f'''import framework

environment = framework.Environment {{
    name = "dev"
    kind = "local"
    target = framework.Process {{}}
    frontends = [framework.Frontend {{name = "web", dir = "apps/web", dev = ["python3", "serve.py"], port = {port}}}]
}}
''')
    (web / "package.json").write_text(json.dumps(PACKAGE, indent=2) + "\n")
    (web / "tsconfig.json").write_text(json.dumps(TSCONFIG))
    (web / "src" / "main.tsx").write_text(MAIN)
    (web / "serve.py").write_text(SERVE)
    (web / "dist" / "index.html").write_text('<!doctype html><html><head><title>shop</title></head>'
                                             '<body><div id="root"></div><script src="app.js"></script></body></html>')
    (root / ".gitignore").write_text(".framework/\nnode_modules/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "shop")


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """The shared build: components installed (real npm), tsc, an esbuild bundle, two scenarios, the dev
    stack up, one Playwright run. Each step's output is kept for the tests to assert on."""
    if shutil.which("npm") is None or not Path("/usr/bin/chromium").exists():
        pytest.fail("npm and /usr/bin/chromium are needed (make system-deps)")
    base = tmp_path_factory.mktemp("scenario")
    root, home = base / "shop", base / "home"
    root.mkdir()
    home.mkdir()
    port = free_base() + 11
    _make_project(root, port)
    web = root / "apps" / "web"
    steps: dict = {"root": root, "port": port}
    steps["install"] = _framework_json("component", "install", "dialog", "form-field", "card", cwd=root, home=home)
    steps["tsc"] = subprocess.run(["node_modules/.bin/tsc", "--noEmit", "-p", "."], cwd=web, capture_output=True,
                                  text=True, check=False)
    steps["bundle"] = subprocess.run(["node_modules/.bin/esbuild", "src/main.tsx", "--bundle", "--minify",
                                      "--outfile=dist/app.js", "--log-level=warning"], cwd=web, capture_output=True,
                                     text=True, check=False)
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


def test_component_install_runs_the_package_manager_and_the_components_type_check(shop: dict) -> None:
    """docs/reference-frontends.md#components: install adds npm dependencies with the frontend's package
    manager (npm here: no lockfile), pinned exactly, and the installed sources pass `tsc --noEmit` (strict)
    and bundle."""
    doc, web = shop["install"], shop["root"] / "apps" / "web"
    assert doc["package_manager"] == "npm" and doc["dependencies"] == ["clsx@2.1.1"]
    assert doc["install_command"] == [["npm", "install", "--save-exact", "--no-audit", "--no-fund", "clsx@2.1.1"]]
    assert json.loads((web / "package.json").read_text())["dependencies"]["clsx"] == "2.1.1"
    assert (web / "node_modules" / "clsx" / "package.json").is_file() and (web / "package-lock.json").is_file()
    assert {f["path"].rsplit("/", 1)[1] for f in doc["files"]} == {
        "utils.ts", "button.tsx", "dialog.tsx", "input.tsx", "label.tsx", "form-field.tsx", "card.tsx"}
    assert shop["tsc"].returncode == 0, shop["tsc"].stdout + shop["tsc"].stderr
    assert shop["bundle"].returncode == 0, shop["bundle"].stderr


def test_scaffolded_scenarios_pass_against_the_dev_stack_in_chromium(shop: dict) -> None:
    """docs/reference-frontends.md#scenarios: the scaffolded scenario passes out of the box against the
    frontend `env up dev` serves (its URL found through `framework env devstack port`), and a copy made with
    --from, extended by the user, proves the installed dialog renders and opens in headless Chromium."""
    files = {f["path"]: f["status"] for f in shop["scaffold"]["files"]}
    assert files == dict.fromkeys(["scenarios/.gitignore", "scenarios/package-lock.json", "scenarios/package.json",
                                   "scenarios/playwright.config.ts", "scenarios/smoke.scenario.ts",
                                   "scenarios/support/stack.ts"], "created")
    assert shop["scaffold"]["installed"] and not shop["copy"]["installed"]
    assert shop["copy"]["source"] == "smoke" and shop["copy"]["frontend"] == "web"
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
