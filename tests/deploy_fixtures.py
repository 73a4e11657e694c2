"""Shared fixtures of the release / ledger / deploy / status / build tests.

A real copy of examples/demo in a tmp dir, a real git repository, ports chosen free on
127.0.0.1, HOME / XDG_CACHE_HOME / FRAMEWORK_LEDGER_HOME pointed at tmp dirs, the real
`framework` console script, and a teardown that stops every process the test started.
Import with: sys.path.insert(0, str(Path(__file__).parent)); from deploy_fixtures import ...
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cli_fork
import pytest
from go_caches import GO_ENV  # the machine's Go caches (a cold GOCACHE compiles the standard library)

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "examples" / "demo"
FRAMEWORK_BIN = str(Path(sys.executable).parent / "framework")


_HANDED: set[int] = set()  # ports this process gave out: never the same one twice (two servers of one test)


def free_port() -> int:
    """A free port below the ephemeral range, so no client socket or bind(0) of a parallel suite takes it.
    Drawn from the OS's randomness (a test or plugin seeding `random` cannot make two draws, or two workers,
    agree), and never one this process handed out before."""
    import random

    draw = random.SystemRandom()
    for _ in range(200):
        port = draw.randrange(20000, 32000)
        if port in _HANDED:
            continue
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            _HANDED.add(port)
            return port
    raise RuntimeError("no free port in 20000-32000")


DEV_DATABASE_ON = 'option("database", type="bool", default=True,'


def dev_database_off(root: Path) -> None:
    """The demo's dev runs PostgreSQL by default (docs/reference-db.md#env-up-and-the-dashboard); tests
    about deploys, dev stacks and screens leave it out, as `-D database=false` would (the database tests
    pass `-D database=true`)."""
    dev = root / "deploy" / "kcl" / "dev" / "main.k"
    text = dev.read_text()
    assert DEV_DATABASE_ON in text, "the demo's dev no longer declares its database option as expected"
    dev.write_text(text.replace(DEV_DATABASE_ON, 'option("database", type="bool", default=False,'))


def git(root: Path, *args: str) -> str:
    out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True)
    return out.stdout.strip()


@dataclass
class Demo:
    root: Path
    env: dict[str, str]
    ports: dict[str, int]
    home: Path
    started_envs: set[str] = field(default_factory=set)

    def run(
        self, *args: str, input: str | None = None, timeout: float = 120, check: bool = False
    ) -> subprocess.CompletedProcess[str]:
        proc = cli_fork.run(
            [FRAMEWORK_BIN, *args],
            cwd=self.root,
            env=self.env,
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"framework {' '.join(args)} exited {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
            )
        return proc

    def json(self, *args: str, **kw: Any) -> tuple[int, dict[str, Any]]:
        proc = self.run(*args, "--json", **kw)
        try:
            doc = json.loads(proc.stdout)
        except ValueError as exc:
            raise AssertionError(
                f"not one JSON document on stdout:\n{proc.stdout}\n--- stderr\n{proc.stderr}"
            ) from exc
        assert doc["exit_code"] == proc.returncode
        assert doc["ok"] == (proc.returncode == 0)
        return proc.returncode, doc

    def commit(self, message: str) -> str:
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "-m", message)
        return git(self.root, "rev-parse", "HEAD")

    def edit_api(self, greeting: str) -> None:
        path = self.root / "services" / "api" / "main.py"
        path.write_text(path.read_text().replace('"hello")', f'"{greeting}")'))


def make_demo(tmp_path: Path) -> Demo:
    root = tmp_path / "demo"
    shutil.copytree(DEMO, root, ignore=shutil.ignore_patterns("__pycache__", ".framework"))
    dev_database_off(root)
    # The process environments (dev, staging, prod) get free ports so a test never meets a real demo.
    ports: dict[str, int] = {}
    for name, base in (("dev", 8080), ("staging", 8180), ("prod", 8280)):
        api, web = free_port(), free_port()
        ports.update({f"{name}.api": api, f"{name}.web": web})
        path = root / "deploy" / "kcl" / name / "main.k"
        text = path.read_text().replace(f"port = {base}}}", f"port = {api}}}")
        text = text.replace(f"port = {base + 1}}}", f"port = {web}}}")
        path.write_text(text.replace(f"127.0.0.1:{base}", f"127.0.0.1:{api}"))
    ports.update({"api": ports["dev.api"], "web": ports["dev.web"]})
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FRAMEWORK_", "GIT_"))}
    env.update(
        {
            **GO_ENV,  # a Go build type's `go build` (test_build_dispatch) reuses the machine's build cache
            "HOME": str(home),
            "XDG_CACHE_HOME": str(tmp_path / "cache"),
            "FRAMEWORK_LEDGER_HOME": str(tmp_path / "ledger"),
            "NO_COLOR": "1",
            "GIT_AUTHOR_NAME": "Test",
            "GIT_AUTHOR_EMAIL": "test@example.test",
            "GIT_COMMITTER_NAME": "Test",
            "GIT_COMMITTER_EMAIL": "test@example.test",
        }
    )
    (root / ".gitignore").write_text("__pycache__/\n.framework/cache/\n")
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=root, check=True, env=env)
    demo = Demo(root=root, env=env, ports=ports, home=home)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "-m", "demo"], cwd=root, check=True, env=env)
    return demo


def stop_all(demo: Demo) -> None:
    """Stop every process a test started: the runtime's own marker-checked stop, per environment, called
    in the test's own process (no Python child to start: ~0.25 CPU-s a test)."""
    from engine.runtime.process import stop_env

    ledger = Path(demo.env["FRAMEWORK_LEDGER_HOME"])
    for d in sorted((ledger / "projects" / "demo" / "runtime").glob("*")):
        stop_env("demo", d.name, root=ledger)


