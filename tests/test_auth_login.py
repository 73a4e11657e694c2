"""`platform auth login|status|logout` against a real `platform server` (spec 2 platform auth;
issue 15 items 1, 2, 4): the browser flow through the consent form, the credentials file."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.auth_fixtures import (  # noqa: F401
    ADMIN,
    ConsentAgent,
    agent,
    as_json,
    client_env,
    login,
    mode,
    platform,
    seed_accounts,
    server_factory,
    stored,
)


def test_login_stores_a_prefixed_90_day_token_that_the_api_accepts(server_factory, tmp_path: Path, agent) -> None:
    """Spec 2 platform auth login + access token: plt_ prefix, 90 days, scope platform:api + org grants."""
    srv = server_factory()
    seed_accounts(srv)
    env = client_env(srv, tmp_path)
    doc = login(srv, env, tmp_path, agent)
    assert doc["server"] == srv.url and doc["server_source"] == "flag" and doc["user"] == ADMIN
    assert doc["scope"].split() == ["platform:api", "deploy:read", "deploy:write"]
    assert "access_token" not in str(doc) and "plt_" not in str(doc)
    entry = stored(env)[srv.url]
    assert entry["access_token"].startswith("plt_")
    assert 89.9 * 86400 < entry["expires_at"] - entry["created_at"] <= 90 * 86400
    path = Path(env["XDG_CONFIG_HOME"]) / "framework" / "credentials.json"
    assert mode(path) == 0o600 and mode(path.parent) == 0o700
    r = httpx.get(f"{srv.url}/api/automations", headers={"Authorization": f"Bearer {entry['access_token']}"})
    assert r.status_code == 200, r.text
    # The admin token of the first start goes through the same verifier and still works.
    r = httpx.get(f"{srv.url}/api/automations", headers={"Authorization": f"Bearer {srv.token}"})
    assert r.status_code == 200
