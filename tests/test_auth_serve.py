"""`platform auth serve --port` (docs/reference-auth.md#platform-auth, `auth serve`): GET /health answers
identity and readiness; POST /oauth/start runs a third-party account OAuth flow against a provider
configured by URL (here a second real `platform server`), opening the browser and waiting for the
callback on this server."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import cli_fork
import httpx
import pytest

from tests.auth_fixtures import (  # noqa: F401
    ADMIN,
    ROOT,
    agent,
    browser_script,
    client_env,
    seed_accounts,
    server_factory,
    stored,
)
from tests.waiting import until


@pytest.fixture
def serve(server_factory, tmp_path: Path) -> Iterator[tuple[str, Path, dict[str, str], object]]:
    provider = server_factory(data_dir=tmp_path / "provider")
    seed_accounts(provider)
    env = client_env(provider, tmp_path)
    script, urls = browser_script(tmp_path)
    proc = cli_fork.popen([sys.executable, "-m", "app.main", "platform", "auth", "serve", "--port", "0"], cwd=ROOT,
                            env={**env, "BROWSER": str(script)}, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in proc.stdout or []], daemon=True).start()
    try:
        first = lines.get(timeout=60)
        assert first.startswith("platform auth serve listening on "), first
        yield first.rsplit(" ", 1)[1].strip(), urls, env, provider
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_health_and_an_account_flow_through_oauth_start(serve, agent) -> None:
    """GET /health: service, version, readiness; POST /oauth/start: browser, callback, token stored."""
    base, urls, env, provider = serve
    health = httpx.get(f"{base}/health").json()
    assert health["service"] == "platform-auth-serve" and health["ready"] is True and health["version"]
    answers: list[httpx.Response] = []
    started = threading.Thread(target=lambda: answers.append(httpx.post(
        f"{base}/oauth/start", json={"provider": provider.url}, timeout=120)))
    started.start()
    url = until(lambda: urls.exists() and urls.read_text().strip(), 60, "the browser to open").splitlines()[0]
    assert url.startswith(f"{provider.url}/oauth/authorize?") and "redirect_uri=http%3A%2F%2F127.0.0.1" in url
    consent = agent.consent(url)
    assert consent.location and consent.location.startswith(f"{base}/oauth/callback?")
    assert agent.follow(consent.location).status_code == 200
    started.join(120)
    assert answers and answers[0].status_code == 200, answers
    doc = answers[0].json()
    assert doc["user"] == ADMIN and doc["stored"] is True and "plt_" not in answers[0].text
    assert stored(env)[provider.url]["program"] == "account"


def test_start_refuses_cross_site_requests(serve) -> None:
    """Only application/json from this loopback Host: a web page cannot start a flow."""
    base, _, _, provider = serve
    form = httpx.post(f"{base}/oauth/start", data={"provider": provider.url})
    assert form.status_code == 415
    rebound = httpx.post(f"{base}/oauth/start", json={"provider": provider.url}, headers={"Host": "evil.example"})
    assert rebound.status_code == 403
    stray = httpx.get(f"{base}/oauth/callback", params={"code": "x", "state": "unknown"})
    assert stray.status_code == 400
