"""The dashboard and login (docs/reference-auth.md#the-dashboard): a status line of who is signed in where (what
`platform auth status` reads, no network call), and the Webhooks screen reaching a real
`platform server` with the stored login instead of PLATFORM_TOKEN."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from app.dashboard import Dashboard
from app.settings import deterministic_settings
from tests.auth_fixtures import agent, client_env, login, seed_accounts, server_factory  # noqa: F401
from tests.test_dashboard import SIZE
from tests.waiting import until_app


def test_header_names_who_is_signed_in_where(demo_project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Status line: each stored login as `user @ server`; none when nobody is signed in."""
    monkeypatch.delenv("PLATFORM_TOKEN", raising=False)

    async def sub_title_after_read() -> str:
        app = Dashboard(project_dir=demo_project, settings=deterministic_settings())
        async with app.run_test(size=SIZE) as pilot:
            await until_app(pilot, lambda: getattr(app, "signin_worker", None) is not None)
            await until_app(pilot, lambda: app.signin_worker.is_finished)
            await pilot.pause()  # the sub-title is set from the worker through call_from_thread
            return str(app.sub_title)

    assert asyncio.run(sub_title_after_read()) == demo_project.name
    from engine.auth import credentials

    credentials.save("http://127.0.0.1:9", credentials.Entry(access_token="plt_secret_x", user="ada@example.com",
                                                            organization="acme", expires_at=time.time() + 60))
    title = asyncio.run(sub_title_after_read())
    assert title == f"{demo_project.name} · signed in: ada@example.com @ http://127.0.0.1:9"
    assert "plt_secret_x" not in title


def test_webhooks_screen_uses_the_stored_login(server_factory, tmp_path: Path, agent, demo_project: Path,  # noqa: F811
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/reference-auth.md#platform-auth: with PLATFORM_TOKEN unset, the Webhooks screen reads the server with the
    login `platform auth login` stored for it."""
    srv = server_factory()
    seed_accounts(srv)
    env = client_env(srv, tmp_path)
    login(srv, env, tmp_path, agent)
    wf = tmp_path / "wf.yaml"
    wf.write_text("name: w\nmodel:\n  provider: scripted\n  steps:\n    - message: hi\ninstructions: x\n")
    made = srv.cli("automation", "create", "triage", "--workflow", str(wf))
    assert made.returncode == 0, made.stderr
    monkeypatch.setenv("XDG_CONFIG_HOME", env["XDG_CONFIG_HOME"])
    monkeypatch.delenv("PLATFORM_TOKEN", raising=False)
    monkeypatch.setenv("PLATFORM_SERVER_URL", srv.url)
    assert "PLATFORM_TOKEN" not in os.environ

    async def scenario() -> None:
        app = Dashboard(project_dir=demo_project, settings=deterministic_settings(refresh_seconds=60))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("6")
            await until_app(pilot, lambda: app.current_mode == "webhooks" and app.screen.loads >= 1)
            status = str(app.screen.query_one("#hooks-status").render())
            assert "not set" not in status and "no login" not in status, status
            assert app.screen.result is not None
            assert [a.name for a in app.screen.result.automations] == ["triage"]
            assert "ada@example.com @ " + srv.url in str(app.sub_title)

    asyncio.run(scenario())
