"""Fixtures for dev-stack tests: a git repository holding a copy of the demo (its dev ports moved
to a free range), real `git worktree add` checkouts, and a teardown that stops every process a
test's stacks started, even when the test fails."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import cli_fork
import pytest

from tests.waiting import until

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "examples" / "demo"
BIN = Path(sys.executable).parent


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", *args], cwd=cwd,
                          check=True, capture_output=True, text=True).stdout


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_base(blocks: int = 8) -> int:
    """A base port whose first 20 ports are free in every block (other suites use 8080; tests
    place services at base + 0..19)."""
    for _ in range(200):
        base = random.randrange(20000, 50000, 100)
        if all(_free(base + b * 100 + i) for b in range(blocks) for i in range(20)):
            return base
    raise RuntimeError("no free port range found")


def make_demo_repo(parent: Path, base: int, max_stacks: int = 8) -> Path:
    repo = parent / "demo"
    shutil.copytree(DEMO, repo, ignore=shutil.ignore_patterns(".framework", "__pycache__"))
    if str(Path(__file__).parent) not in sys.path:
        sys.path.insert(0, str(Path(__file__).parent))
    from deploy_fixtures import dev_database_off

    dev_database_off(repo)
    main = repo / "deploy" / "kcl" / "dev" / "main.k"
    text = main.read_text().replace("port = 8080", f"port = {base}").replace("port = 8081", f"port = {base + 1}")
    main.write_text(text.replace("127.0.0.1:8080", f"127.0.0.1:{base}"))
    cfg = repo / "framework.yaml"
    cfg.write_text(re.sub(r"max_stacks: \d+", f"max_stacks: {max_stacks}", cfg.read_text()))
    (repo / ".gitignore").write_text(".framework/\n__pycache__/\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "demo")
    return repo


def add_worktree(repo: Path, name: str) -> Path:
    path = repo.parent / name
    git(repo, "worktree", "add", "-q", "-b", name, str(path))
    return path


def framework(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return cli_fork.run([str(BIN / "framework"), *args], cwd=cwd, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=timeout, check=False)


def framework_json(*args: str, cwd: Path) -> dict:
    out = framework(*args, "--json", cwd=cwd)
    return json.loads(out.stdout)


def healthz(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as resp:
            return resp.status == 200
    except OSError:
        return False


def get(port: int, path: str = "/") -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as resp:
        return resp.read().decode()


def pid_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def pids_whose_environ(match: Callable[[list[bytes]], bool]) -> list[int]:
    """Processes whose environment (read from /proc, entries as bytes) `match` accepts."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if match(environ):
            found.append(int(entry.name))
    return found


def owned_pids(ledger_home: str) -> list[int]:
    """Processes started for this test: they inherit its FRAMEWORK_LEDGER_HOME and carry our marker."""
    home = f"FRAMEWORK_LEDGER_HOME={ledger_home}".encode()
    return pids_whose_environ(lambda environ: home in environ and b"FRAMEWORK_OWNED_BY=framework" in environ)


@pytest.fixture
def stacks_cleanup() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Yields a list for long-running `framework` processes; at teardown stops them, runs
    `env down --all`, then SIGKILLs anything still carrying this test's markers."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    framework("env", "down", "--all", cwd=Path("/"))
    home = os.environ["FRAMEWORK_LEDGER_HOME"]
    for pid in owned_pids(home):
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    until(lambda: not [p for p in owned_pids(home) if pid_alive(p)], timeout=15,
         what="every stack process of this test to exit")


@pytest.fixture
def demo_repo(tmp_path: Path) -> tuple[Path, int]:
    base = free_base()
    return make_demo_repo(tmp_path, base), base
