"""Shared fixtures: isolated per-user state, a copy of the demo project, real CLI processes."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the tests' shared fixture modules

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "examples" / "demo"
BIN = Path(sys.executable).parent


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Every test gets its own HOME, caches, config and ledger: nothing touches the real user's."""
    home = tmp_path_factory.mktemp("home")
    for name, value in {
        "HOME": home,
        "XDG_CACHE_HOME": home / ".cache",
        "XDG_CONFIG_HOME": home / ".config",
        "FRAMEWORK_LEDGER_HOME": home / ".framework" / "ledger",
    }.items():
        monkeypatch.setenv(name, str(value))
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FRAMEWORK_UI_CONFIG", raising=False)
    yield home


@pytest.fixture
def demo_project(tmp_path: Path) -> Path:
    """A private copy of examples/demo (tests may edit it)."""
    target = tmp_path / "demo"
    shutil.copytree(DEMO, target, ignore=shutil.ignore_patterns(".framework", "__pycache__"))
    from deploy_fixtures import dev_database_off

    dev_database_off(target)
    return target


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str


def run_cli(program: str, *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 120) -> Result:
    """Run the installed console script as a real child process (no terminal)."""
    proc = subprocess.run([str(BIN / program), *args], cwd=cwd, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})}, timeout=timeout,
                          check=False)
    return Result(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def cli() -> object:
    return run_cli
