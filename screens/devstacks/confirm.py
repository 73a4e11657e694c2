"""A yes/no confirmation naming the equivalent command (dev stacks: down, release --apply)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static


class ConfirmScreen(ModalScreen[bool]):
    """Dismisses with True on `y`, False on `n` or esc. Nothing happens until confirmed."""

    BINDINGS: ClassVar[list[Binding]] = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n", "answer(False)", "No", id="confirm.no"),
        Binding("escape", "answer(False)", "Cancel", id="confirm.cancel"),
    ]

    def __init__(self, title: str, body: str, command: str) -> None:
        super().__init__()
        self.title_text, self.body, self.command = title, body, command

    def compose(self) -> ComposeResult:
        with Vertical(classes="modal", id="confirm"):
            yield Static(self.title_text, classes="title", markup=False)
            yield Static(self.body, id="confirm-body", markup=False)
            yield Static(f"\nSame as: {self.command}", id="confirm-command", classes="hint", markup=False)
            yield Static("\ny confirm   n / esc cancel", classes="hint")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)
