"""`framework debug` command plumbing (docs/reference-debug.md#commands; README.md#output-and-exit-codes): the
session commands' Typer-free path prints exactly what the Typer commands print, hands anything
malformed to Typer (usage, exit 2), and keeps Typer, pydantic and Textual off the command path."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import run_cli

TYPER_PATH = ("import sys; from app.cli import invoke; "
              "sys.exit(invoke('framework', sys.argv[1:]))")


@pytest.mark.parametrize("argv", [["debug", "status", "--json"], ["debug", "step", "--timeout", "2", "--json"],
                                  ["debug", "eval", "n*2", "--frame", "1", "--json"],
                                  ["debug", "break", "services/api/main.py:9", "--cond", "n > 3", "--json"]])
def test_fast_path_and_typer_print_the_same_document(demo_project: Path, argv: list[str]) -> None:
    """No session: exit 1, error `no_debug_session` naming `debug start`, from both paths alike."""
    fast = run_cli("framework", *argv, cwd=demo_project)
    typer = subprocess.run([sys.executable, "-c", TYPER_PATH, *argv], cwd=demo_project, capture_output=True,
                           text=True, check=False)
    assert fast.exit_code == typer.returncode == 1
    assert json.loads(fast.stdout) == json.loads(typer.stdout)
    doc = json.loads(fast.stdout)
    assert doc["error"]["code"] == "no_debug_session" and "debug start" in doc["error"]["hint"]
    assert fast.stderr == typer.stderr


@pytest.mark.parametrize("argv", [["debug", "step", "--bogus"], ["debug", "eval"], ["debug", "clear", "x"],
                                  ["debug", "step", "--timeout", "soon"]])
def test_malformed_debug_commands_are_usage_errors(demo_project: Path, argv: list[str]) -> None:
    """Exit 2 with Typer's usage message; --json still prints one document (error.code usage)."""
    out = run_cli("framework", *argv, cwd=demo_project)
    assert out.exit_code == 2 and "Usage:" in out.stderr and "Traceback" not in out.stderr
    doc = json.loads(run_cli("framework", *argv, "--json", cwd=demo_project).stdout)
    assert doc["exit_code"] == 2 and doc["error"]["code"] == "usage"


def test_debug_command_path_imports_neither_typer_pydantic_nor_textual(demo_project: Path) -> None:
    """Headless commands start fast: a session command loads only the session client."""
    code = ("import sys; from app.main import run; run('framework', ['debug', 'stack', '--json']); "
            "print([m for m in ('typer', 'pydantic', 'textual', 'rich') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], cwd=demo_project, capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"
