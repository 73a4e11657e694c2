"""Frontends end to end in a real headless Chromium (Debian's chromium + chromedriver, as the login page
test drives it): a project with a Go service, a web (Next.js) and a vite-spa frontend, generated, built
and run by `env up dev`; each page calls the Go service through the generated Connect client and shows
its answer (docs/reference-frontends.md)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import frontend_fixtures
from tests.browser_fixtures import WebDriver, chromium_session
from tests.domain_fixtures import gateway_plane, zone  # noqa: F401
from tests.frontend_fixtures import FrontendProject
from tests.hosted_fixtures import demo  # noqa: F401
from tests.waiting import until
from tests.webhooks_fixtures import server_factory  # noqa: F401

frontend_project = frontend_fixtures.frontend_project  # the module's one built project
# npm ci of two frontends, next build and the first page compile take minutes of wall time on a loaded
# 2-core machine (their CPU is what the suite budget counts: see docs/reference-frontends.md#speed-and-cost).
pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    with chromium_session(tmp_path_factory.mktemp("chromium-profile")) as driver:
        yield driver


def _answer(browser: WebDriver, url: str, timeout: float = 180) -> str:
    browser.call("POST", "/url", {"url": url})

    def answered() -> str | None:
        found = browser.call("POST", "/elements", {"using": "css selector", "value": "#answer"})
        if not found:
            return None
        text = browser.text("#answer")
        return text if "answered" in text or "failed" in text else None

    return until(answered, timeout, f"#answer on {url}")


def test_vite_spa_page_calls_the_go_service_through_the_generated_client(frontend_project: FrontendProject,
                                                                         browser: WebDriver) -> None:
    """docs/reference-frontends.md#env-up: `env up` runs the vite-spa dev server under its base path with the
    API's address; the page's generated Connect client reaches the Go service and shows its answer."""
    text = _answer(browser, f"http://127.0.0.1:{frontend_project.spa_port}/spa/")
    assert text == "ShopService answered: pong: hello from spa"


def test_web_page_calls_the_go_service_through_the_generated_client(frontend_project: FrontendProject,
                                                                    browser: WebDriver) -> None:
    """docs/reference-frontends.md#env-up: the Next.js dev server (`project new --frontend`) renders the page,
    which calls the Go service through the generated client (CORS from a loopback origin) and shows its answer."""
    text = _answer(browser, f"http://127.0.0.1:{frontend_project.site_port}/")
    assert text == "ShopService answered: pong: hello from site"


def test_build_writes_each_kinds_output(frontend_project: FrontendProject) -> None:
    """docs/reference-frontends.md#build: `framework build` runs each kind's own build: Next's static export
    (`out/`) and Vite's `dist/` under the base path; nothing is published."""
    root = frontend_project.root
    assert (root / "frontends/site/out/index.html").is_file()
    spa = (root / "frontends/spa/dist/index.html").read_text()
    assert 'src="/spa/assets/' in spa  # the base path reached Vite's `base`
    assert not (root / ".framework" / "releases").exists()


def test_generated_clients_carry_the_marker_and_regenerate_byte_for_byte(frontend_project: FrontendProject) -> None:
    """docs/reference-frontends.md#generate: protoc-gen-es output and the client helpers carry the framework's
    hash marker; `generate --full` rewrites nothing (idempotent byte for byte: the fixture's own `generate --full`,
    right after the scaffolds, with the clients' bytes read before and after it)."""
    from engine.authoring import markers

    root = frontend_project.root
    gen = [root / "frontends" / f / "src/gen" / rel for f in ("site", "spa")
           for rel in ("shop/v1/shop_pb.ts", "framework/clients.ts")]
    for path in gen:
        assert markers.check(path.name, path.read_text()) == "ok", path
    assert "export function shopClient(): Client<typeof ShopService>" in gen[1].read_text()
    doc = frontend_project.docs["generate --full"]
    assert doc["ok"] and not [c for c in doc["changed"] if c.startswith("frontends/")]
    generated = frontend_project.generated
    before, after = generated["before generate --full"], generated["after generate --full"]
    assert len(after) == 4 and after == before
    assert {p.relative_to(root).as_posix(): p.read_bytes() for p in gen} == after  # `build`, `env up` rewrote none


