"""`framework login|logout` and `framework cloud status|token ...` against real `platform server`s
as control planes (`framework login` and `cloud`, credential precedence:
docs/reference-auth.md#framework-login-logout-cloud)."""

from __future__ import annotations

import sys
from pathlib import Path

import cli_fork
import httpx
import pytest

from tests.auth_fixtures import (  # noqa: F401
    ADMIN,
    MEMBER,
    ROOT,
    agent,
    as_json,
    client_env,
    framework,
    login,
    platform,
    seed_accounts,
    server_factory,
    start_login,
    stored,
)
from tests.webhooks_fixtures import Server, module_server_factory  # noqa: F401


@pytest.fixture(scope="module")
def servers(module_server_factory, tmp_path_factory: pytest.TempPathFactory) -> tuple[Server, Server]:  # noqa: F811
    """Two control planes for the module, each with the organization and its users: every test signs in from
    its own clients (HOME, XDG_CONFIG_HOME) and project; the automation tokens are minted on the first only
    (by one test), the API token of the framework-login test on the second."""
    a, b = (module_server_factory(data_dir=tmp_path_factory.mktemp(name)) for name in ("a", "b"))
    seed_accounts(a)
    seed_accounts(b)
    return a, b


def hosted(name: str, endpoint: str, token_env: str | None = None) -> str:
    extra = f', token_env = "{token_env}"' if token_env else ""
    return f"""import framework

environment = framework.Environment {{
    name = "{name}"
    kind = "hosted"
    control_plane = framework.ControlPlane {{endpoint = "{endpoint}"{extra}}}
    workloads = []
}}
"""


LOCAL = """import framework

environment = framework.Environment {
    name = "dev"
    kind = "local"
    target = framework.Process {}
    workloads = []
}
"""


def project(tmp: Path, envs: dict[str, str]) -> Path:
    root = tmp / "proj"
    (root / "deploy" / "kcl").mkdir(parents=True, exist_ok=True)
    (root / "framework.yaml").write_text("name: authdemo\n")
    for name, source in envs.items():
        (root / "deploy" / "kcl" / name).mkdir(exist_ok=True)
        (root / "deploy" / "kcl" / name / "main.k").write_text(source)
    return root


def whoami(url: str, token: str) -> httpx.Response:
    return httpx.get(f"{url}/api/auth/whoami", headers={"Authorization": f"Bearer {token}"})


def test_framework_login_signs_in_to_every_declared_control_plane_once(servers, tmp_path: Path, agent) -> None:
    """`framework login` (docs/reference-auth.md#framework-login-logout-cloud): with no flag, logs in to
    every distinct control plane the environments declare (authorization code + PKCE at
    <endpoint>/oauth/authorize and /oauth/token); cloud status shows endpoint and credential source; logout
    forgets the project's entries."""
    a, b = servers
    root = project(tmp_path, {"one": hosted("one", a.url), "two": hosted("two", b.url, "B_TOKEN"),
                              "three": hosted("three", a.url)})
    env = client_env(a, tmp_path)
    run = start_login(env, tmp_path, "login", "--json", program="framework", cwd=root)
    for number in (1, 2):  # one browser sign-in per distinct endpoint, in turn
        url = run.url(number=number)
        assert url.startswith((a.url, b.url)) and "/oauth/authorize?" in url and "client_id=framework-cli" in url
        answer = agent.consent(url)
        assert answer.location
        agent.follow(answer.location)
    code, out, err = run.finish()
    assert code == 0, err
    doc = as_json_text(out, code)
    assert {item["endpoint"]: sorted(item["declared_by"]) for item in doc["logins"]} == {
        a.url: ["one", "three"], b.url: ["two"]}
    assert set(stored(env)) == {a.url, b.url}
    status = as_json(framework(env, "cloud", "status", "one", "--json", cwd=root))
    assert status["endpoint"] == a.url and status["credential_source"] == "credentials" and status["user"] == ADMIN
    by_var = as_json(framework({**env, "B_TOKEN": "plt_x"}, "cloud", "status", "two", "--json", cwd=root))
    assert by_var["credential_source"] == "env:B_TOKEN" and "plt_x" not in str(by_var)
    out = as_json(framework(env, "logout", "--json", cwd=root))
    assert sorted(out["removed"]) == sorted([a.url, b.url]) and stored(env) == {}


def as_json_text(out: str, code: int) -> dict:
    import json

    doc = json.loads(out)
    assert doc["exit_code"] == code
    return dict(doc)


