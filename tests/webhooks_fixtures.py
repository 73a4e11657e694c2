"""Shared fixtures for the webhook/server tests: a real `platform server` process on 127.0.0.1
port 0 (subprocess, so it can be SIGKILLed), its admin token, and CLI helpers."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cli_fork
import httpx
import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tls() -> Any:
    """One TLS context for every request these helpers make: httpx builds a new one (loading the CA bundle,
    ~35 ms of CPU) for each `httpx.get`/`httpx.request` otherwise, and the polls below call them every 50 ms.
    The servers here are plain http://127.0.0.1, so nothing about a request changes."""
    import ssl

    global _TLS
    if _TLS is None:
        _TLS = ssl.create_default_context()
    return _TLS


_TLS: Any = None
WORKFLOW = """name: echo-trigger
model:
  provider: scripted
  steps:
    - message: "ref={{trigger.payload.body.ref}}"
instructions: Report the webhook payload.
"""


def isolated_env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "DATABASE_DRIVER", "PLATFORM_SERVER_URL", "PLATFORM_TOKEN")
    }
    env.update(
        HOME=str(tmp / "home"),
        XDG_CACHE_HOME=str(tmp / "cache"),
        FRAMEWORK_LEDGER_HOME=str(tmp / "ledger"),
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


@dataclass
class Server:
    proc: subprocess.Popen[str]
    url: str
    token: str
    data_dir: Path
    env: dict[str, str]
    lines: list[str] = field(default_factory=list)

    def cli(self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None) -> Any:
        full = {**self.env, "PLATFORM_SERVER_URL": self.url, "PLATFORM_TOKEN": self.token, **(env or {})}
        return cli_fork.run(
            [sys.executable, "-m", "app.main", "platform", *args],
            cwd=ROOT,
            env=full,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=60,
        )

    def cli_json(
        self, *args: str, stdin: str | None = None, env: dict[str, str] | None = None
    ) -> dict[str, Any]:
        done = self.cli(*args, "--json", stdin=stdin, env=env)
        doc = json.loads(done.stdout)
        assert doc["exit_code"] == done.returncode, done.stderr
        return doc

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()


def start_server(data_dir: Path, env: dict[str, str], token: str | None = None, *args: str) -> Server:
    proc = cli_fork.popen(
        [
            sys.executable,
            "-m",
            "app.main",
            "platform",
            "server",
            "--port",
            "0",
            "--data-dir",
            str(data_dir),
            *args,
        ],
        cwd=ROOT,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    lines: queue.Queue[str] = queue.Queue()
    seen: list[str] = []

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line)
            seen.append(line)

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + 60
    url = None
    while url is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0 or proc.poll() is not None:
            proc.kill()
            raise AssertionError("server did not start:\n" + "".join(seen))
        try:
            line = lines.get(timeout=min(remaining, 1))
        except queue.Empty:
            continue
        if line.startswith("admin API token"):
            token = line.rsplit(" ", 1)[1].strip()
        if line.startswith("platform server listening on "):
            url = line.rsplit(" ", 1)[1].strip()
    if not token:
        proc.kill()
        proc.wait()
        raise AssertionError("first start prints the admin token:\n" + "".join(seen))
    return Server(proc=proc, url=url, token=token, data_dir=data_dir, env=env, lines=seen)


def _factory(tmp: Path) -> tuple[Callable[..., Server], list[Server]]:
    started: list[Server] = []

    def make(
        data_dir: Path | None = None,
        token: str | None = None,
        extra_env: dict[str, str] | None = None,
        args: tuple[str, ...] = (),
    ) -> Server:
        env = isolated_env(tmp, **(extra_env or {}))
        srv = start_server(data_dir or tmp / "data", env, token, *args)
        started.append(srv)
        return srv

    return make, started


@pytest.fixture
def server_factory(tmp_path: Path) -> Iterator[Callable[..., Server]]:
    make, started = _factory(tmp_path)
    yield make
    for srv in started:
        srv.stop()


@pytest.fixture(scope="module")
def module_server_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Server]]:
    """server_factory for a module whose tests can share one server (each test's state its own)."""
    make, started = _factory(tmp_path_factory.mktemp("server"))
    yield make
    for srv in started:
        srv.stop()


@pytest.fixture
def server(server_factory: Callable[..., Server]) -> Server:
    return server_factory()


def api(srv: Server, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    r = httpx.request(
        method,
        f"{srv.url}/api{path}",
        json=body,
        timeout=30,
        headers={"Authorization": f"Bearer {srv.token}"},
        verify=_tls(),
    )
    assert r.status_code == 200, r.text
    return r.json()


def make_trigger(
    srv: Server,
    tmp: Path,
    automation: str = "triage",
    trigger: str = "ci",
    webhook: dict[str, Any] | None = None,
    *,
    filter: str | None = None,
    secret: str | None = None,
    workflow: str = WORKFLOW,
) -> dict[str, Any]:
    """Create automation + trigger through the admin API and activate it; the activation document.
    (The CLI over the same API is exercised in test_webhooks_cli.py.)"""
    names = [a["name"] for a in api(srv, "GET", "/automations")["automations"]]
    if automation not in names:
        api(srv, "POST", "/automations", {"name": automation, "workflow": workflow})
    definition: dict[str, Any] = {"name": trigger, "webhook": webhook or {}}
    if filter is not None:
        definition["filter"] = filter
    api(srv, "POST", f"/automations/{automation}/triggers", {"definition": definition})
    return api(srv, "POST", f"/automations/{automation}/triggers/{trigger}/activate", {"hmac_secret": secret})


def history(
    srv: Server, automation: str = "triage", trigger: str | None = None, limit: int = 1000
) -> list[dict]:
    params: dict[str, Any] = {"limit": limit}
    if trigger:
        params["trigger"] = trigger
    r = httpx.get(
        f"{srv.url}/api/automations/{automation}/history",
        params=params,
        headers={"Authorization": f"Bearer {srv.token}"},
        timeout=30,
        verify=_tls(),
    )
    r.raise_for_status()
    return r.json()["deliveries"]


class ActivatedStore:
    """A SQLite platform store made in this process with the engine's own migrations, holding automation
    `name` with one activated trigger (`trigger_id`, `token`): what a recorder test writes deliveries into."""

    def __init__(self, data_dir: Path, name: str) -> None:
        from engine.hooks import automations
        from engine.hooks.models import TriggerDefinition
        from engine.hooks.secrets import SecretBox
        from engine.serverstore import migrations, store

        self.data_dir = data_dir
        self.path = data_dir / "platform.db"
        self.engine = store.open_engine(f"sqlite:///{self.path}")
        migrations.up(self.engine)
        self.box = SecretBox(data_dir)
        automations.create_automation(self.engine, name, f"name: {name}\nmodel:\n  provider: scripted\n  steps: []\n")
        trigger = automations.add_trigger(self.engine, name, TriggerDefinition(name="hook"), "http://127.0.0.1")
        act = automations.activate(self.engine, self.box, name, "hook", None, "http://127.0.0.1")
        self.trigger_id = trigger.id
        self.token = act.token


def activated_store(tmp_path: Path, made: Callable[[Path], ActivatedStore]) -> Iterator[Any]:
    """`made` on a fresh 0700 data directory, its engine disposed after the test."""
    data_dir = tmp_path / "data"
    data_dir.mkdir(mode=0o700)
    store = made(data_dir)
    yield store
    store.engine.dispose()
