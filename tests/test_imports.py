"""Layering: headless commands never import Textual; engine/ never imports textual, typer or rich."""

from __future__ import annotations

import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import engine
from tests.conftest import BIN, REPO


def _imported_modules(program: str, *args: str, cwd: Path) -> tuple[int, set[str]]:
    """Run the real console script with -X importtime and collect every module it imported."""
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    proc = subprocess.run([str(BIN / program), *args], cwd=cwd, capture_output=True, text=True, env=env,
                          stdin=subprocess.DEVNULL, timeout=120, check=False)
    modules = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    return proc.returncode, modules


def test_headless_help_and_commands_never_import_textual(demo_project: Path) -> None:
    """Headless commands never import textual: `framework --help` and a real command run without it."""
    for args in (("--help",), ("env", "--help"), ("env", "list", "--json"), ("env", "list"), ("env", "list", "--help")):
        code, modules = _imported_modules("framework", *args, cwd=demo_project)
        assert code == 0
        assert modules, "import profiling produced no output"
        assert not {m for m in modules if m.split(".")[0] == "textual"}, args


def test_plain_help_does_not_import_typer(demo_project: Path) -> None:
    """Startup: plain --help (not on a terminal) is answered without importing Typer or pydantic."""
    code, modules = _imported_modules("framework", "--help", cwd=demo_project)
    assert code == 0 and "typer" not in modules and "pydantic" not in modules and "rich" not in modules


def test_json_command_does_not_import_rich_or_kcl_when_cached(demo_project: Path) -> None:
    """Startup: `env list --json` needs neither rich nor (with a warm cache, by content hash) kcl-lib."""
    assert _imported_modules("framework", "env", "list", "--json", cwd=demo_project)[0] == 0  # warms the cache
    code, modules = _imported_modules("framework", "env", "list", "--json", cwd=demo_project)
    assert code == 0 and "rich" not in modules and "kcl_lib" not in modules


def test_engine_never_imports_ui_libraries() -> None:
    """STYLE: the engine is reachable without the UI (subprocess import of every module)."""
    names = [m.name for m in pkgutil.walk_packages(engine.__path__, "engine.")]
    assert "engine.environments.evaluate" in names
    script = (
        "import importlib, sys\n"
        f"for name in {names!r}: importlib.import_module(name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'typer', 'rich', 'app', 'screens'))\n"
        "print(','.join(bad))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ""


def test_import_linter_contracts_hold() -> None:
    """docs/architecture.md (the layers the import contracts enforce): the import-linter contracts are
    kept: the engine never imports the UI, no import circles at any depth (acyclic_siblings), the
    engine's layers and sides."""
    proc = subprocess.run([str(BIN / "lint-imports")], cwd=REPO, capture_output=True, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    import re

    kept = re.search(r"Contracts: (\d+) kept, 0 broken\.", proc.stdout)
    assert kept and int(kept.group(1)) >= 8, proc.stdout
    assert "import circles" in proc.stdout and "layers" in proc.stdout