def test_automation_tokens_need_an_org_admin_session(servers, tmp_path: Path, agent) -> None:
    """`cloud token create` (docs/reference-auth.md#token-kinds): no acting user; secret printed once (field
    `secret`); minting needs a human org-admin session (machine credentials refused); list never shows secrets;
    revoke is immediate."""
    srv = servers[0]
    root = project(tmp_path, {"cloud": hosted("cloud", srv.url), "dev": LOCAL})
    admin_env = client_env(srv, tmp_path, "admin")
    login(srv, admin_env, tmp_path, agent)
    made = framework(admin_env, "cloud", "token", "create", "--env", "cloud", "--name", "ci", "--scopes",
                     "deploy:read,deploy:write", "--json", cwd=root)
    doc = as_json(made)
    secret = doc["secret"]
    assert secret.startswith("plt_") and doc["scope"] == "deploy:read deploy:write" and "token" not in doc
    who = whoami(srv.url, secret).json()
    assert who["kind"] == "automation" and who["user"] is None and who["scope"] == ["deploy:read", "deploy:write"]
    listed = framework(admin_env, "cloud", "token", "list", "--env", "cloud", "--json", cwd=root)
    assert [t["name"] for t in as_json(listed)["tokens"]] == ["ci"] and secret not in listed.stdout
    # Machine credentials are refused: the automation token itself, an API token, a control-plane token.
    api_token = as_json(platform(admin_env, "auth", "token", "create", "--name", "m", "--server", srv.url,
                                 "--json"))["token"]
    cp_token = as_json(platform(admin_env, "auth", "framework-credential", "--server", srv.url, "--json"))["token"]
    for machine in (secret, api_token, cp_token):
        refused = framework(admin_env, "cloud", "token", "create", "--env", "cloud", "--name", "x", "--scopes",
                            "deploy:read", "--token", machine, "--json", cwd=root)
        assert refused.returncode != 0, refused.stdout
    member_env = client_env(srv, tmp_path, "member")
    login(srv, member_env, tmp_path, agent, email=MEMBER)
    not_admin = framework(member_env, "cloud", "token", "create", "--env", "cloud", "--name", "y", "--scopes",
                          "deploy:read", "--json", cwd=root)
    assert not_admin.returncode == 1 and "admin" in as_json(not_admin)["error"]["message"]
    bad_scope = framework(admin_env, "cloud", "token", "create", "--env", "cloud", "--name", "z", "--scopes",
                          "root", "--json", cwd=root)
    assert bad_scope.returncode == 2
    no_cp = framework(admin_env, "cloud", "status", "dev", "--json", cwd=root)
    assert no_cp.returncode == 2 and "ControlPlane" in as_json(no_cp)["error"]["message"]
    revoked = as_json(framework(admin_env, "cloud", "token", "revoke", "ci", "--env", "cloud", "--json", cwd=root))
    assert len(revoked["revoked"]) == 1
    assert whoami(srv.url, secret).status_code == 401


def test_framework_login_with_a_token_checks_and_stores_it(servers, tmp_path: Path, agent) -> None:
    """`framework login` CI form (docs/reference-auth.md#framework-login-logout-cloud): --token (checked
    against the endpoint, stored); a wrong token is refused and nothing is stored."""
    srv = servers[1]
    env = client_env(srv, tmp_path)
    login(srv, env, tmp_path, agent)
    api_token = as_json(platform(env, "auth", "token", "create", "--name", "ci", "--server", srv.url,
                                 "--json"))["token"]
    ci_env = client_env(srv, tmp_path, "ci")
    wrong = framework(ci_env, "login", "--endpoint", srv.url, "--token", "plt_wrong", "--json")
    assert wrong.returncode == 2 and not (Path(ci_env["XDG_CONFIG_HOME"]) / "framework" / "credentials.json").exists()
    piped = cli_fork.run([sys.executable, "-m", "app.main", "framework", "login", "--endpoint", srv.url, "--token",
                            "-", "--json"], cwd=ROOT, env=ci_env, input=api_token + "\n", capture_output=True,
                           text=True, timeout=60)
    assert as_json(piped)["logins"][0]["user"] == ADMIN
    done = as_json(framework(ci_env, "login", "--endpoint", srv.url, "--token", api_token, "--json"))
    assert done["logins"][0]["credential_source"] == "flag" and done["logins"][0]["user"] == ADMIN
    assert stored(ci_env)[srv.url]["access_token"] == api_token and api_token not in str(done)
