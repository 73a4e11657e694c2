"""The whole browser flow once, in a real headless Chromium (docs/reference-auth.md): `platform auth
login` opens the page (BROWSER hands the URL over), Chromium, driven by chromedriver over plain
W3C WebDriver HTTP calls, types the email and password and presses Allow; the server redirects
the browser to the CLI's loopback listener, and the CLI stores the token."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.auth_fixtures import ADMIN, PASSWORD, client_env, seed_accounts, server_factory, start_login, stored  # noqa: F401
from tests.browser_fixtures import WebDriver, chromium_session
from tests.waiting import until


@pytest.fixture
def webdriver(tmp_path: Path) -> Iterator[WebDriver]:
    with chromium_session(tmp_path / "profile") as driver:
        yield driver


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
