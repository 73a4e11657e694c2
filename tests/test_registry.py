"""app/registry.py and the Typer apps describe the same command tree (no placeholder commands)."""

from __future__ import annotations

from typing import Any

from app.cli import build
from app.registry import PROGRAMS


def _tree(command: Any) -> dict[str, set[str]]:
    groups = getattr(command, "commands", {})
    return {name: set(getattr(group, "commands", {})) for name, group in groups.items()}


def test_registry_matches_the_typer_apps() -> None:
    """Startup (app/registry.py answers plain --help): only commands that exist are listed; help comes from
    one table."""
    for program, spec in PROGRAMS.items():
        tree = _tree(build(program))
        expected = {name: set(group.commands) for name, group in spec.groups.items()}
        if program == "platform":
            # `platform framework` is the whole framework program.
            assert tree.pop("framework") == set(PROGRAMS["framework"].groups)
            expected.pop("framework")
        assert tree == expected, program


def test_every_command_has_help_and_examples() -> None:
    """Every command takes --help with examples: help text with examples on every command."""
    root = build("framework")
    for group_name, group in root.commands.items():
        assert group.help, group_name
        # A top-level command (e.g. `completion`) is its own leaf.
        commands = group.commands if hasattr(group, "commands") else {"": group}
        for name, command in commands.items():
            assert command.help, f"{group_name} {name}"
            # A nested group (e.g. `cloud token`): its commands carry the examples and --json.
            leaves = getattr(command, "commands", None) or {name: command}
            for leaf_name, leaf in leaves.items():
                where = f"{group_name} {name} {leaf_name}"
                assert "Examples" in (leaf.epilog or ""), where
                assert any(p.name == "json_output" for p in leaf.params), f"{where} lacks --json"
