"""`platform auth login|status|logout` against a real `platform server`
(docs/reference-auth.md#platform-auth): the browser flow through the consent form, the credentials file."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import httpx
import pytest

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
    start_login,
    stored,
)
from tests.webhooks_fixtures import Server, module_server_factory  # noqa: F401


@pytest.fixture(scope="module")
def servers(module_server_factory, tmp_path_factory: pytest.TempPathFactory) -> tuple[Server, Server]:  # noqa: F811
    """Two servers for the module, each with the organization and its users: every test signs in from its own
    client (HOME, XDG_CONFIG_HOME), so logins, tokens and credentials files are the test's own."""
    a, b = (module_server_factory(data_dir=tmp_path_factory.mktemp(name)) for name in ("a", "b"))
    seed_accounts(a)
    seed_accounts(b)
    return a, b


def test_login_stores_a_prefixed_90_day_token_that_the_api_accepts(servers, tmp_path: Path, agent) -> None:
    """`platform auth login` + access token (docs/reference-auth.md#token-kinds): plt_ prefix, 90 days,
    scope platform:api + org grants."""
    srv = servers[0]
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


def test_status_says_where_the_server_came_from_without_a_network_call(tmp_path: Path) -> None:
    """`platform auth status` (docs/reference-auth.md#platform-auth): flag > PLATFORM_SERVER_URL > built-in
    default; no network call (the servers named here do not exist: status still answers)."""
    from tests.webhooks_fixtures import isolated_env

    env = {**isolated_env(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    default = as_json(platform(env, "auth", "status", "--json"))
    assert default["server"] == "http://127.0.0.1:8080" and default["server_source"] == "default"
    from_env = as_json(platform({**env, "PLATFORM_SERVER_URL": "http://10.255.255.1:9/"}, "auth", "status", "--json"))
    assert from_env["server"] == "http://10.255.255.1:9" and from_env["server_source"] == "env"
    flag = as_json(platform({**env, "PLATFORM_SERVER_URL": "http://a:1"}, "auth", "status", "--server", "http://b:2",
                            "--json"))
    assert flag["server"] == "http://b:2" and flag["server_source"] == "flag" and flag["logged_in"] is False
    ci = as_json(platform({**env, "PLATFORM_TOKEN": "plt_ci_secret"}, "auth", "status", "--json"))
    assert ci["credential_source"] == "env:PLATFORM_TOKEN" and "plt_ci_secret" not in json.dumps(ci)


def test_two_logins_at_once_keep_both_entries_and_logout_removes_only_its_own(
    servers, tmp_path: Path, agent
) -> None:
    """Atomic write under a lock (two concurrent logins lose neither entry:
    docs/reference-auth.md#the-credentials-file); logout (docs/reference-auth.md#platform-auth) removes only
    the resolved server's entry; the token stays valid server-side."""
    a, b = servers
    env = client_env(a, tmp_path)
    first = start_login(env, tmp_path / "ra", "auth", "login", "--server", a.url)
    second = start_login(env, tmp_path / "rb", "auth", "login", "--server", b.url)
    pages = [(run, run.url()) for run in (first, second)]
    answers = [agent.consent(url) for _, url in pages]
    for answer in answers:  # both codes delivered before either CLI writes the file
        assert answer.location
        agent.follow(answer.location)
    assert first.finish()[0] == 0 and second.finish()[0] == 0
    entries = stored(env)
    assert set(entries) == {a.url, b.url}
    token_a = entries[a.url]["access_token"]
    out = as_json(platform(env, "auth", "logout", "--server", a.url, "--json"))
    assert out["removed"] is True
    assert set(stored(env)) == {b.url}
    again = as_json(platform(env, "auth", "logout", "--server", a.url, "--json"))
    assert again["removed"] is False
    assert httpx.get(f"{a.url}/api/automations", headers={"Authorization": f"Bearer {token_a}"}).status_code == 200


def _write_credentials(env: dict[str, str], text: str, file_mode: int) -> Path:
    path = Path(env["XDG_CONFIG_HOME"]) / "framework" / "credentials.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.chmod(path, file_mode)
    return path


def test_a_0644_credentials_file_is_narrowed_to_0600_with_a_warning(tmp_path: Path) -> None:
    """Credentials file with mode 0644 -> warn and fix (docs/reference-auth.md#the-credentials-file)."""
    from tests.webhooks_fixtures import isolated_env

    env = {**isolated_env(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    entry = {"access_token": "plt_x", "expires_at": time.time() + 3600, "user": "u@example.com"}
    path = _write_credentials(env, json.dumps({"version": 1, "entries": {"http://s:1": entry}}), 0o644)
    done = platform(env, "auth", "status", "--server", "http://s:1", "--json")
    doc = as_json(done)
    assert doc["logged_in"] is True and mode(path) == 0o600
    assert "0644" in done.stderr and "warning" in done.stderr and "plt_x" not in done.stderr + done.stdout


def test_a_corrupt_credentials_file_is_a_clear_error_and_is_kept(servers, tmp_path: Path) -> None:
    """Corrupt credentials file (docs/reference-auth.md#the-credentials-file) -> clear error naming it, file
    kept as it was (status, logout, and login before any browser opens)."""
    srv = servers[0]
    env = client_env(srv, tmp_path)
    path = _write_credentials(env, '{"version": 1, "entries": {"http://s:1": {"access_tok', 0o600)
    before = path.read_bytes()
    for args in (("auth", "status"), ("auth", "logout", "--server", "http://s:1"),
                 ("auth", "login", "--server", srv.url, "--timeout", "5")):
        done = platform(env, *args, "--json")
        doc = as_json(done)
        assert done.returncode == 1 and doc["error"]["code"] == "credentials_file", args
        assert str(path) in done.stderr and "corrupt" in done.stderr and "Traceback" not in done.stderr
        assert path.read_bytes() == before
