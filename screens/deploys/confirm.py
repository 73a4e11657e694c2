"""Confirmation of a deploy (or a supersede) bound to one plan digest.

A protected environment (settings.protected_environments) needs its name typed; any other takes
`y`. The equivalent command line (`framework env deploy <env> <v> --approve <digest>`) is shown.
"""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static


class ConfirmDeployScreen(ModalScreen[bool]):
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("y", "confirm", "Confirm", id="confirm_deploy.confirm"),
        Binding("n", "cancel", "Cancel", id="confirm_deploy.cancel", show=False),
        Binding("escape", "cancel", "Cancel", id="confirm_deploy.escape"),
    ]

    def __init__(self, title: str, body: str, command: str, env: str, protected: bool) -> None:
        super().__init__()
        self.title_text, self.body, self.command, self.env = title, body, command, env
        self.protected = protected

    def compose(self) -> ComposeResult:
        with Vertical(classes="modal", id="confirm-deploy"):
            yield Static(self.title_text, classes="title", markup=False)
            yield Static(self.body, markup=False)
            yield Static(f"Same as: {self.command}", classes="hint", id="confirm-command", markup=False)
            if self.protected:
                yield Static(f"{self.env} is protected: type its name and press enter to confirm.",
                             id="confirm-protected", markup=False)
                yield Input(placeholder=self.env, id="confirm-name")
            else:
                yield Static("y: confirm   n / esc: cancel", classes="hint", markup=False)
            with Horizontal(classes="modal-buttons"):
                yield Button("Deploy", id="confirm-yes", variant="warning")
                yield Button("Cancel", id="confirm-no")

    def on_mount(self) -> None:
        if self.protected:
            box = self.query_one("#confirm-name", Input)
            box.cursor_blink = self.app.settings.cursor_blink
            box.focus()

    def _typed_ok(self) -> bool:
        return not self.protected or self.query_one("#confirm-name", Input).value.strip() == self.env

    def action_confirm(self) -> None:
        if self._typed_ok():
            self.dismiss(True)
        else:
            self.query_one("#confirm-protected", Static).update(
                f"{self.env} is protected: the name typed does not match; type {self.env!r} exactly.")

    def action_cancel(self) -> None:
        self.dismiss(False)

    @on(Input.Submitted, "#confirm-name")
    def _submitted(self) -> None:
        self.action_confirm()

    @on(Button.Pressed, "#confirm-yes")
    def _yes(self) -> None:
        self.action_confirm()

    @on(Button.Pressed, "#confirm-no")
    def _no(self) -> None:
        self.dismiss(False)
