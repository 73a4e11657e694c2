"""Shared fixtures of the hosted-environment tests (docs/reference-hosted.md): a real `platform server` as the
control plane (uvicorn on 127.0.0.1, its own store), organizations seeded with the admin commands,
organization tokens minted in the server's real store (the browser flow that mints them is
tested in test_auth_*), and a copy of the demo whose `cloud` environment points at that control
plane and runs the demo's api service (build + run, a free port)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import cli_fork
import pytest

from tests.deploy_fixtures import Demo, free_port, make_demo
from tests.webhooks_fixtures import ROOT, Server, isolated_env, server_factory, start_server  # noqa: F401

ALL = ("deploy:read", "deploy:write", "deploy:promote")

HOSTED = """import framework

# Hosted: converged by the control plane at {endpoint}.
environment = framework.Environment {{
    name = "{name}"
    kind = "hosted"
    control_plane = framework.ControlPlane {{endpoint = "{endpoint}"}}
    workloads = [
        framework.Workload {{
            name = "api"
            build = framework.Build {{type = "shell", command = "python3 -m py_compile services/{service}/main.py"}}
            run = ["python3", "services/{service}/main.py"]
            env = {{GREETING = "{greeting}"}}
            ports = [framework.Port {{port = {port}}}]
            health = framework.HealthCheck {{path = "/healthz"}}
        }}
    ]
}}
"""


def admin(srv: Server, *args: str) -> None:
    done = cli_fork.run([sys.executable, "-m", "app.main", "platform", "server", *args, "--data-dir",
                           str(srv.data_dir)], cwd=ROOT, env=srv.env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def seed_org(srv: Server, org: str, billing: bool = True) -> None:
    admin(srv, "org", "add", org)
    admin(srv, "org", "grant", org, *ALL)
    if billing:
        admin(srv, "org", "billing", org, "--enable")


def mint(srv: Server, org: str, scopes: tuple[str, ...] = ALL, name: str = "ci") -> str:
    """An organization automation token, minted in the server's store (its secret is only hashed there)."""
    code = (
        "import sys\nfrom sqlalchemy import select\nfrom engine.auth import tables as t\n"
        "from engine.auth.accounts import server_store\nfrom engine.auth.tokens import mint\n"
        "from engine.serverstore import store\n"
        "e = server_store(sys.argv[1])\n"
        "with store.write(e) as c:\n"
        "    org = c.execute(select(t.orgs.c.id).where(t.orgs.c.name == sys.argv[2])).scalar_one()\n"
        "    print(mint(c, kind='automation', org_id=org, scope=sys.argv[3], ttl_s=3600, name=sys.argv[4]).token)\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(srv.data_dir), org, " ".join(scopes), name], cwd=ROOT,
                          env=srv.env, capture_output=True, text=True, timeout=60, check=True)
    return done.stdout.strip()


def _store(srv: Server) -> Any:
    """The server's store, opened in this process as `platform server`'s admin commands open it (its
    DATABASE_URL, else the SQLite file in its data dir), migrated."""
    from engine.serverstore import store
    from engine.serverstore.migrations import up
    from engine.serverstore.url import DB_FILE, sqlalchemy_url

    url = srv.env.get("DATABASE_URL")
    engine = store.open_engine(sqlalchemy_url(url, srv.env.get("DATABASE_DRIVER")) if url
                               else f"sqlite:///{(srv.data_dir / DB_FILE).resolve()}")
    up(engine)
    return engine


def seed_org_in_store(srv: Server, org: str, billing: bool = True, scopes: tuple[str, ...] = ALL) -> None:
    """seed_org through the engine functions its admin commands call (add_org, grant, set_billing), in this
    process: for tests whose rule is not the admin CLI (that is test_auth_accounts' and the CLI's own)."""
    from engine.auth.accounts import add_org, grant
    from engine.controlplane.state import set_billing

    engine = _store(srv)
    try:
        add_org(engine, org)
        grant(engine, org, list(scopes))
        if billing:
            set_billing(engine, org, True)
    finally:
        engine.dispose()


def billing_in_store(srv: Server, org: str, enabled: bool = True) -> None:
    """`platform server org billing <org> --enable|--disable`'s engine call (set_billing), in this process."""
    from engine.controlplane.state import set_billing

    engine = _store(srv)
    try:
        set_billing(engine, org, enabled)
    finally:
        engine.dispose()


def mint_in_store(srv: Server, org: str, scopes: tuple[str, ...] = ALL, name: str = "ci") -> str:
    """mint, in this process (the same engine calls on the same store)."""
    from sqlalchemy import select

    from engine.auth import tables as t
    from engine.auth.tokens import mint as mint_token
    from engine.serverstore import store

    engine = _store(srv)
    try:
        with store.write(engine) as c:
            org_id = c.execute(select(t.orgs.c.id).where(t.orgs.c.name == org)).scalar_one()
            return mint_token(c, kind="automation", org_id=org_id, scope=" ".join(scopes), ttl_s=3600,
                              name=name).token
    finally:
        engine.dispose()


