"""`:` command line: runs the same commands as the CLI, or jumps to a screen by name.

`:env list` runs `framework env list` in the project directory (as a child process, exactly the
headless program) and shows its output and exit code; `:platform ...` runs the platform program;
`:environments`, `:rollouts` ... switch screens (k9s habit).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from screens.catalog import SCREENS

SCREEN_ALIASES = {s.name: s.name for s in SCREENS} | {
    "env": "environments", "envs": "environments", "ro": "rollouts", "plan": "plans", "ds": "devstacks",
    "stacks": "devstacks", "hooks": "webhooks", "run": "runs",
}


def to_argv(line: str) -> list[str]:
    """`env list` -> ['framework', 'env', 'list']; an explicit program name is kept."""
    words = shlex.split(line)
    if words and words[0] in ("framework", "platform"):
        return words
    return ["framework", *words]


@dataclass
class CommandFinished(Message):
    argv: list[str]
    exit_code: int
    stdout: str
    stderr: str


def run_cli(argv: list[str], cwd: Path) -> CommandFinished:
    env = dict(os.environ, NO_COLOR="1", FRAMEWORK_UI_CHILD="1")
    proc = subprocess.run([sys.executable, "-m", "app.main", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=600, check=False)
    return CommandFinished(argv, proc.returncode, proc.stdout, proc.stderr)


class CommandLineScreen(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[Binding]] = [Binding("escape", "dismiss", "Cancel", id="command_line.cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(classes="modal"):
            yield Static("Command", classes="title")
            box = Input(placeholder="env list --json  |  platform --version  |  environments", id="command-input")
            box.cursor_blink = self.app.settings.cursor_blink
            yield box
            yield Static("Runs `framework <command>` (or `platform ...`) here; a screen name switches to it.",
                         classes="hint")

    @on(Input.Submitted, "#command-input")
    def _submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)


class CommandOutputScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[Binding]] = [Binding("escape", "dismiss", "Close", id="command_output.close")]

    def __init__(self, argv: list[str], cwd: Path) -> None:
        super().__init__()
        self.argv = argv
        self.cwd = cwd
        self.result: CommandFinished | None = None

    def compose(self) -> ComposeResult:
        with Vertical(classes="modal"):
            yield Static("$ " + shlex.join(self.argv), classes="title", markup=False)
            yield Static("running ...", id="command-output", markup=False)
            yield Static("", id="command-exit", classes="hint", markup=False)

    def on_mount(self) -> None:
        self.execute()

    @work(thread=True, exclusive=True, group="command-line")
    def execute(self) -> None:
        try:
            finished = run_cli(self.argv, self.cwd)
        except (OSError, subprocess.TimeoutExpired) as exc:
            finished = CommandFinished(self.argv, 1, "", f"could not run: {exc}")
        self.post_message(finished)

    def on_command_finished(self, message: CommandFinished) -> None:
        self.result = message
        text = (message.stdout + message.stderr).rstrip() or "(no output)"
        self.query_one("#command-output", Static).update(text)
        self.query_one("#command-exit", Static).update(f"exit {message.exit_code}   (esc closes)")
