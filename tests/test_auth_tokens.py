"""`platform auth token create|list|revoke` and `framework-credential` against real servers,
and several server processes on one PostgreSQL database (docs/reference-auth.md#token-kinds,
docs/reference-auth.md#one-verifier-its-cache-and-revocation)."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.auth_fixtures import (  # noqa: F401
    MEMBER,
    agent,
    as_json,
    client_env,
    login,
    platform,
    seed_accounts,
    server_factory,
    stored,
)
from tests.pg_fixtures import pg_url  # noqa: F401


def status(url: str, token: str, path: str = "/api/automations") -> int:
    return httpx.get(f"{url}{path}", headers={"Authorization": f"Bearer {token}"}).status_code


def test_api_tokens_create_list_revoke(server_factory, tmp_path: Path, agent) -> None:
    """docs/reference-auth.md#token-kinds: token create needs a consented browser login, prints once and stores nothing;
    same name replaces; list is metadata only; revoke by name or id takes effect at once; a token
    never mints a token."""
    srv = server_factory()
    seed_accounts(srv)
    env = client_env(srv, tmp_path)
    login(srv, env, tmp_path, agent)
    before = stored(env)
    made = as_json(platform(env, "auth", "token", "create", "--name", "ci", "--server", srv.url, "--json"))
    token = made["token"]
    assert token.startswith("plt_") and made["name"] == "platform-cli@ci" and made["scope"] == "platform:api"
    assert 89 * 86400 < made["expires_in"] <= 90 * 86400
    assert stored(env) == before  # not stored
    assert status(srv.url, token) == 200
    plain = platform(env, "auth", "token", "create", "--name", "ci", "--server", srv.url)
    assert plain.returncode == 0 and plain.stdout.strip().startswith("plt_")
    replacement = plain.stdout.strip()
    assert status(srv.url, token) == 401 and status(srv.url, replacement) == 200  # replaced
    listed = platform(env, "auth", "token", "list", "--server", srv.url, "--json")
    doc = as_json(listed)
    assert [t["name"] for t in doc["tokens"]] == ["platform-cli@ci"]
    assert "plt_" not in listed.stdout
    human = platform(env, "auth", "token", "list", "--server", srv.url)
    assert human.returncode == 0 and "platform-cli@ci" in human.stdout and "plt_" not in human.stdout
    # A token never mints a token: PLATFORM_TOKEN (an API token) is refused, so is the admin token.
    for machine in (replacement, srv.token):
        refused = platform({**env, "PLATFORM_TOKEN": machine}, "auth", "token", "create", "--name", "x",
                           "--server", srv.url, "--json")
        assert refused.returncode == 1 and "never mints a token" in as_json(refused)["error"]["message"]
    by_id = doc["tokens"][0]["id"]
    revoked = as_json(platform(env, "auth", "token", "revoke", by_id, "--server", srv.url, "--json"))
    assert revoked["revoked"] == [by_id]
    assert status(srv.url, replacement) == 401  # at once: revoke answered after the cache TTL
    gone = platform(env, "auth", "token", "revoke", "ci", "--server", srv.url, "--json")
    assert gone.returncode == 1 and as_json(gone)["error"]["code"] == "not_found"


def test_framework_credential_is_deploy_secret_domain_only_and_at_most_an_hour(
    server_factory, tmp_path: Path, agent
) -> None:
    """docs/reference-auth.md#token-kinds: framework-credential -> control-plane token with only deploy, secret, domain
    authority, at most 1 hour; PLATFORM_TOKEN skips login; a control-plane token cannot renew itself."""
    srv = server_factory()
    seed_accounts(srv, permissions=("deploy:read", "deploy:write", "domain:read"))
    env = client_env(srv, tmp_path, "member")
    login(srv, env, tmp_path, agent, email=MEMBER)
    doc = as_json(platform(env, "auth", "framework-credential", "--server", srv.url, "--json"))
    assert doc["scope"].split() == ["deploy:read", "deploy:write", "domain:read"]
    assert 0 < doc["expires_in"] <= 3600
    cp = doc["token"]
    assert status(srv.url, cp) == 403  # valid, but no platform:api: insufficient_scope on the admin API
    who = httpx.get(f"{srv.url}/api/auth/whoami", headers={"Authorization": f"Bearer {cp}"}).json()
    assert who["kind"] == "control_plane" and who["user"] == MEMBER and "platform:api" not in who["scope"]
    again = platform({**env, "PLATFORM_TOKEN": cp}, "auth", "framework-credential", "--server", srv.url, "--json")
    assert again.returncode == 1
    api_token = as_json(platform(env, "auth", "token", "create", "--name", "ci", "--server", srv.url, "--json"))
    ci = platform({**env, "PLATFORM_TOKEN": api_token["token"]}, "auth", "framework-credential", "--server",
                  srv.url, "--json")
    assert ci.returncode == 0 and as_json(ci)["expires_in"] <= 3600


def test_server_processes_on_one_postgres_accept_each_others_tokens_and_revocations(
    server_factory, tmp_path: Path, agent, pg_url: str
) -> None:
    """docs/reference-auth.md#one-verifier-its-cache-and-revocation: several server processes on one
    PostgreSQL database accept each other's tokens; a revocation through one is in force on the other when
    it answers (no stale cache)."""
    env = {"DATABASE_URL": pg_url}
    a = server_factory(data_dir=tmp_path / "a", extra_env=env)
    b = server_factory(data_dir=tmp_path / "b", token=a.token, extra_env=env)
    seed_accounts(a)
    user_env = client_env(a, tmp_path)
    login(a, user_env, tmp_path, agent)  # signed in through server a
    token = stored(user_env)[a.url]["access_token"]
    assert status(b.url, token) == 200 and status(b.url, a.token) == 200  # b accepts a's token and admin token
    b_env = {**user_env, "PLATFORM_TOKEN": token}
    made = as_json(platform({**user_env}, "auth", "token", "create", "--name", "ci", "--server", a.url, "--json"))
    for _ in range(3):  # b caches the API token
        assert status(b.url, made["token"]) == 200
    listed = as_json(platform(b_env, "auth", "token", "list", "--server", b.url, "--json"))
    assert [t["name"] for t in listed["tokens"]] == ["platform-cli@ci"]
    revoked = as_json(platform(user_env, "auth", "token", "revoke", "ci", "--server", a.url, "--json"))
    assert revoked["revoked"] == [made["id"]]
    assert status(b.url, made["token"]) == 401  # b's cached entry was already out of date