SLOW = """
import os, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

time.sleep(float(os.environ.get("SLOW_START", "3")))  # a rollout long enough to be interrupted

class H(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *a):
        pass

ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
"""


def commit(demo: Demo, message: str) -> None:
    for args in (("add", "-A"), ("commit", "-q", "-m", message)):
        subprocess.run(["git", *args], cwd=demo.root, env=demo.env, check=True, capture_output=True)


def hosted_env(demo: Demo, endpoint: str, name: str = "cloud", greeting: str = "hello from cloud",
               port: int | None = None, service: str = "api") -> int:
    port = port or free_port()
    if service == "slow":
        (demo.root / "services" / "slow").mkdir(parents=True, exist_ok=True)
        (demo.root / "services" / "slow" / "main.py").write_text(SLOW)
    env_dir = demo.root / "deploy" / "kcl" / name
    env_dir.mkdir(parents=True, exist_ok=True)
    (env_dir / "main.k").write_text(HOSTED.format(name=name, endpoint=endpoint, greeting=greeting, port=port,
                                                  service=service))
    commit(demo, f"hosted {name}")
    return port


def slow_start(demo: Demo, seconds: int) -> None:
    """The slow service's start takes `seconds` from its next release on (committed): long enough that a
    test acting mid-rollout never races the rollout's end."""
    import re

    main = demo.root / "services" / "slow" / "main.py"
    text, found = re.subn(r'"SLOW_START", "[^"]*"', f'"SLOW_START", "{seconds}"', main.read_text())
    assert found == 1, "not the slow service"
    main.write_text(text)
    commit(demo, f"slow start {seconds} s")


def second_machine(demo: Demo, tmp: Path) -> dict[str, str]:
    """The same checkout seen from another machine: its own HOME and machine ledger."""
    (tmp / "home2").mkdir(exist_ok=True)
    return {**demo.env, "HOME": str(tmp / "home2"), "FRAMEWORK_LEDGER_HOME": str(tmp / "ledger2")}


def run_json(demo: Demo, env: dict[str, str], *args: str, timeout: float = 120) -> tuple[int, dict[str, Any]]:
    import json

    from tests.deploy_fixtures import FRAMEWORK_BIN

    done = cli_fork.run([FRAMEWORK_BIN, *args, "--json"], cwd=demo.root, env=env, capture_output=True,
                          text=True, timeout=timeout)
    doc = json.loads(done.stdout)
    assert doc["exit_code"] == done.returncode and doc["ok"] == (done.returncode == 0)
    return done.returncode, doc


def cp_get(srv: Server, token: str, path: str) -> Any:
    import httpx

    return httpx.get(f"{srv.url}{path}", headers={"Authorization": f"Bearer {token}"}, timeout=30)


def stop_hosted(srv: Server) -> None:
    """Stop what the control plane runs (the runtime's marker-checked stop), after the server."""
    code = (
        "import sys\nfrom pathlib import Path\nfrom engine.runtime.process import stop_env\n"
        "root = Path(sys.argv[1]) / 'hosted'\n"
        "for org in (root / 'projects').glob('*'):\n"
        "    for env in (org / 'runtime').glob('*'): stop_env(org.name, env.name, root)\n"
    )
    subprocess.run([sys.executable, "-c", code, str(srv.data_dir)], cwd=ROOT, env=srv.env, timeout=60, check=False)


@pytest.fixture
def plane(server_factory: Callable[..., Server]) -> Iterator[Server]:  # noqa: F811
    srv = server_factory(extra_env={"PLATFORM_ROLLOUT_TIMEOUT_S": "60"})
    yield srv
    srv.stop()
    stop_hosted(srv)


@pytest.fixture
def demo(tmp_path: Path) -> Demo:
    return make_demo(tmp_path)


def with_token(demo: Demo, token: str, **extra: str) -> dict[str, Any]:
    return {**demo.env, "FRAMEWORK_CONTROL_PLANE_TOKEN": token, **extra}


def pids_of_hosted(srv: Server) -> list[int]:
    return sorted(int(e["_pid"]) for e in environ_of_hosted(srv))


def environ_of_hosted(srv: Server) -> list[dict[str, str]]:
    """The environments of the processes the control plane runs (found by their ownership markers)."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            raw = (proc / "environ").read_bytes()
        except OSError:
            continue
        env = dict(item.split("=", 1) for item in raw.decode(errors="replace").split("\0") if "=" in item)
        if env.get("FRAMEWORK_OWNED_BY") == "framework" and str(srv.data_dir) in env.get("HOME", ""):
            found.append({**env, "_pid": proc.name})
    return found
