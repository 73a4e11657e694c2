"""An honest empty state: says why there is nothing to show and which command fills the view."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static


class EmptyState(Vertical):
    def __init__(self, title: str, body: str, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self._title = title
        self._body = body

    def compose(self) -> ComposeResult:
        yield Static(self._title, classes="empty-title", markup=False)
        yield Static(self._body, markup=False)

    def update(self, title: str, body: str) -> None:
        self._title, self._body = title, body
        self.query_one(".empty-title", Static).update(title)
        self.query(Static).last().update(body)
