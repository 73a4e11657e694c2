"""`:` command line: runs the same commands as the CLI, or jumps to a screen by name.

`:env list` runs `framework env list` in the project directory (as a child process, exactly the
headless program) and shows its output and exit code; `:platform ...` runs the platform program;
`:environments`, `:rollouts` ... switch screens (k9s habit). Long work's progress (a build's steps,
a push's artifacts, `db migrate up`'s files, `db seed apply`'s tables) comes from the child as event
lines (app/progress.py) and shows as a progress bar while it runs, never as text.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Input, ProgressBar, Static

from app.progress import EVENTS_ENV, parse_event
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


@dataclass
class CommandProgress(Message):
    """One progress step of the running command (high rate: a newer step of the same task replaces it)."""

    task: str
    done: int
    total: int | None
    item: str

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, CommandProgress) and message.task == self.task


def run_cli(argv: list[str], cwd: Path, on_progress: Callable[[CommandProgress], None] | None = None
            ) -> CommandFinished:
    """Run the headless program; its progress event lines go to `on_progress`, never into the output."""
    env = dict(os.environ, NO_COLOR="1", FRAMEWORK_UI_CHILD="1", **{EVENTS_ENV: "1"})
    proc = subprocess.Popen([sys.executable, "-m", "app.main", *argv], cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, errors="replace")
    stdout: list[str] = []
    reader = threading.Thread(target=lambda: stdout.append(proc.stdout.read() if proc.stdout else ""), daemon=True)
    reader.start()
    stderr: list[str] = []
    timer = threading.Timer(600, proc.kill)  # the old run's timeout: a stuck command does not hold the view
    timer.start()
    try:
        for line in proc.stderr or ():
            event = parse_event(line)
            if event is None:
                stderr.append(line)
            elif "progress" in event and on_progress is not None:
                step = event["progress"]
                on_progress(CommandProgress(str(step["task"]), int(step["done"]), step.get("total"),
                                            str(step.get("item", ""))))
            elif "message" in event:
                stderr.append(f"{event['message']}\n")
        code = proc.wait()
        reader.join()
    finally:
        timer.cancel()
    return CommandFinished(argv, code, "".join(stdout), "".join(stderr))


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
        self.steps: list[CommandProgress] = []  # the progress steps shown, in order

    def compose(self) -> ComposeResult:
        with Vertical(classes="modal"):
            yield Static("$ " + shlex.join(self.argv), classes="title", markup=False)
            yield Static("running ...", id="command-output", markup=False)
            yield Static("", id="command-step", classes="hint", markup=False)
            yield ProgressBar(id="command-progress", show_eta=False)
            yield Static("", id="command-exit", classes="hint", markup=False)

    def on_mount(self) -> None:
        self.query_one("#command-progress", ProgressBar).display = False  # shown by the first step
        self.execute()

    @work(thread=True, exclusive=True, group="command-line")
    def execute(self) -> None:
        try:
            finished = run_cli(self.argv, self.cwd, self.post_message)
        except OSError as exc:
            finished = CommandFinished(self.argv, 1, "", f"could not run: {exc}")
        self.post_message(finished)

    def on_command_progress(self, message: CommandProgress) -> None:
        bar = self.query_one("#command-progress", ProgressBar)
        bar.display = True
        bar.update(total=message.total, progress=message.done)
        count = f"{message.done}/{message.total}" if message.total is not None else str(message.done)
        self.steps.append(message)
        self.query_one("#command-step", Static).update(f"{message.task} {count} {message.item}".rstrip())

    def on_command_finished(self, message: CommandFinished) -> None:
        self.result = message
        text = (message.stdout + message.stderr).rstrip() or "(no output)"
        self.query_one("#command-output", Static).update(text)
        self.query_one("#command-exit", Static).update(f"exit {message.exit_code}   (esc closes)")
