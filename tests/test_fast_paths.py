"""`framework env status` and `ledger show` without Typer (app.cli.env_status_ops.fast,
app.cli.ledger_show_ops.fast): the same bytes and exit codes as the Typer path, which a trailing `--`
selects (docs/reference-deploy.md#start-up-of-env-status-and-ledger-show)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import BIN, DEMO


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("envstatus")
    target = root / "demo"
    shutil.copytree(DEMO, target, ignore=shutil.ignore_patterns(".framework", "__pycache__"))
    return target


def _run(project: Path, *args: str, **extra: str) -> tuple[int, str, str]:
    return _framework(project, "env", "status", *args, **extra)


def _framework(project: Path, *args: str, **extra: str) -> tuple[int, str, str]:
    home = project.parent / "home"
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / "cache"),
           "FRAMEWORK_LEDGER_HOME": str(home / "ledger"), "NO_COLOR": "1", **extra}
    proc = subprocess.run([str(BIN / "framework"), *args], cwd=project, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=120, check=False, env=env)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("args", [("--json",), ("dev", "--history", "--limit", "5", "--json"), ("nope",),
                                  ("dev", "--signal", "bogus", "--json")])
def test_fast_path_says_what_typer_says(project: Path, args: tuple[str, ...]) -> None:
    """docs/reference-deploy.md#start-up-of-env-status-and-ledger-show: a well-formed `env status` parsed without Typer
    prints the Typer path's bytes (stdout, stderr) and exits with its code, for a report, a history
    page, an unknown environment and a refused `--signal`."""
    fast = _run(project, *args)
    assert fast == _run(project, *args, "--")
    assert fast[1] or fast[2]  # something was said either way


def test_fast_path_imports_no_typer(project: Path) -> None:
    """docs/reference-deploy.md#start-up-of-env-status-and-ledger-show: the well-formed command imports
    neither Typer nor click; a usage error still goes to Typer, which says it (exit 2, its usage line)."""
    code, out, err = _run(project, "dev", "--json", PYTHONPROFILEIMPORTTIME="1")
    modules = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in err.splitlines()
               if line.startswith("import time:")}
    assert '"env": "dev"' in out and "engine" in modules
    assert not modules & {"typer", "click"}
    code, out, err = _run(project, "--limit", "many")
    assert code == 2 and "Invalid value for '--limit'" in err and "Usage: framework env status" in err


@pytest.mark.parametrize("args", [("--json",), ("dev", "--limit", "3"), ("--limit", "0", "--json")])
def test_ledger_show_fast_path_says_what_typer_says(project: Path, args: tuple[str, ...]) -> None:
    """docs/reference-deploy.md#start-up-of-env-status-and-ledger-show: `ledger show` parsed without
    Typer prints the Typer path's bytes and exits with its code (the demo's machine ledger, human and
    --json)."""
    fast = _framework(project, "ledger", "show", *args)
    assert fast == _framework(project, "ledger", "show", *args, "--")
    assert fast[0] == 0 and "promotions" in fast[1]
