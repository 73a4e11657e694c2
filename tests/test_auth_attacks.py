"""Bad input and attacks against the authorization server and the login client (authorization code + PKCE,
loopback redirect: docs/reference-auth.md#the-authorization-server-inside-platform-server)."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import signal
import sqlite3
import time
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest

from tests.auth_fixtures import (  # noqa: F401
    ADMIN,
    PASSWORD,
    ConsentAgent,
    agent,
    client_env,
    login,
    platform,
    seed_accounts,
    server_factory,
    start_login,
    stored,
)
from tests.waiting import until
from tests.webhooks_fixtures import module_server_factory  # noqa: F401


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    return verifier, base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


def authorize_url(srv, redirect_uri: str, challenge: str | None, method: str | None = "S256",
                  state: str = "s1", client_id: str = "platform-cli") -> str:
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri, "state": state,
              "scope": "platform:api"}
    if challenge is not None:
        params["code_challenge"] = challenge
    if method is not None:
        params["code_challenge_method"] = method
    return f"{srv.url}/oauth/authorize?{urlencode(params)}"


REDIRECT = "http://127.0.0.1:1/callback"  # nothing listens: the test reads the code from Location


def get_code(srv, agent: ConsentAgent, challenge: str, redirect_uri: str = REDIRECT) -> str:
    answer = agent.consent(authorize_url(srv, redirect_uri, challenge))
    assert answer.status == 302 and answer.location, answer.page
    query = parse_qs(urlsplit(answer.location).query)
    assert query["state"] == ["s1"]
    return query["code"][0]


def exchange(srv, code: str, verifier: str, redirect_uri: str = REDIRECT,
             client_id: str = "platform-cli") -> httpx.Response:
    return httpx.post(f"{srv.url}/oauth/token", data={"grant_type": "authorization_code", "code": code,
                                                      "redirect_uri": redirect_uri, "client_id": client_id,
                                                      "code_verifier": verifier})


def api_status(srv, token: str) -> int:
    return httpx.get(f"{srv.url}/api/automations", headers={"Authorization": f"Bearer {token}"}).status_code


@pytest.fixture(scope="module")
def srv(module_server_factory):
    """One server for the module: every test makes its own codes, logins and tokens."""
    s = module_server_factory()
    seed_accounts(s)
    return s


def db(srv) -> sqlite3.Connection:
    return sqlite3.connect(srv.data_dir / "platform.db", isolation_level=None)


def test_metadata_is_rfc8414_and_advertises_s256_only(srv) -> None:
    """RFC 8414 metadata at /.well-known/oauth-authorization-server; PKCE S256 only
    (docs/reference-auth.md#the-authorization-server-inside-platform-server)."""
    doc = httpx.get(f"{srv.url}/.well-known/oauth-authorization-server").json()
    assert doc["issuer"] == srv.url
    assert doc["authorization_endpoint"] == f"{srv.url}/oauth/authorize"
    assert doc["token_endpoint"] == f"{srv.url}/oauth/token"
    assert doc["code_challenge_methods_supported"] == ["S256"]
    assert doc["grant_types_supported"] == ["authorization_code"]


def test_the_code_exchange_works_once_and_a_replay_revokes_its_token(srv, agent) -> None:
    """Attack: replayed code. The second exchange is refused and the first token is revoked (RFC 6749 4.1.2)."""
    verifier, challenge = pkce()
    code = get_code(srv, agent, challenge)
    first = exchange(srv, code, verifier)
    assert first.status_code == 200, first.text
    token = first.json()["access_token"]
    assert token.startswith("plt_") and first.headers["cache-control"] == "no-store"
    assert api_status(srv, token) == 200
    replay = exchange(srv, code, verifier)
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    until(lambda: api_status(srv, token) == 401, 10, "the token of a replayed code to be revoked")


def test_code_for_another_redirect_uri_is_refused(srv, agent) -> None:
    """Attack: code bound to its redirect URI."""
    verifier, challenge = pkce()
    code = get_code(srv, agent, challenge)
    r = exchange(srv, code, verifier, redirect_uri="http://127.0.0.1:2/callback")
    assert r.status_code == 400 and r.json()["error"] == "invalid_grant"


def test_code_for_another_client_is_refused(srv, agent) -> None:
    """Attack: code bound to its client."""
    verifier, challenge = pkce()
    code = get_code(srv, agent, challenge)
    r = exchange(srv, code, verifier, client_id="framework-cli")
    assert r.status_code == 400 and r.json()["error"] == "invalid_grant"


def test_wrong_verifier_is_refused(srv, agent) -> None:
    """Attack: wrong PKCE verifier."""
    _, challenge = pkce()
    code = get_code(srv, agent, challenge)
    other, _ = pkce()
    r = exchange(srv, code, other)
    assert r.status_code == 400 and r.json()["error"] == "invalid_grant"
    missing = exchange(srv, get_code(srv, agent, challenge), "")
    assert missing.status_code == 400


def test_expired_code_is_refused(srv, agent) -> None:
    """Attack: expired code (codes live minutes; here its expiry is moved to the past)."""
    verifier, challenge = pkce()
    code = get_code(srv, agent, challenge)
    with db(srv) as conn:
        conn.execute("UPDATE auth_codes SET expires_at = 0")
    r = exchange(srv, code, verifier)
    assert r.status_code == 400 and r.json()["error"] == "invalid_grant"


def test_plain_or_missing_pkce_is_refused_at_authorize(srv, agent) -> None:
    """PKCE S256 only, plain refused
    (docs/reference-auth.md#the-authorization-server-inside-platform-server); the error goes back to the
    validated client."""
    verifier, _ = pkce()
    for challenge, method in ((verifier, "plain"), (verifier, None), (None, None)):
        r = agent.open(authorize_url(srv, REDIRECT, challenge, method))
        assert r.status_code == 302, (method, r.text)
        query = parse_qs(urlsplit(r.headers["location"]).query)
        assert query["error"] == ["invalid_request"] and "code" not in query


def test_non_loopback_or_unknown_client_gets_an_error_page_not_a_redirect(srv, agent) -> None:
    """RFC 8252: loopback redirect URIs only (any port); never redirect to an unvalidated URI."""
    _, challenge = pkce()
    for url in (authorize_url(srv, "http://evil.example/cb", challenge),
                authorize_url(srv, "http://localhost:5000/cb", challenge),
                authorize_url(srv, REDIRECT, challenge, client_id="someone-else")):
        r = agent.open(url)
        assert r.status_code == 400 and "location" not in r.headers and "Authorization error" in r.text
    ok = agent.open(authorize_url(srv, "http://[::1]:54321/cb", challenge))
    assert ok.status_code == 200 and "Sign in to" in ok.text


def test_consent_form_needs_its_csrf_token(srv, agent) -> None:
    """CSRF-protected form (double-submit cookie + Origin):
    docs/reference-auth.md#the-authorization-server-inside-platform-server."""
    _, challenge = pkce()
    url = authorize_url(srv, REDIRECT, challenge)
    page = agent.open(url).text
    forged = agent.submit(url, page, override={"csrf_token": "forged"})
    assert forged.status == 403 and forged.location is None
    stranger = ConsentAgent()  # a cross-site post: no cookie
    try:
        answer = stranger.submit(url, page)
        assert answer.status == 403 and answer.location is None
    finally:
        stranger.close()
    cross_origin = agent.http.post(f"{srv.url}/oauth/authorize", headers={"Origin": "http://evil.example"},
                                   data={**agent.form_fields(page), "email": ADMIN, "password": PASSWORD,
                                         "decision": "allow"})
    assert cross_origin.status_code == 403


def test_wrong_password_shows_the_page_again_and_deny_tells_the_client(srv, agent) -> None:
    """Sign-in with argon2-hashed passwords; deny -> access_denied to the client."""
    _, challenge = pkce()
    url = authorize_url(srv, REDIRECT, challenge)
    bad = agent.submit(url, agent.open(url).text, password="wrong password")
    assert bad.status == 401 and "wrong email or password" in bad.page and bad.location is None
    nobody = agent.submit(url, agent.open(url).text, email="nobody@example.com")
    assert nobody.status == 401 and "wrong email or password" in nobody.page
    denied = agent.submit(url, agent.open(url).text, decision="deny")
    assert denied.status == 302 and denied.location
    assert parse_qs(urlsplit(denied.location).query)["error"] == ["access_denied"]
    with db(srv) as conn:
        (hashed,) = conn.execute("SELECT password_hash FROM auth_users WHERE email = ?", (ADMIN,)).fetchone()
    assert hashed.startswith("$argon2id$") and PASSWORD not in hashed


def test_expired_and_revoked_tokens_are_refused(srv, agent, tmp_path: Path) -> None:
    """Attack: expired or revoked token (server side), and an expired login (client side)."""
    env = client_env(srv, tmp_path)
    login(srv, env, tmp_path, agent)
    token = stored(env)[srv.url]["access_token"]
    with db(srv) as conn:
        conn.execute("UPDATE auth_tokens SET expires_at = 1 WHERE kind = 'access'")
    until(lambda: api_status(srv, token) == 401, 10, "the expired token to be refused")
    # Client side: an expired entry is no credential.
    path = Path(env["XDG_CONFIG_HOME"]) / "framework" / "credentials.json"
    doc = json.loads(path.read_text())
    doc["entries"][srv.url]["expires_at"] = time.time() - 1
    path.write_text(json.dumps(doc))
    status = json.loads(platform(env, "auth", "status", "--server", srv.url, "--json").stdout)
    assert status["logged_in"] is False and status["expired"] is True
    listed = platform(env, "auth", "token", "list", "--server", srv.url)
    assert listed.returncode != 0 and "expired" in listed.stderr


def test_token_of_another_server_is_refused(srv, server_factory, tmp_path: Path, agent) -> None:
    """Attack: token of another server; and no server is current (docs/reference-auth.md#platform-auth,
    `auth login`)."""
    a, b = srv, server_factory(data_dir=tmp_path / "b")  # the module's server and one of this test's own
    seed_accounts(b)
    env = client_env(a, tmp_path)
    login(a, env, tmp_path, agent)
    token = stored(env)[a.url]["access_token"]
    assert api_status(a, token) == 200 and api_status(b, token) == 401
    other = json.loads(platform(env, "auth", "status", "--server", b.url, "--json").stdout)
    assert other["logged_in"] is False and other["server"] == b.url
    refused = platform(env, "auth", "token", "list", "--server", b.url)
    assert refused.returncode != 0 and f"no login for {b.url}" in refused.stderr


def _port_of(url: str) -> int:
    redirect = parse_qs(urlsplit(url).query)["redirect_uri"][0]
    port = urlsplit(redirect).port
    assert port
    return port


def _closed(port: int) -> bool:
    try:
        httpx.get(f"http://127.0.0.1:{port}/callback", timeout=2)
    except httpx.ConnectError:
        return True
    return False


def test_wrong_state_is_ignored_and_the_real_answer_still_signs_in(srv, agent, tmp_path: Path) -> None:
    """Attack: wrong state parameter on the loopback listener (refused, never exchanged)."""
    env = client_env(srv, tmp_path)
    run = start_login(env, tmp_path, "auth", "login", "--server", srv.url, "--json")
    url = run.url()
    port = _port_of(url)
    forged = httpx.get(f"http://127.0.0.1:{port}/callback", params={"code": "attacker-code", "state": "guess"})
    assert forged.status_code == 400 and "state mismatch" in forged.text
    answer = agent.consent(url)
    assert answer.location
    assert agent.follow(answer.location).status_code == 200
    code, out, err = run.finish()
    assert code == 0, err
    assert json.loads(out)["user"] == ADMIN and _closed(port)


def test_login_timeout_closes_the_listener_and_exits_non_zero(srv, tmp_path: Path) -> None:
    """Login timed out: the loopback listener closes, exit non-zero, nothing stored."""
    env = client_env(srv, tmp_path)
    run = start_login(env, tmp_path, "auth", "login", "--server", srv.url, "--timeout", "2", "--json")
    port = _port_of(run.url())
    httpx.get(f"http://127.0.0.1:{port}/callback", params={"code": "x", "state": "wrong"})
    code, out, err = run.finish()
    assert code == 1 and json.loads(out)["error"]["code"] == "login_timed_out"
    assert _closed(port)
    assert not (Path(env["XDG_CONFIG_HOME"]) / "framework" / "credentials.json").exists()


def test_login_cancelled_closes_the_listener_and_exits_130(srv, tmp_path: Path) -> None:
    """Login cancelled (Ctrl-C): the loopback listener closes, exit 130."""
    env = client_env(srv, tmp_path)
    run = start_login(env, tmp_path, "auth", "login", "--server", srv.url)
    port = _port_of(run.url())
    assert not _closed(port)
    run.proc.send_signal(signal.SIGINT)
    code, _, err = run.finish()
    assert code == 130 and "Traceback" not in err
    assert _closed(port)


def test_no_secret_in_server_output_cli_json_or_crash_files(srv, agent, tmp_path: Path) -> None:
    """No token or secret in logs (docs/reference-auth.md#the-credentials-file), --json (except where
    printed once) or crash files."""
    env = client_env(srv, tmp_path)
    doc = login(srv, env, tmp_path, agent)
    token = stored(env)[srv.url]["access_token"]
    status = platform(env, "auth", "status", "--server", srv.url, "--json")
    listed = platform(env, "auth", "token", "list", "--server", srv.url, "--json")
    for text in (json.dumps(doc), status.stdout, status.stderr, listed.stdout, listed.stderr, "".join(srv.lines)):
        assert token not in text and PASSWORD not in text
    crash = Path(env["XDG_CACHE_HOME"]) / "framework" / "crash"
    assert not crash.exists() or not any(crash.iterdir())
    with db(srv) as conn:
        rows = conn.execute("SELECT token_hash FROM auth_tokens").fetchall()
    assert rows and all(token not in r[0] for r in rows)


def test_plain_http_off_loopback_is_refused(srv, agent) -> None:
    """OAuth over plain http only on loopback (RFC 8252 / authlib's transport check): a request
    that arrives for another host name over http gets an error, not a sign-in page or a token."""
    _, challenge = pkce()
    page = agent.http.get(authorize_url(srv, REDIRECT, challenge), headers={"Host": "platform.example"})
    assert page.status_code == 400 and "https" in page.text and "id=password" not in page.text
    token = httpx.post(f"{srv.url}/oauth/token", headers={"Host": "platform.example"},
                       data={"grant_type": "authorization_code", "code": "x", "client_id": "platform-cli"})
    assert token.status_code == 400 and token.json()["error"] == "insecure_transport"
