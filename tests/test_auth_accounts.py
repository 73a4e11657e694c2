"""`platform server org add|grant` and `platform server user add`
(docs/reference-auth.md#accounts-platform-server-org-addgrant-platform-server-user-add: admin
commands for users, organizations and permissions): bad input is a clear error with the
documented exit code, and nothing is half-written."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.auth_fixtures import as_json, platform
from tests.webhooks_fixtures import isolated_env


def test_accounts_commands_and_their_refusals(tmp_path: Path) -> None:
    """Exit 0 on success; 2 for bad input (usage); 1 for not_found / conflict; passwords hashed."""
    env = {**isolated_env(tmp_path), "PW": "long enough pw", "SHORT": "short"}
    data = ("--data-dir", str(tmp_path / "data"))

    def run(*args: str, stdin: str | None = None) -> dict:
        return as_json(platform(env, "server", *args, *data, "--json", stdin=stdin))

    assert run("org", "add", "acme")["name"] == "acme"
    assert run("org", "add", "acme")["error"]["code"] == "conflict"
    assert run("org", "add", "Bad Name")["exit_code"] == 2
    assert run("org", "grant", "acme", "deploy:write", "domain:read")["permissions"] == ["deploy:write", "domain:read"]
    assert run("org", "grant", "acme", "root")["exit_code"] == 2
    assert run("org", "grant", "nope", "deploy:read")["error"]["code"] == "not_found"
    assert run("org", "grant", "acme", "domain:read", "--remove")["permissions"] == ["deploy:write"]
    admin = run("user", "add", "Ada@Example.com", "--org", "acme", "--admin", "--password-env", "PW")
    assert admin["email"] == "ada@example.com" and admin["role"] == "admin"
    piped = run("user", "add", "bob@example.com", "--org", "acme", stdin="from stdin pw\n")
    assert piped["role"] == "member"
    assert run("user", "add", "ada@example.com", "--org", "acme", "--password-env", "PW")["error"]["code"] == "conflict"
    assert run("user", "add", "not-an-email", "--org", "acme", "--password-env", "PW")["exit_code"] == 2
    assert run("user", "add", "c@example.com", "--org", "acme", "--password-env", "SHORT")["exit_code"] == 2
    assert run("user", "add", "c@example.com", "--org", "nope", "--password-env", "PW")["error"]["code"] == "not_found"
    with sqlite3.connect(tmp_path / "data" / "platform.db") as conn:
        rows = conn.execute("SELECT email, password_hash FROM auth_users ORDER BY email").fetchall()
    assert [r[0] for r in rows] == ["ada@example.com", "bob@example.com"]
    for _, hashed in rows:
        assert hashed.startswith("$argon2id$") and "long enough pw" not in hashed and "from stdin" not in hashed
