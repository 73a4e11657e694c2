"""Shared fixtures for the daemon tests (docs/reference-daemon.md): a real `platform server` (gateway on port 0,
short heartbeats), an organization and a browser login driven through the consent form, a
registered daemon, and `platform daemon start` as a real child process with its own HOME.
`Stack.api` calls the server's daemon API with the login token."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cli_fork
import httpx
import pytest

from tests.auth_fixtures import ConsentAgent, client_env, login, seed_accounts, stored
from tests.waiting import until
from tests.webhooks_fixtures import ROOT, Server, _tls, isolated_env, start_server

HEARTBEAT_MS = "300"
FAST = {"PLATFORM_DAEMON_HEARTBEAT_MS": HEARTBEAT_MS, "PLATFORM_DAEMON_BACKOFF_MS": "100",
        "PLATFORM_DAEMON_BACKOFF_CAP_MS": "800", "PLATFORM_DAEMON_POLL_MS": "100", "GRPC_VERBOSITY": "NONE",
        "PLATFORM_AUTH_CACHE_TTL_MS": "200"}


def gateway_of(srv: Server) -> str:
    line = until(lambda: next((x for x in srv.lines if x.startswith("daemon gateway listening on ")), None),
                    30, "the gateway line")
    return str(line.rsplit(" ", 1)[1].strip())


def platform(env: dict[str, str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return cli_fork.run([sys.executable, "-m", "app.main", "platform", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)


def doc_of(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    doc = json.loads(done.stdout)
    assert doc["exit_code"] == done.returncode, done.stderr
    return dict(doc)


@dataclass
class Stack:
    srv: Server
    env: dict[str, str]
    token: str
    work: Path
    name: str = "dev"
    daemons: list[subprocess.Popen[str]] = field(default_factory=list)

    @property
    def instance(self) -> Path:
        return Path(self.env["HOME"]) / ".platform" / "instances" / self.name

    def record(self) -> dict[str, Any]:
        try:
            return dict(json.loads((self.instance / "runtime.json").read_text()))
        except (OSError, ValueError):
            return {}

    def api(self, method: str, path: str, url: str | None = None, **kw: Any) -> httpx.Response:
        return httpx.request(method, (url or self.srv.url) + "/api/daemons" + path, timeout=60,
                             headers={"Authorization": f"Bearer {self.token}"}, verify=_tls(), **kw)

    def start(self, *extra: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        log = open(self.work.parent / f"daemon-{len(self.daemons)}.out", "w")  # noqa: SIM115
        proc = cli_fork.popen([sys.executable, "-m", "app.main", "platform", "daemon", "start", "--name",
                                 self.name, "--root", str(self.work), *extra], cwd=ROOT,
                                env={**self.env, **(env or {})}, stdout=log, stderr=subprocess.STDOUT, text=True)
        self.daemons.append(proc)
        return proc

    def connected(self, instance_id: str | None = None, timeout: float = 30) -> dict[str, Any]:
        def ready() -> dict[str, Any] | None:
            rec = self.record()
            ok = (rec.get("stream") or {}).get("connected") and rec.get("state") == "connected"
            return rec if ok and (instance_id is None or rec.get("instance_id") != instance_id) else None

        return dict(until(ready, timeout, "the daemon to connect"))

    def listed(self, url: str | None = None) -> list[dict[str, Any]]:
        return list(self.api("GET", "", url).json()["daemons"])

    def stop_all(self) -> None:
        for proc in self.daemons:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def make_stack(tmp: Path, server: Server | None = None, extra_env: dict[str, str] | None = None) -> Stack:
    srv = server or start_server(tmp / "data", isolated_env(tmp, **{**FAST, **(extra_env or {})}), None,
                                 "--gateway-port", "0")
    gateway_of(srv)
    seed_accounts(srv)
    agent = ConsentAgent()
    try:
        env = {**client_env(srv, tmp), **FAST}
        login(srv, env, tmp, agent)
    finally:
        agent.close()
    token = stored(env)[srv.url.rstrip("/")]["access_token"]
    work = tmp / "work"
    work.mkdir()
    return Stack(srv=srv, env=env, token=token, work=work)


def registered(stack: Stack) -> dict[str, Any]:
    done = platform(stack.env, "daemon", "register", "--name", stack.name, "--server", stack.srv.url, "--json")
    assert done.returncode == 0, done.stderr
    return doc_of(done)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """One server, one login, one registered and connected daemon `dev` for a test module."""
    tmp = tmp_path_factory.mktemp("daemon")
    s = make_stack(tmp)
    registered(s)
    settings = tmp / "settings.yaml"  # an MCP tool server configured on the daemon's machine
    settings.write_text(json.dumps({"mcp_servers": {"local": {
        "command": sys.executable, "args": [str(ROOT / "tests" / "mcp_fixture_server.py")], "cwd": str(ROOT),
        "timeout": 60}}}))
    s.env["PLATFORM_SETTINGS"] = str(settings)
    s.start()
    s.connected()
    yield s
    s.stop_all()
    s.srv.stop()


def sigkill(proc: subprocess.Popen[str]) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)