GATED_SERVICE = """
import os, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

if os.environ.get("CRASH"):
    sys.exit(3)  # a crash loop

class H(BaseHTTPRequestHandler):
    def do_GET(self):
        ok = os.path.exists(os.environ["GATE_FILE"])
        body = (os.environ.get("VERSION", "v") if ok else "not yet").encode()
        self.send_response(200 if ok else 503)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *a):
        pass

ThreadingHTTPServer(("127.0.0.1", int(os.environ["PORT"])), H).serve_forever()
"""


def add_gated_env(demo: Demo, name: str = "gated", crash: bool = False, health: str = "") -> tuple[Path, int]:
    """A Process environment whose one workload is healthy only while its gate file exists."""
    port = free_port()
    gate_file = demo.root.parent / f"{name}.healthy"
    svc = demo.root / "services" / "gated"
    svc.mkdir(parents=True, exist_ok=True)
    (svc / "main.py").write_text(GATED_SERVICE)
    env_dir = demo.root / "deploy" / "kcl" / name
    env_dir.mkdir(parents=True, exist_ok=True)
    extra = ', CRASH = "1"' if crash else ""
    (env_dir / "main.k").write_text(f"""import framework

environment = framework.Environment {{
    name = "{name}"
    kind = "local"
    target = framework.Process {{}}
    workloads = [
        framework.Workload {{
            name = "gated"
            run = ["python3", "services/gated/main.py"]
            env = {{GATE_FILE = "{gate_file}"{extra}}}
            ports = [framework.Port {{port = {port}}}]
            {health}
        }}
    ]
}}
""")
    return gate_file, port


@pytest.fixture(name="demo")
def demo_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    d = make_demo(tmp_path)
    for key in (
        "HOME",
        "XDG_CACHE_HOME",
        "FRAMEWORK_LEDGER_HOME",
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
    ):
        monkeypatch.setenv(key, d.env[key])
    monkeypatch.chdir(d.root)
    try:
        yield d
    finally:
        stop_all(d)
