"""Both programs as real processes: entry, help, version, aliasing and the JSON/exit-code contract."""

from __future__ import annotations

import json
from pathlib import Path

from app.registry import FRAMEWORK
from tests.conftest import run_cli


def test_version_on_both_programs(tmp_path: Path) -> None:
    """`--version` on both programs (README.md#commands)."""
    for program in ("framework", "platform"):
        result = run_cli(program, "--version", cwd=tmp_path)
        assert result.exit_code == 0
        assert result.stdout.startswith(f"{program} ") and result.stdout.strip().split()[-1][0].isdigit()


def test_no_arguments_without_a_tty_prints_help_and_exits_2(tmp_path: Path) -> None:
    """No arguments without a TTY prints help and exits 2, and never opens the dashboard
    (README.md#output-and-exit-codes)."""
    for program in ("framework", "platform"):
        result = run_cli(program, cwd=tmp_path)
        assert result.exit_code == 2
        assert f"Usage: {program}" in result.stderr
        assert result.stdout == ""


def test_plain_help_lists_exactly_the_registered_groups(tmp_path: Path) -> None:
    """Only commands that work are listed; help carries examples (README.md#commands)."""
    result = run_cli("framework", "--help", cwd=tmp_path)
    assert result.exit_code == 0
    commands = result.stdout.split("Commands:")[1].split("Examples:")[0]
    listed = {line.split()[0] for line in commands.strip().splitlines()}
    assert listed == set(FRAMEWORK.groups)
    assert "Examples:" in result.stdout and "\x1b[" not in result.stdout


def test_group_help_lists_its_commands(tmp_path: Path) -> None:
    """`framework env --help` lists env's commands (README.md#commands)."""
    result = run_cli("framework", "env", "--help", cwd=tmp_path)
    assert result.exit_code == 0
    for command in FRAMEWORK.groups["env"].commands:
        assert f"  {command}" in result.stdout


def test_leaf_help_goes_through_typer(tmp_path: Path) -> None:
    """A command's own --help documents its flags and examples (README.md#commands)."""
    result = run_cli("framework", "env", "list", "--help", cwd=tmp_path)
    assert result.exit_code == 0
    assert "--json" in result.stdout and "framework env list --json" in result.stdout


def test_platform_framework_is_the_framework_program(demo_project: Path) -> None:
    """`platform framework ...` has identical output and exit codes (README.md#commands)."""
    for args in (("env", "list", "--json"), ("env", "list"), ("env", "list", "--nope"), ("--help",)):
        direct = run_cli("framework", *args, cwd=demo_project)
        routed = run_cli("platform", "framework", *args, cwd=demo_project)
        assert (routed.exit_code, routed.stdout, routed.stderr) == (direct.exit_code, direct.stdout, direct.stderr)
    outside = run_cli("platform", "framework", "env", "list", cwd=demo_project.parent)
    assert outside.exit_code == 1


def test_usage_error_with_json_prints_one_document_and_exits_2(demo_project: Path) -> None:
    """--json prints one document even for a usage error (README.md#output-and-exit-codes); ok false exactly
    when exit != 0."""
    result = run_cli("framework", "env", "list", "--json", "--bogus", cwd=demo_project)
    assert result.exit_code == 2
    doc = json.loads(result.stdout)
    assert doc == {"ok": False, "exit_code": 2, "error": {"code": "usage", "message": "No such option: --bogus"}}
    assert "No such option: --bogus" in result.stderr and "Traceback" not in result.stderr


def test_unknown_command_is_a_usage_error(tmp_path: Path) -> None:
    """An unknown command (README.md#output-and-exit-codes) exits 2 with a diagnostic on stderr, nothing on stdout."""
    result = run_cli("framework", "nope", cwd=tmp_path)
    assert result.exit_code == 2
    assert "No such command" in result.stderr and result.stdout == ""
