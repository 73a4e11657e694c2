"""Help without a terminal lists the same flags as help on a terminal, for every command of both programs.

Plain (non-terminal) help of a program and of its groups is printed from `app.registry` without
importing Typer; its Options section comes from the generated `app/help_options.py`, so the two
helps cannot drift (README.md#output-and-exit-codes: `--help` lists the same commands and flags on a
terminal and without one).
"""

from __future__ import annotations

import io
import os
import pty
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from app.cli import build
from app.main import run
from tests.conftest import BIN, read_terminal

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
FLAG = re.compile(r"^-{1,2}[A-Za-z0-9][\w-]*$")


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def help_flags(text: str) -> set[str]:
    """Flags named in the Options sections of a help text (click's plain layout or Typer's rich panels)."""
    flags: set[str] = set()
    section = False
    for raw in ANSI.sub("", text).splitlines():
        line = raw.strip()
        if line.startswith(("Options:", "╭─ Options")):
            section = True
            continue
        if section and (line.startswith(("╰", "Commands:", "Examples:", "Arguments:", "╭")) or not line):
            section = line.startswith("╭─ Options")  # Typer may split options over several panels
            continue
        if not section:
            continue
        body = line.strip("│┃ ").lstrip("* ").strip()
        for token in body.replace(",", " ").replace("/", " ").split():
            if not FLAG.match(token):
                break
            flags.add(token)
    return flags


def _walk(command: Any, path: list[str]) -> list[list[str]]:
    paths = [path]
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        paths += _walk(sub, [*path, name])
    return paths


def _click_flags(chain: list[Any]) -> set[str]:
    """The flags click knows for the last command of `chain` (contexts nested as when it runs)."""
    ctx = None
    for command in chain:
        ctx = command.context_class(command, parent=ctx, info_name="x", **command.context_settings)
    assert ctx is not None
    return {opt for p in command.get_params(ctx) if p.param_type_name == "option" and not p.hidden
            for opt in (*p.opts, *p.secondary_opts)}  # type: ignore[union-attr]


def _help(program: str, argv: list[str], terminal: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    out = _Terminal() if terminal else io.StringIO()
    with monkeypatch.context() as m:
        m.setattr(sys, "stdout", out)
        m.setattr(sys, "stderr", io.StringIO())
        code = run(program, [*argv, "--help"])
    return code, out.getvalue()


def test_every_command_lists_the_same_flags_with_and_without_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """README.md#output-and-exit-codes: help printed in CI (no terminal) lists exactly the
    flags the terminal's help lists, walking every group and command of both programs."""
    monkeypatch.setenv("COLUMNS", "300")  # no wrapped option rows
    import functools

    import app.cli

    # each help call runs app.main.run in this process, which builds its group's Typer tree from the same
    # modules every time: one tree per (program, group) serves them all, as click's CliRunner reuses one
    monkeypatch.setattr(app.cli, "build", functools.cache(app.cli.build))
    checked = 0
    for program in ("framework", "platform"):
        root = build(program)
        for path in _walk(root, []):
            chain = [root]
            for name in path:
                chain.append(chain[-1].commands[name])
            argv = path[1:] if path[:1] == ["framework"] and program == "platform" else path
            target = "framework" if program == "platform" and path[:1] == ["framework"] else program
            code_plain, plain = _help(target, argv, False, monkeypatch)
            code_tty, tty = _help(target, argv, True, monkeypatch)
            where = " ".join([program, *path])
            assert (code_plain, code_tty) == (0, 0), where
            expected = _click_flags(chain)
            assert "--help" in expected and help_flags(tty) == expected, (where, help_flags(tty), expected)
            assert help_flags(plain) == help_flags(tty), (where, help_flags(plain), help_flags(tty))
            checked += 1
    assert checked > 230  # both programs' whole trees (platform framework ... included)


def test_plain_help_table_is_generated_from_the_typer_apps() -> None:
    """README.md#output-and-exit-codes: the plain-help flags table is generated (`python -m app.help_options_gen`),
    never edited by hand; a flag added to a command without regenerating fails here."""
    from app.help_options_gen import TARGET, render

    assert TARGET.read_text() == render(), "stale: run `python -m app.help_options_gen`"


@pytest.mark.parametrize("argv", [["framework", "scaffold"], ["platform", "server"]])
def test_group_options_on_a_real_terminal_and_a_pipe(argv: list[str], tmp_path: Path) -> None:
    """README.md#output-and-exit-codes: `framework scaffold --help` lists --service and --dry-run and `platform server
    --help` its --port, --data-dir, --gateway-port, on a terminal (a real pty) and through a pipe alike."""
    env = {**os.environ, "COLUMNS": "300"}
    command = [str(BIN / argv[0]), *argv[1:], "--help"]
    piped = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env=env,
                           stdin=subprocess.DEVNULL, timeout=60, check=False)
    leader, follower = pty.openpty()
    proc = subprocess.Popen(command, cwd=tmp_path, stdout=follower, stderr=follower, stdin=subprocess.DEVNULL,
                            env=env)
    os.close(follower)
    output = read_terminal(leader)
    assert proc.wait(timeout=60) == 0 and piped.returncode == 0
    on_terminal = help_flags(output.decode(errors="replace"))
    wanted = {"--service", "--dry-run"} if argv[1] == "scaffold" else {"--port", "--data-dir", "--gateway-port"}
    assert wanted <= on_terminal
    assert help_flags(piped.stdout) == on_terminal