def test_scaffold_generates_only_the_new_client_and_the_next_generate_changes_nothing(
        frontend_project: FrontendProject) -> None:
    """docs/reference-frontends.md#scaffold-frontend: on a project whose last `generate` was current, the scaffold
    generates only the new frontend's client (and, for the first frontend, the bootstrap's CORS), the bytes a
    full `generate` writes: the `generate` right after it is a no-change run and `generate --full` changes
    nothing."""
    docs = frontend_project.docs
    cors = {"internal/bootstrap/cors.go", "internal/bootstrap/bootstrap.go"}
    first = {f["path"] for f in docs["project new --frontend"]["generated"]["files"]}  # planned, not only changed
    assert {"frontends/site/src/gen/framework/clients.ts", "frontends/site/src/gen/shop/v1/shop_pb.ts"} | cors <= first
    assert not [p for p in first - cors if not p.startswith("frontends/site/src/gen/")], first
    second = {f["path"] for f in docs["scaffold frontend"]["generated"]["files"]}
    assert "frontends/spa/src/gen/framework/clients.ts" in second
    assert not [p for p in second if not p.startswith("frontends/spa/src/gen/")], second
    assert not [f for f in docs["scaffold frontend"]["files"] if f["path"].startswith(("gen/", "internal/"))]
    assert docs["generate"]["up_to_date"] is True
    assert docs["generate --full"]["up_to_date"] is False and docs["generate --full"]["changed"] == []


def test_eslint_and_tsc_pass_on_each_scaffolded_frontend(frontend_project: FrontendProject) -> None:
    """docs/reference-frontends.md#scaffold-frontend: every scaffolded frontend passes its own eslint and tsc
    (the lint command reuses them). The web frontend's tsc ran already: `next build` type-checks the project
    with the same tsconfig and fails on an error (the fixture's `framework build` passed)."""
    for name, argvs in (("site", [["eslint", "."]]), ("spa", [["eslint", "."], ["tsc", "--noEmit"]])):
        for argv in argvs:  # the `lint` and `typecheck` scripts, without npm
            proc = frontend_project.bin(name, *argv)
            assert proc.returncode == 0, f"{name} {argv}:\n{proc.stdout}\n{proc.stderr}"


def test_frontends_are_registered_in_framework_yaml_and_the_dev_kcl(frontend_project: FrontendProject) -> None:
    """docs/reference-frontends.md#scaffold-frontend: each frontend is an entry of `frontends[]` in framework.yaml
    and a framework.Frontend (dev command, port, base path) in deploy/kcl/dev/main.k."""
    import yaml

    root = frontend_project.root
    config = yaml.safe_load((root / "framework.yaml").read_text())
    assert [(f["name"], f["kind"], f.get("base_path")) for f in config["frontends"]] == [
        ("site", "web", None), ("spa", "vite-spa", "/spa")]
    dev = (root / "deploy/kcl/dev/main.k").read_text()
    assert 'dev = ["node_modules/.bin/vite"]' in dev and 'base_path = "/spa"' in dev
    assert f"port = {frontend_project.spa_port}" in dev
    assert Path(root / "frontends/spa/package-lock.json").is_file()


def test_static_output_deployed_to_a_hosted_environment_is_served_under_its_base_path(
        frontend_project: FrontendProject, gateway_plane, zone, demo, tmp_path: Path) -> None:  # noqa: F811
    """docs/reference-frontends.md#deploying-frontends: the vite-spa's real built output (base path /spa),
    carried by a release of a hosted environment and promoted, is served by the gateway under its base path
    over TLS: the page and every asset it references, and `/` redirects to `/spa/`."""
    import re

    from tests.domain_fixtures import DOMAIN_SCOPES
    from tests.hosted_fixtures import admin, commit, hosted_env, mint, run_json, seed_org, with_token
    from tests.test_domain_frontends import _add_frontend, _live_domain, _tls

    seed_org(gateway_plane, "acme")
    admin(gateway_plane, "org", "grant", "acme", *DOMAIN_SCOPES)
    env = with_token(demo, mint(gateway_plane, "acme", DOMAIN_SCOPES))
    hosted_env(demo, gateway_plane.url)
    shutil.copytree(frontend_project.root / "frontends/spa/dist", demo.root / "spa" / "dist")
    _add_frontend(demo, 'framework.Frontend {name = "spa", dir = "spa", output = "dist", base_path = "/spa"}')
    commit(demo, "the vite-spa's built output")
    code, doc = run_json(demo, env, "env", "deploy", "cloud", "--yes", "--timeout", "60")
    assert code == 0, (doc["error"], str(doc)[:3000])
    port, ca = _live_domain(gateway_plane, demo, env, zone, "spa.test", "spa", tmp_path, "/spa/")
    status, headers, page = _tls(port, "spa.test", ca, "/spa/")
    built = (frontend_project.root / "frontends/spa/dist/index.html").read_bytes()
    assert status == 200 and page == built and headers["content-type"].startswith("text/html")
    assets = re.findall(r'(?:src|href)="(/spa/assets/[^"]+)"', page.decode())
    assert assets, page
    for asset in assets:
        status, headers, body = _tls(port, "spa.test", ca, asset)
        assert status == 200 and body, asset
    status, headers, _ = _tls(port, "spa.test", ca, "/")
    assert status == 308 and headers["location"] == "/spa/"
