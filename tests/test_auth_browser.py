"""The whole browser flow once, in a real headless Chromium (docs/reference-auth.md): `platform auth
login` opens the page (BROWSER hands the URL over), Chromium, driven by chromedriver over plain
W3C WebDriver HTTP calls, types the email and password and presses Allow; the server redirects
the browser to the CLI's loopback listener, and the CLI stores the token."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.auth_fixtures import ADMIN, PASSWORD, client_env, seed_accounts, server_factory, start_login, stored  # noqa: F401
from tests.waiting import until

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"  # the W3C WebDriver element key
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


class WebDriver:
    def __init__(self, base: str, session: str) -> None:
        self.http = httpx.Client(base_url=f"{base}/session/{session}", timeout=60)

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        r = self.http.request(method, path, json=body)
        assert r.status_code == 200, r.text
        return r.json()["value"]

    def find(self, css: str) -> str:
        found = self.call("POST", "/element", {"using": "css selector", "value": css})
        assert ELEMENT in found, found
        return str(found[ELEMENT])

    def type(self, css: str, text: str) -> None:
        self.call("POST", f"/element/{self.find(css)}/value", {"text": text})

    def click(self, css: str) -> None:
        self.call("POST", f"/element/{self.find(css)}/click", {})

    def text(self, css: str) -> str:
        return str(self.call("GET", f"/element/{self.find(css)}/text"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def webdriver(tmp_path: Path) -> Iterator[WebDriver]:
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.fail("chromium and chromedriver are missing: `make test` installs them (chromium, chromium-driver)")
    port = _free_port()
    proc = subprocess.Popen([driver, f"--port={port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    session = None
    try:
        def ready() -> bool:
            try:
                return bool(httpx.get(f"{base}/status", timeout=2).json()["value"]["ready"])
            except (httpx.HTTPError, ValueError, KeyError):
                return False

        until(ready, 30, "chromedriver")
        options = {"binary": chromium, "args": [*CHROMIUM_ARGS, f"--user-data-dir={tmp_path / 'profile'}"]}
        r = httpx.post(f"{base}/session", timeout=120, json={"capabilities": {"alwaysMatch": {
            "browserName": "chrome", "goog:chromeOptions": options}}})
        assert r.status_code == 200, r.text
        session = r.json()["value"]["sessionId"]
        yield WebDriver(base, session)
    finally:
        if session:
            httpx.delete(f"{base}/session/{session}", timeout=60)
        proc.terminate()
        proc.wait(30)


def test_login_through_a_real_headless_chromium(server_factory, tmp_path: Path, webdriver: WebDriver) -> None:
    """`platform auth login` (docs/reference-auth.md#platform-auth), human login by authorization code +
    PKCE: browser opens, user signs in and consents, the one-time code returns to the loopback listener, the
    access token is stored."""
    srv = server_factory()
    seed_accounts(srv)
    env = client_env(srv, tmp_path)
    run = start_login(env, tmp_path, "auth", "login", "--server", srv.url, "--json")
    webdriver.call("POST", "/url", {"url": run.url()})
    assert "Sign in to" in webdriver.text("h1")
    webdriver.type("#email", ADMIN)
    webdriver.type("#password", PASSWORD)
    webdriver.click("#allow")
    code, out, err = run.finish()
    assert code == 0, err
    assert json.loads(out)["user"] == ADMIN
    until(lambda: "/callback?" in webdriver.call("GET", "/url"), 30, "the loopback page")
    assert "signed in" in webdriver.text("#result")
    token = stored(env)[srv.url]["access_token"]
    assert httpx.get(f"{srv.url}/api/automations", headers={"Authorization": f"Bearer {token}"}).status_code == 200
