"""`framework env deploy` without Typer (app.cli.env_deploy_ops.fast, bench/k8s.py): a well-formed
invocation skips Typer's import and parse, and says exactly what the Typer path says (outputs and
exit codes, and `--json` emits one document: docs/reference-deploy.md#env-deploy)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.conftest import BIN
from tests.test_imports import _imported_modules


def _run(cwd: Path, *args: str) -> tuple[int, str, str]:
    proc = subprocess.run([str(BIN / "framework"), *args], cwd=cwd, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120, check=False, env={**os.environ, "NO_COLOR": "1"})
    return proc.returncode, proc.stdout, proc.stderr


def test_well_formed_deploy_does_not_import_typer(demo_project: Path) -> None:
    """Speed (DESIGN: headless commands start fast): `env deploy <env> <v> --plan --json` runs without Typer."""
    code, modules = _imported_modules("framework", "env", "deploy", "nosuch", "v9", "--plan", "--json",
                                      cwd=demo_project)
    assert code == 1 and modules and "typer" not in modules


def test_fast_path_says_what_typer_says(demo_project: Path) -> None:
    """docs/reference-deploy.md#env-deploy (exit codes): the same stdout, stderr and exit code with or without
    Typer; a trailing `--` hands the same invocation to Typer."""
    cases = [
        ("env", "deploy", "nosuch", "v9", "--json"),
        ("env", "deploy", "dev", "v9", "--plan", "--json", "--timeout", "5", "--target", "api", "--target", "web"),
        ("env", "deploy", "dev", "v9", "-y", "--skip-preflight"),
    ]
    for args in cases:
        fast = _run(demo_project, *args)
        typer = _run(demo_project, *args, "--")
        assert fast[0] != 0 and fast == typer, args


def test_malformed_deploy_falls_back_to_typer_usage(demo_project: Path) -> None:
    """Usage errors exit 2 (README.md#output-and-exit-codes): an unknown option, a bad float or a missing
    value is Typer's to refuse."""
    for args in (("--no-such-option",), ("--timeout", "soon"), ("--timeout",), ("a", "b", "c")):
        code, _, err = _run(demo_project, "env", "deploy", "dev", *args)
        assert code == 2 and "Usage" in err, args
