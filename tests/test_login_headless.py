"""Signing in where nobody can answer a browser: no server, no terminal, no browser.

docs/reference-auth.md#framework-login-logout-cloud: the server's metadata is read first (a control
plane that is not there: exit 2 at once, naming its URL, `platform server` and how to point to
another); without a terminal and a browser the command says how to sign in headless (`--token`, the
token variable) instead of waiting for a sign-in nobody can complete. Real closed ports, a real
`platform server`, the programs as real child processes with stdin closed.
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import cli_fork
import pytest

from app.dashboard import Dashboard
from app.settings import deterministic_settings
from screens.environments.domains import DomainsScreen
from tests.deploy_fixtures import Demo
from tests.hosted_fixtures import demo, hosted_env  # noqa: F401
from tests.screen_fixtures import SIZE, environ
from tests.waiting import until_app
from tests.webhooks_fixtures import ROOT, Server, server_factory  # noqa: F401

NO_BROWSER = ("BROWSER", "DISPLAY", "WAYLAND_DISPLAY", "PLATFORM_TOKEN", "FRAMEWORK_CONTROL_PLANE_TOKEN",
              "PLATFORM_SERVER_URL")


@pytest.fixture
def closed_url() -> Iterator[str]:
    """A port bound but never listening: every connection is refused (no race with another listener)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()


def headless_env(tmp: Path) -> dict[str, str]:
    home = tmp / "ci-home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in NO_BROWSER}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"))
    return env


def run(program: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    # the 300 s sign-in wait would blow the 60 s timeout: answering at once is what is checked
    return cli_fork.run([sys.executable, "-m", "app.main", program, *args], cwd=ROOT, env=env, text=True,
                          capture_output=True, stdin=subprocess.DEVNULL, timeout=60, check=False)


def test_framework_login_to_a_closed_port_exits_2_at_once(closed_url: str, tmp_path: Path) -> None:
    """docs/reference-auth.md#framework-login-logout-cloud: a control plane that is not listening is exit 2
    before any browser or sign-in URL, naming the URL, how to start one and how to point to another."""
    env = headless_env(tmp_path)
    done = run("framework", env, "login", "--endpoint", closed_url)
    assert done.returncode == 2, done.stderr
    assert f"cannot reach {closed_url}" in done.stderr
    assert "platform server" in done.stderr and "--endpoint" in done.stderr
    assert "oauth/authorize" not in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "ci-home" / "config" / "framework" / "credentials.json").exists()
    platform = run("platform", env, "auth", "login", "--server", closed_url, "--json")
    assert platform.returncode == 2 and "PLATFORM_SERVER_URL" in platform.stderr
    assert '"code": "server_unreachable"' in platform.stdout


def test_login_without_a_terminal_or_browser_says_how_to_sign_in_headless(
        server_factory, tmp_path: Path) -> None:  # noqa: F811
    """docs/reference-auth.md#framework-login-logout-cloud: with a server listening but no terminal and no
    browser (CI), `framework login` and `platform auth login` exit 2 at once naming the headless ways
    (`--token`, the token variable), print no sign-in URL and store nothing."""
    srv: Server = server_factory()
    env = headless_env(tmp_path)
    done = run("framework", env, "login", "--endpoint", srv.url, "--json")
    assert done.returncode == 2, done.stderr
    assert "--token" in done.stderr and "$FRAMEWORK_CONTROL_PLANE_TOKEN" in done.stderr
    assert "no terminal" in done.stderr and "oauth/authorize" not in done.stderr
    assert '"code": "login_needs_browser"' in done.stdout
    platform = run("platform", env, "auth", "login", "--server", srv.url)
    assert platform.returncode == 2 and "PLATFORM_TOKEN" in platform.stderr
    assert "oauth/authorize" not in platform.stderr
    assert not (tmp_path / "ci-home" / "config" / "framework" / "credentials.json").exists()


def test_domains_view_says_how_to_start_or_point_to_a_control_plane(demo: Demo, closed_url: str) -> None:  # noqa: F811
    """docs/reference-domains.md: the Domains view of an environment whose control plane is not there
    names the URL and says to start one (`platform server`) or point to one."""
    hosted_env(demo, closed_url)

    async def scenario() -> None:
        with environ(demo.env):
            app = Dashboard(project_dir=demo.root, settings=deterministic_settings())
            async with app.run_test(size=SIZE) as pilot:
                screen = DomainsScreen("cloud")
                await app.push_screen(screen)
                await until_app(pilot, lambda: screen.loads >= 1)
                status = str(screen.query_one("#domains-status").render())
                assert f"control plane unreachable at {closed_url}" in status
                assert "platform server" in status and "framework.ControlPlane" in status

    asyncio.run(scenario())
