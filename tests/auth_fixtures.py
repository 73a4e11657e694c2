"""Shared fixtures for the login tests: a real `platform server` with an organization and users,
`platform auth login` run as a child process whose BROWSER is a script that hands the page URL to
the test, and `ConsentAgent`, an httpx user agent that fills and submits the consent form as a
browser would (cookie, CSRF field, hidden fields, then follows the redirect to the loopback)."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from html import unescape
from pathlib import Path
from typing import Any

import cli_fork
import httpx
import pytest

from tests.waiting import until
from tests.webhooks_fixtures import ROOT, Server, server_factory  # noqa: F401

PASSWORD = "correct horse battery"
ADMIN = "ada@example.com"
MEMBER = "bob@example.com"


def platform(env: dict[str, str], *args: str, stdin: str | None = None, timeout: float = 60) -> Any:
    return cli_fork.run([sys.executable, "-m", "app.main", "platform", *args], cwd=ROOT, env=env, input=stdin,
                          capture_output=True, text=True, timeout=timeout)


def framework(env: dict[str, str], *args: str, cwd: Path | None = None, timeout: float = 60) -> Any:
    return cli_fork.run([sys.executable, "-m", "app.main", "framework", *args], cwd=cwd or ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def as_json(done: Any) -> dict[str, Any]:
    doc = json.loads(done.stdout)
    assert doc["exit_code"] == done.returncode, done.stderr
    return doc


def seed_accounts(srv: Server, org: str = "acme",
                  permissions: tuple[str, ...] = ("deploy:read", "deploy:write"), *, cli: bool = False) -> None:
    """An organization with grants, an admin and a member, written to the server's store: through the
    admin commands with `cli=True` (tests/test_auth_accounts.py covers those commands), else with the
    same engine calls in this process (a SQLite-backed server only), which is what the commands run."""
    if cli or "DATABASE_URL" in srv.env:
        env = {**srv.env, "PW": PASSWORD}
        for args in (("org", "add", org), ("org", "grant", org, *permissions),
                     ("user", "add", ADMIN, "--org", org, "--admin", "--password-env", "PW"),
                     ("user", "add", MEMBER, "--org", org, "--password-env", "PW")):
            done = platform(env, "server", *args, "--data-dir", str(srv.data_dir))
            assert done.returncode == 0, done.stderr
        return
    from engine.auth.accounts import add_org, add_user, grant, server_store

    store = server_store(srv.data_dir)
    try:
        add_org(store, org)
        grant(store, org, list(permissions))
        add_user(store, ADMIN, PASSWORD, org, "admin")
        add_user(store, MEMBER, PASSWORD, org, "member")
    finally:
        store.dispose()


@dataclass
class Consent:
    """What the consent form answered: the redirect target (the loopback callback), or a page."""

    status: int
    location: str | None
    page: str


class ConsentAgent:
    """A browser-like httpx client: GET the authorize page, POST its form (cookies kept)."""

    def __init__(self) -> None:
        self.http = httpx.Client(timeout=30, follow_redirects=False)

    def close(self) -> None:
        self.http.close()

    def open(self, url: str) -> httpx.Response:
        return self.http.get(url)

    @staticmethod
    def form_fields(page: str) -> dict[str, str]:
        hidden = re.finditer(r'<input type=hidden name="?([^" >]+)"? value="([^"]*)"', page)
        return {unescape(m[1]): unescape(m[2]) for m in hidden}

    def submit(self, page_url: str, page: str, email: str = ADMIN, password: str = PASSWORD,
               decision: str = "allow", override: dict[str, str] | None = None) -> Consent:
        fields = {**self.form_fields(page), "email": email, "password": password, "decision": decision,
                  **(override or {})}
        parsed = httpx.URL(page_url)
        origin = f"{parsed.scheme}://{parsed.host}:{parsed.port}"
        r = self.http.post(httpx.URL(page_url).join("/oauth/authorize"), data=fields, headers={"Origin": origin})
        return Consent(r.status_code, r.headers.get("location"), r.text)

    def consent(self, url: str, **kw: Any) -> Consent:
        page = self.open(url)
        assert page.status_code == 200, page.text
        return self.submit(url, page.text, **kw)

    def follow(self, location: str) -> httpx.Response:
        """Deliver the redirect to the loopback listener, as the browser does."""
        return self.http.get(location)


@pytest.fixture
def agent() -> Iterator[ConsentAgent]:
    a = ConsentAgent()
    yield a
    a.close()


def browser_script(tmp: Path) -> tuple[Path, Path]:
    """A BROWSER command that hands the URL to the test (the file `urls`) and exits."""
    tmp.mkdir(parents=True, exist_ok=True)
    urls = tmp / "browser-urls"
    script = tmp / "browser.sh"
    script.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$1\" >> '{urls}'\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return script, urls


@dataclass
class LoginRun:
    proc: subprocess.Popen[str]
    urls: Path

    def url(self, timeout: float = 30, number: int = 1) -> str:
        """The URL of the `number`th browser opening (1-based)."""

        def first() -> str | None:
            lines = self.urls.read_text().splitlines() if self.urls.exists() else []
            if len(lines) >= number:
                return lines[number - 1]
            assert self.proc.poll() is None, self.proc.communicate()
            return None

        return str(until(first, timeout, "the browser to be opened"))

    def finish(self, timeout: float = 60) -> tuple[int, str, str]:
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            raise
        return self.proc.returncode, out, err


def start_login(env: dict[str, str], tmp: Path, *args: str, program: str = "platform",
                cwd: Path | None = None) -> LoginRun:
    script, urls = browser_script(tmp)
    urls.unlink(missing_ok=True)
    command = [sys.executable, "-m", "app.main", program, *args]
    proc = cli_fork.popen(command, cwd=cwd or ROOT, env={**env, "BROWSER": str(script)}, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return LoginRun(proc, urls)


def client_env(srv: Server, tmp: Path, name: str = "client") -> dict[str, str]:
    """A user's shell: own HOME and XDG_CONFIG_HOME, no PLATFORM_TOKEN."""
    home = tmp / name
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in srv.env.items() if k not in ("PLATFORM_TOKEN", "PLATFORM_SERVER_URL")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"))
    return env


def login(srv: Server, env: dict[str, str], tmp: Path, agent: ConsentAgent, email: str = ADMIN) -> dict[str, Any]:
    """`platform auth login --server <srv>` driven through the consent form; its --json document."""
    run = start_login(env, tmp, "auth", "login", "--server", srv.url, "--json")
    answer = agent.consent(run.url(), email=email)
    assert answer.status == 302 and answer.location, answer.page
    agent.follow(answer.location)
    code, out, err = run.finish()
    assert code == 0, err
    return dict(json.loads(out))


def stored(env: dict[str, str]) -> dict[str, Any]:
    path = Path(env["XDG_CONFIG_HOME"]) / "framework" / "credentials.json"
    return dict(json.loads(path.read_text())["entries"])


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


Factory = Callable[..., Server]
