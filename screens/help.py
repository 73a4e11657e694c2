"""`?` help: every binding of the app and of the screen underneath, with its id."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Static


def binding_rows(*sources: Any, display: Any = None) -> list[tuple[str, str, str]]:
    """(key, description, id) for every Binding declared on the given objects' classes, in MRO order."""
    rows: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for source in sources:
        for cls in type(source).__mro__:
            for binding in cls.__dict__.get("BINDINGS", []):
                if not isinstance(binding, Binding) or not binding.id or binding.id in seen:
                    continue
                seen.add(binding.id)
                rows.append((display(binding) if display else binding.key, binding.description, binding.id))
    return rows


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[Binding]] = [
        Binding("escape", "dismiss", "Close", id="help.close"),
        Binding("question_mark", "dismiss", "Close", id="help.close_toggle", show=False),
    ]

    def __init__(self, rows: list[tuple[str, str, str]]) -> None:
        super().__init__()
        self.rows = rows

    def compose(self) -> ComposeResult:
        with Vertical(classes="modal"):
            yield Static("Keys", classes="title")
            table: DataTable[str] = DataTable(id="help-table", cursor_type="row")
            table.add_columns("Key", "Action", "Binding id")
            for row in self.rows:
                table.add_row(*row)
            yield table
            yield Static("Also: ctrl+p command palette. Remap keys by binding id in settings.", classes="hint")
