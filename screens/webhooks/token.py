"""The one place a trigger's token is shown (activation displays the URL and token once).

`c` copies the token, `u` the URL with the token (App.copy_to_clipboard); closing the modal
drops every reference this module holds to the token.
"""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static


class TokenModal(ModalScreen[None]):
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("c", "copy_token", "Copy token", id="token.copy_token"),
        Binding("u", "copy_url", "Copy URL with token", id="token.copy_url"),
        Binding("escape", "close", "Close", id="token.close"),
        Binding("enter", "close", "Close", id="token.close_enter", show=False),
    ]

    def __init__(self, activation: Any, command: str) -> None:
        super().__init__()
        self._token: str | None = activation.token
        self._url_with_token: str | None = activation.url_with_token
        self._url = activation.url
        self._hmac = activation.hmac
        self._title = f"Trigger {activation.trigger.automation}/{activation.trigger.name}"
        self.command = command

    def compose(self) -> ComposeResult:
        with Vertical(classes="modal", id="token-modal"):
            yield Static(f"{self._title}: token shown only now", classes="title", markup=False)
            yield Static(
                f"URL (Authorization: Bearer <token>{', or signed' if self._hmac else ''}):\n  {self._url}\n\n"
                f"token:\n  {self._token}\n\nURL with token (the whole URL is secret):\n  {self._url_with_token}",
                id="token-text", markup=False)
            yield Static("It cannot be shown again: copy it now. c copy token   u copy URL with token   "
                         f"esc close\n(same as: {self.command})", classes="hint", markup=False)

    def action_copy_token(self) -> None:
        if self._token:
            self.app.copy_to_clipboard(self._token)
            self.notify("token copied to the clipboard")

    def action_copy_url(self) -> None:
        if self._url_with_token:
            self.app.copy_to_clipboard(self._url_with_token)
            self.notify("URL with token copied to the clipboard")

    def action_close(self) -> None:
        self._forget()
        self.dismiss(None)

    def _forget(self) -> None:
        self._token = self._url_with_token = None
        self.query_one("#token-text", Static).update("")

    def on_unmount(self) -> None:
        self._token = self._url_with_token = None
